"""Cancelling one model call from another thread: `CancelScope`, the call's own token, found by the model.

The loop enters a scope around each model call (`run_in_scope`) and cancels it when the run is
stopped; the model looks it up with `current_scope()` and honours it in its own way: llama.cpp
aborts its decode between graph nodes, transformers stops between layers and tokens, API models
close their HTTP connection. The scope travels in a context variable, so `generate(...)` keeps
smolagents' signature and one model object can serve several agents at once (each call has its
own scope; nothing is shared between them).

Without a scope (a model called directly), `current_scope()` is a scope that is never cancelled.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .base import ModelError

__all__ = ["CallCancelled", "CancelScope", "current_scope", "run_in_scope", "acquire"]

T = TypeVar("T")
_LOCK_SLICE = 0.05  # seconds per attempt to take a model's lock: a cancelled waiter gives up this fast


class CallCancelled(ModelError):
    """The model call was cancelled (Stop) before it finished."""


class CancelScope:
    """A cancellation token for one model call: `cancel()` from any thread, `on_cancel(...)` to react at once."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], Any]] = []
        self.reason = ""

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = "the model call was cancelled") -> None:
        """Cancel the call: every `on_cancel` callback runs now, in this thread (once)."""
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _quietly(callback)

    def on_cancel(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call `callback()` when the call is cancelled (at once if it already is); returns `remove()`."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        _quietly(callback)
        return lambda: None

    @contextmanager
    def while_running(self, callback: Callable[[], Any]) -> Iterator[None]:
        """`callback()` on cancel, but only while the block runs (e.g. close the connection this block reads)."""
        remove = self.on_cancel(callback)
        try:
            yield
        finally:
            remove()

    def _remove(self, callback: Callable[[], Any]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

    def check(self) -> None:
        """Raise `CallCancelled` if the call was cancelled."""
        if self._event.is_set():
            raise CallCancelled(self.reason or "the model call was cancelled")

    def sleep(self, seconds: float) -> None:
        """Wait `seconds`, or raise `CallCancelled` as soon as the call is cancelled."""
        if self._event.wait(seconds):
            self.check()


class _NeverCancelled(CancelScope):
    """The scope of a call nobody can cancel (no scope was entered): cheap, never holds callbacks."""

    def cancel(self, reason: str = "") -> None:
        raise RuntimeError("a model call made outside a cancel scope cannot be cancelled")

    def on_cancel(self, callback: Callable[[], Any]) -> Callable[[], None]:
        return lambda: None


_NEVER = _NeverCancelled()
_current: contextvars.ContextVar[CancelScope] = contextvars.ContextVar("nbagent_model_cancel_scope", default=_NEVER)


def current_scope() -> CancelScope:
    """The cancel scope of the model call running in this context (one that is never cancelled if none)."""
    return _current.get()


def run_in_scope(scope: CancelScope, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`function(*args, **kwargs)` with `scope` as the current scope (in a copy of this context)."""

    def call() -> T:
        _current.set(scope)
        return function(*args, **kwargs)

    return contextvars.copy_context().run(call)


@contextmanager
def acquire(lock: threading.Lock, scope: CancelScope) -> Iterator[None]:
    """Hold `lock` for the block; a call cancelled while it waits for the lock raises `CallCancelled`.

    A model serves one call at a time; another agent's call waiting its turn must not outlast its Stop.
    """
    while not lock.acquire(timeout=_LOCK_SLICE):
        scope.check()
    try:
        yield
    finally:
        lock.release()


def _quietly(callback: Callable[[], Any]) -> None:
    try:
        callback()
    except Exception:  # a cancel must reach every callback; a failing one (a closed socket) changes nothing
        pass
