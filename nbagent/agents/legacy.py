"""Old smolagents agent options and attributes, kept for old code: legacy constructor options and `agent.logs`.

Everything here exists so that the examples of smolagents' documentation run with
`nbagent` imports (see tests/seeds/AUDIT.md). New code should use what each
docstring points to.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from nbagent.record import ActionStep

if TYPE_CHECKING:
    from nbagent.loop import AgentLoop

__all__ = ["StepLog", "agent_logs", "pop_legacy_options"]


# Options of older smolagents versions: (the value that means "off", why nbagent has no such option).
_LEGACY_OPTIONS: dict[str, tuple[Any, str]] = {
    "grammar": (
        None,
        "nbagent does not constrain the model with a grammar (smolagents dropped this option too); "
        "constrain generation in the model itself, e.g. with its response_format",
    ),
    "tool_parser": (
        None,
        "nbagent reads tool calls itself (native tool calls, or JSON in the text); "
        "to read another format, give your model a parse_tool_calls(message) method",
    ),
    "use_e2b_executor": (
        False,
        "nbagent runs the agent's code in its own local sandbox; remote executors (E2B, Docker) are not supported",
    ),
}


def pop_legacy_options(owner: str, options: dict[str, Any]) -> dict[str, Any]:
    """Remove old smolagents options from `options`: harmless when "off" (with a warning), refused otherwise."""
    rest = dict(options)
    for name, (off_value, why) in _LEGACY_OPTIONS.items():
        if name not in rest:
            continue
        value = rest.pop(name)
        if value != off_value:
            raise TypeError(f"{owner}({name}={value!r}) is not supported: {why}.")
        warnings.warn(f"{owner}({name}=...) has no effect in nbagent: {why}.", DeprecationWarning, stacklevel=4)
    return rest


class StepLog(dict):
    """One action step as a dict, as `agent.logs` entries were in early smolagents.

    Holds the step's fields (`step_number`, `model_output`, `observations`, …)
    plus the short keys older examples read: `code`, `output`, `duration`,
    `llm_output`, `observation`. Attribute access reads the step itself.
    """

    def __init__(self, step: ActionStep) -> None:
        super().__init__(step.dict())
        self.update(
            code=step.code_action,
            output=step.action_output,
            duration=step.timing.duration,
            llm_output=step.model_output,
            observation=step.observations,
        )
        self._step = step

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.__dict__["_step"], name)


def agent_logs(agent: AgentLoop) -> list[StepLog]:
    """The action steps of the agent's memory as `StepLog` dicts (see `AgentLoop.logs`)."""
    warnings.warn(
        "agent.logs is deprecated: read agent.memory.steps (the memory steps) or agent.memory.get_full_steps() (dicts).",
        DeprecationWarning,
        stacklevel=3,
    )
    return [StepLog(step) for step in agent.memory.steps if isinstance(step, ActionStep)]
