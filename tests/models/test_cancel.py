"""CancelScope: one model call's cancellation, found by the model in its context, shared with nobody."""

from __future__ import annotations

import threading
import time

import pytest

from nbagent.models.cancel import CallCancelled, CancelScope, acquire, current_scope, run_in_scope


def test_callbacks_run_once_on_cancel_and_at_once_when_already_cancelled():
    scope = CancelScope()
    calls: list[str] = []
    scope.on_cancel(lambda: calls.append("a"))
    removed = scope.on_cancel(lambda: calls.append("removed"))
    removed()
    scope.on_cancel(lambda: 1 / 0)  # a failing callback does not keep the others from running
    scope.on_cancel(lambda: calls.append("b"))
    scope.cancel("Stopped by the user.")
    scope.cancel("again")
    assert calls == ["a", "b"] and scope.reason == "Stopped by the user."
    scope.on_cancel(lambda: calls.append("late"))
    assert calls == ["a", "b", "late"]
    with pytest.raises(CallCancelled, match="Stopped by the user"):
        scope.check()


def test_while_running_reacts_only_inside_its_block():
    scope, calls = CancelScope(), []
    with scope.while_running(lambda: calls.append("inside")):
        pass
    scope.cancel()
    assert calls == []


def test_each_call_sees_its_own_scope_and_none_outside():
    first, second = CancelScope(), CancelScope()
    seen: dict[str, CancelScope] = {}

    def call(name: str, scope: CancelScope) -> None:
        seen[name] = run_in_scope(scope, current_scope)

    threads = [threading.Thread(target=call, args=(n, s)) for n, s in (("a", first), ("b", second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"a": first, "b": second}
    outside = current_scope()
    assert not outside.cancelled and outside not in (first, second)
    outside.sleep(0.01)  # never cancelled: an ordinary wait
    with pytest.raises(RuntimeError, match="outside a cancel scope"):
        outside.cancel()


def test_a_cancelled_call_stops_waiting_for_a_busy_model_and_sleeps_no_longer():
    lock, scope = threading.Lock(), CancelScope()
    lock.acquire()  # another agent's call holds the model
    threading.Timer(0.2, scope.cancel).start()
    began = time.monotonic()
    with pytest.raises(CallCancelled):
        with acquire(lock, scope):
            pass
    assert time.monotonic() - began < 10  # not a wait for the lock, which is never released
    with pytest.raises(CallCancelled):
        scope.sleep(30)
    lock.release()
    with acquire(lock, CancelScope()):
        assert lock.locked()
    assert not lock.locked()
