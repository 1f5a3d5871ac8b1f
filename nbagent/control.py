"""How a run is steered from outside the loop: stop, interrupt, pause, approve.

The loop asks its `RunControl` at fixed points (before a step, between
streamed tokens, before code runs); people and code act on it from any thread
(`agent.stop()`, `agent.interrupt()`, the widget's buttons).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from nbagent.errors import RunStopped

__all__ = ["RunControl"]


class RunControl:
    """Thread-safe flags the loop checks; `on_stop` callbacks cancel work in progress."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._interrupt = threading.Event()
        self.stop_reason = ""
        self._on_stop: list[Callable[[], Any]] = []

    def reset(self) -> None:
        self._stop.clear()
        self._interrupt.clear()
        self.stop_reason = ""

    def on_stop(self, callback: Callable[[], Any]) -> None:
        """Call `callback` (from the stopping thread) when a stop is requested."""
        self._on_stop.append(callback)

    def request_stop(self, reason: str = "Stopped by the user.") -> None:
        """Stop now: the model call or the code running is cancelled."""
        self.stop_reason = reason
        self._stop.set()
        for callback in self._on_stop:
            callback()

    def request_interrupt(self) -> None:
        """Stop before the next step (smolagents' `interrupt()`)."""
        self.stop_reason = "Agent interrupted."
        self._interrupt.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def check(self) -> None:
        """Raise `RunStopped` if a stop was requested (called between tokens and steps)."""
        if self._stop.is_set():
            raise RunStopped(self.stop_reason)

    def before_step(self) -> None:
        self.check()
        if self._interrupt.is_set():
            raise RunStopped(self.stop_reason)

    def review_code(self, step: Any, code: str) -> str:
        """The code to run for `step`; a person may edit it here (approve mode)."""
        return code
