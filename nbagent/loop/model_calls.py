"""Model calls that a Stop ends at once: each call runs on a helper thread under its own `CancelScope`.

The run's gates cancel the scope on Stop (`RunGates.cancel_on_stop`); our models honour it (llama.cpp
aborts between graph nodes, transformers between layers and tokens, API models close the connection:
nbagent/models/cancel.py), so the call ends within a fraction of a second and the model is free for the
next one. The caller only waits, in short slices, so that:

* a Stop from another thread (the widget's button, `agent.stop()`, `evaluate()`'s cancel) is seen at once,
  and a kernel interrupt (■) reaches a blocking run on the main thread while the model computes in C;
* a model that does not honour the scope (a user's own class) cannot hold the run: after
  `ABANDON_AFTER` seconds the run stops waiting for it, and the step says the call was abandoned.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from nbagent.errors import RunStopped
from nbagent.models.cancel import CancelScope, run_in_scope

from .gates import INTERRUPT_REASON, RunGates

__all__ = ["call_model", "stream_model", "ABANDON_AFTER"]

ABANDON_AFTER = 1.0  # seconds a stopped call may take to end by itself before the run stops waiting for it
_SLICE = 0.05  # seconds per wait: how fast a Stop or a kernel interrupt is seen
_ITEM, _END, _ERROR = "item", "end", "error"


def call_model(gates: RunGates, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)` (a model's `generate`), ended by a Stop of `gates` (raises `RunStopped`)."""
    (result,) = _HelperCall(gates, lambda emit, _scope: emit(function(*args, **kwargs))).items()
    return result


def stream_model(gates: RunGates, open_stream: Callable[[], Iterable[Any]]) -> Iterator[Any]:
    """The items of `open_stream()` (a model's `generate_stream`), ended by a Stop of `gates`."""

    def produce(emit: Callable[[Any], None], scope: CancelScope) -> None:
        stream = open_stream()
        try:
            for item in stream:
                emit(item)
                if scope.cancelled:  # the caller went away or the run stopped: read no more
                    break
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()

    return _HelperCall(gates, produce).items()


class _HelperCall:
    """One model call on a helper thread; `items()` hands its output to the caller's thread."""

    def __init__(self, gates: RunGates, produce: Callable[[Callable[[Any], None], CancelScope], None]) -> None:
        self.gates = gates
        self.scope = CancelScope()
        self._produce = produce
        self._queue: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        # The caller's context goes along: ipykernel routes a print from the model to the caller's cell by it.
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._work,), name="nbagent-model-call", daemon=True)

    def _work(self) -> None:
        try:
            run_in_scope(self.scope, self._produce, lambda item: self._queue.put((_ITEM, item)), self.scope)
        except BaseException as failure:  # handed to the caller's thread, raised there
            self._queue.put((_ERROR, failure))
        else:
            self._queue.put((_END, None))

    def items(self) -> Iterator[Any]:
        remove = self.gates.cancel_on_stop(lambda: self.scope.cancel(self.gates.stop_reason or "stopped"))
        self._thread.start()
        ended = False
        try:
            while True:
                kind, value = self._next()
                if kind == _ITEM:
                    yield value
                    continue
                ended = True
                if kind == _ERROR:
                    raise value
                return
        finally:
            remove()
            if not ended:
                self.scope.cancel("the caller stopped reading")  # e.g. the caller's generator was closed

    def _next(self) -> tuple[str, Any]:
        while True:
            try:
                return self._queue.get(timeout=_SLICE)
            except queue.Empty:
                if self.scope.cancelled:
                    self._after_stop()
            except KeyboardInterrupt:  # ■ on a blocking run: the main thread waits here while the model computes
                self.gates.request_stop(INTERRUPT_REASON)
                self.scope.cancel(INTERRUPT_REASON)
                self._after_stop()

    def _after_stop(self) -> None:
        """The run was stopped: give the call `ABANDON_AFTER` seconds to end, then stop waiting for it."""
        reason = self.gates.stop_reason or "Stopped by the user."
        deadline = time.monotonic() + ABANDON_AFTER
        try:
            while (left := deadline - time.monotonic()) > 0:
                try:
                    kind, _ = self._queue.get(timeout=min(left, _SLICE))
                except queue.Empty:
                    continue
                if kind != _ITEM:
                    raise RunStopped(reason)
        except KeyboardInterrupt:  # a second ■: stop waiting now
            pass
        raise RunStopped(
            f"{reason} The model call did not end within {ABANDON_AFTER:g} s of the Stop, so the run stopped "
            "waiting for it (the model may go on computing in the background until it returns)."
        )
