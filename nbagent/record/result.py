"""`RunResult`: what a run ended with — output, outcome, steps, tokens, time."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from nbagent.models.base import TokenUsage

from .status import RunOutcome

__all__ = ["RunResult"]


@dataclass
class RunResult:
    """What `run(..., return_full_result=True)` returns.

    `steps` (the memory steps as dicts, as in smolagents) is built on first use:
    most runs never look at it, and converting a long memory costs time.
    """

    output: Any
    state: str  # a RunOutcome value: "success" | "max_steps_error" | "stopped" | "error"
    memory_steps: list[Any] = field(repr=False)
    token_usage: TokenUsage | None
    timing: Any
    error: str | None = None

    @cached_property
    def steps(self) -> list[dict[str, Any]]:
        return [step.dict() for step in self.memory_steps]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.steps

    def dict(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "state": self.state,
            "steps": self.steps,
            "token_usage": self.token_usage.dict() if self.token_usage is not None else None,
            "timing": self.timing.dict(),
            "error": self.error,
        }

    @property
    def outcome(self) -> RunOutcome:
        return RunOutcome(self.state)
