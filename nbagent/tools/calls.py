"""The limits of the tool call under way — the step's deadline and Stop — for a tool that waits on another process.

A tool runs in the kernel, on the thread that serves the agent's code (isolated executor), runs it (local executor)
or runs the tool step. Neither Stop nor the step's deadline can interrupt a thread blocked in a socket read, so a
tool that waits on something else (an MCP server, `mcp_client`) waits in slices through `wait_for` and gives up
when the loop's limits say so. The loop sets them around each call (`limited`); without them (a tool called
directly) only Ctrl-C ends the wait.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallLimits", "ToolCallAbandoned", "current_limits", "limited", "wait_for"]

_SLICE = 0.05  # seconds between two looks at the limits: what a Stop waits at most


class ToolCallAbandoned(RuntimeError):
    """The tool call was given up: the step's deadline passed or the run was stopped."""


def _never() -> bool:
    return False


@dataclass(frozen=True)
class CallLimits:
    """`deadline` (a `time.monotonic()` instant, None: none) and `stopped()` (True once Stop was asked)."""

    deadline: float | None = None
    stopped: Callable[[], bool] = field(default=_never)

    def reason(self) -> str | None:
        """ "stop", "deadline" or None."""
        if self.stopped():
            return "stop"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "deadline"
        return None


_NO_LIMITS = CallLimits()
_LIMITS: ContextVar[CallLimits | None] = ContextVar("nbagent_tool_call_limits", default=None)


def current_limits() -> CallLimits:
    return _LIMITS.get() or _NO_LIMITS


@contextmanager
def limited(deadline: float | None = None, stopped: Callable[[], bool] = _never) -> Iterator[CallLimits]:
    """Tool calls inside give up at `deadline` or once `stopped()`; limits already set here still hold (the
    earlier deadline wins, either stop counts)."""
    outer = current_limits()
    deadlines = [d for d in (outer.deadline, deadline) if d is not None]
    limits = CallLimits(min(deadlines) if deadlines else None, lambda: outer.stopped() or stopped())
    token = _LIMITS.set(limits)
    try:
        yield limits
    finally:
        _LIMITS.reset(token)


def wait_for(future: concurrent.futures.Future, what: str) -> Any:
    """The future's result, or `ToolCallAbandoned` (the future cancelled) when the limits say so; Ctrl-C cancels
    it too. `what` names the call in the error ("the MCP tool hang")."""
    limits = current_limits()
    try:
        while True:
            try:
                return future.result(timeout=_SLICE)
            except concurrent.futures.TimeoutError:
                pass
            reason = limits.reason()
            if reason:
                future.cancel()
                why = "the run was stopped" if reason == "stop" else "the step's time limit passed"
                raise ToolCallAbandoned(f"{what} was given up: {why} before it answered")
    except BaseException:
        future.cancel()
        raise
