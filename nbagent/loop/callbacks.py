"""Calling the user's functions that the loop calls back: step callbacks and final-answer checks.

One caller, `call_with_agent`, decides how to pass the agent (by keyword when the
function takes `agent` or `**kwargs`, positionally when it takes one more
argument, not at all otherwise), so both kinds of callback accept the same shapes
as in smolagents.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from nbagent.record import ActionStep, MemoryStep

__all__ = ["CallbackRegistry", "call_with_agent"]


def call_with_agent(func: Callable, args: tuple[Any, ...], agent: Any) -> Any:
    """`func(*args, agent=agent)`, `func(*args, agent)` or `func(*args)`, whichever its signature takes."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        return func(*args)
    if "agent" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return func(*args, agent=agent)
    positional = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    takes_more = any(p.kind is p.VAR_POSITIONAL for p in params.values()) or len(positional) > len(args)
    return func(*args, agent) if takes_more else func(*args)


class CallbackRegistry:
    """Step callbacks: a list (called for ActionSteps) or a dict keyed by step class."""

    def __init__(self, callbacks: list[Callable] | dict[type, Any] | None = None) -> None:
        self._callbacks: dict[type, list[Callable]] = {}
        if callbacks is None:
            return
        if isinstance(callbacks, dict):
            for step_type, funcs in callbacks.items():
                for func in funcs if isinstance(funcs, (list, tuple)) else [funcs]:
                    self.register(step_type, func)
        elif isinstance(callbacks, (list, tuple)):
            for func in callbacks:
                self.register(ActionStep, func)
        else:
            raise TypeError("step_callbacks must be a list of functions or a dict {StepClass: function or list}")

    def register(self, step_type: type, func: Callable) -> None:
        if not (isinstance(step_type, type) and issubclass(step_type, MemoryStep)):
            raise TypeError(f"step_callbacks keys must be memory step classes (e.g. ActionStep), got {step_type!r}")
        if not callable(func):
            raise TypeError(f"Step callback {func!r} is not callable")
        self._callbacks.setdefault(step_type, []).append(func)

    def callback(self, step: MemoryStep, agent: Any = None) -> None:
        for step_type, funcs in self._callbacks.items():
            if isinstance(step, step_type):
                for func in funcs:
                    call_with_agent(func, (step,), agent)

    def __len__(self) -> int:
        return sum(len(funcs) for funcs in self._callbacks.values())
