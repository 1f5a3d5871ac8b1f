"""Errors of a run, in two families (as DESIGN.md says).

* `AgentError` and its subclasses are recorded on the step and shown to the
  model, which gets the chance to recover; the loop goes on.
* `RunTerminated` subclasses end the run cleanly with memory intact.
  `AgentGenerationError` (the model call itself failed) is an `AgentError`
  that also ends the run: there is no model left to show it to.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentError",
    "AgentParsingError",
    "AgentExecutionError",
    "AgentToolCallError",
    "AgentToolExecutionError",
    "AgentGenerationError",
    "AgentMaxStepsError",
    "AgentStoppedError",
    "AgentTimedOutError",
    "AgentRepeatedCodeError",
    "AgentStuckError",
    "RunTerminated",
    "RunStopped",
    "RunStuck",
    "error_from_dict",
]


class AgentError(Exception):
    """An error the model should see: recorded on the step, the run goes on."""

    def __init__(self, message: str, logger: Any = None) -> None:
        super().__init__(message)
        self.message = message

    def dict(self) -> dict[str, str]:
        return {"type": type(self).__name__, "message": self.message}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.message == other.message  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.message))

    def __str__(self) -> str:
        return self.message


class AgentParsingError(AgentError):
    """The model's output could not be read as an action."""


class AgentExecutionError(AgentError):
    """The action (code or tool) raised."""


class AgentToolCallError(AgentExecutionError):
    """A tool was called with a wrong name or wrong arguments."""


class AgentToolExecutionError(AgentExecutionError):
    """A tool raised while running."""


class AgentGenerationError(AgentError):
    """The model call failed; the run ends (memory is kept)."""


class AgentMaxStepsError(AgentError):
    """The run used all its steps; the answer was produced from memory."""


class AgentStoppedError(AgentError):
    """A person (or `agent.stop()`) stopped the step while it ran."""


class AgentTimedOutError(AgentStoppedError):
    """The run's time limit (`max_time`) passed while this step ran: it was stopped like a person's Stop."""


class AgentRepeatedCodeError(AgentExecutionError):
    """The code was the same as the code that had just failed twice in a row, so it was not run."""


class AgentStuckError(AgentRepeatedCodeError):
    """The model sent that same failing code once more after being told it would not run: the run ended."""


class RunTerminated(Exception):
    """Ends a run cleanly: memory is intact and the views are told."""


class RunStopped(RunTerminated):
    """The run was stopped by `agent.stop()`, `interrupt()`, the widget's Stop, a kernel interrupt or its time limit."""


class RunStuck(RunTerminated):
    """The model repeats failing code it was told would not run: going on would only repeat it again."""


_ERROR_TYPES = {
    cls.__name__: cls
    for cls in (
        AgentError,
        AgentParsingError,
        AgentExecutionError,
        AgentToolCallError,
        AgentToolExecutionError,
        AgentGenerationError,
        AgentMaxStepsError,
        AgentStoppedError,
        AgentTimedOutError,
        AgentRepeatedCodeError,
        AgentStuckError,
    )
}


def error_from_dict(data: dict[str, str] | str | None) -> AgentError | None:
    """Rebuild an error saved by `AgentError.dict()` (a bare string becomes an `AgentError`)."""
    if data is None:
        return None
    if isinstance(data, str):
        return AgentError(data)
    return _ERROR_TYPES.get(data.get("type", ""), AgentError)(data.get("message", ""))
