"""`RunResult`: what a run ended with — output, outcome, steps, tokens, time."""

from __future__ import annotations

import warnings
from typing import Any

from nbagent.models.base import TokenUsage

from .status import RunOutcome

__all__ = ["RunResult"]

_MESSAGES_DEPRECATED = (
    "Parameter 'messages' is deprecated and will be removed in version 1.25. Please use 'steps' instead."
)


class RunResult:
    """What `run(..., return_full_result=True)` returns (smolagents' fields, plus `error` and `memory_steps`).

    `state` is a `RunOutcome` value: "success" | "max_steps_error" | "stopped" | "error".
    `token_usage` is None when a model step reported no usage (as in smolagents).
    `steps` (the memory steps as dicts) is built on first use from `memory_steps` unless given:
    most runs never look at it, and converting a long memory costs time. `messages` is its
    deprecated name (smolagents 1.22).
    """

    def __init__(
        self,
        output: Any = None,
        state: str | None = None,
        steps: list[Any] | None = None,
        token_usage: TokenUsage | None = None,
        timing: Any = None,
        messages: list[Any] | None = None,
        error: str | None = None,
        memory_steps: list[Any] | None = None,
    ) -> None:
        if messages is not None:
            if steps is not None:
                raise ValueError("Cannot specify both 'messages' and 'steps' parameters. Use 'steps' instead.")
            warnings.warn(_MESSAGES_DEPRECATED, FutureWarning, stacklevel=2)
            steps = messages
        self.output = output
        self.state = state
        self.token_usage = token_usage
        self.timing = timing
        self.error = error
        self.memory_steps = list(memory_steps or [])
        self._steps = steps
        #: nbagent's own: the names the agent's code made that stay in its scope, not the notebook (loop/scope.py)
        self.scratch: list[str] = []

    @property
    def steps(self) -> list[Any]:
        if self._steps is None:
            self._steps = [step.dict() for step in self.memory_steps]
        return self._steps

    @steps.setter
    def steps(self, steps: list[Any]) -> None:
        self._steps = steps

    @property
    def messages(self) -> list[Any]:
        warnings.warn(_MESSAGES_DEPRECATED, FutureWarning, stacklevel=2)
        return self.steps

    def dict(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "state": self.state,
            "steps": self.steps,
            "token_usage": self.token_usage.dict() if self.token_usage is not None else None,
            "timing": self.timing.dict() if self.timing is not None else None,
            "error": self.error,
        }

    @property
    def outcome(self) -> RunOutcome:
        return RunOutcome(self.state)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunResult):
            return NotImplemented
        return self.dict() == other.dict()

    def __repr__(self) -> str:
        return (
            f"RunResult(output={self.output!r}, state={self.state!r}, token_usage={self.token_usage!r}, "
            f"timing={self.timing!r}, error={self.error!r})"
        )
