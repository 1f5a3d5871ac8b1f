"""RunGates on its own: the pause point, the approval point, stop, and the kernel-interrupt path."""

from __future__ import annotations

import threading
import time

import pytest
from control_helpers import kernel_interrupt, wait_until

from nbagent.errors import RunStopped
from nbagent.loop import CodeRejected, ControlError, RunGates
from nbagent.record import ActionStep


def in_thread(fn):
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as error:  # handed to the test
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def test_free_run_passes_the_pause_point_without_waiting():
    control = RunGates()
    control.reset()
    started = time.monotonic()
    for _ in range(3):
        control.before_step()
    assert time.monotonic() - started < 0.1
    assert control.status == "running" and control.steps_started == 3


def test_a_budget_of_zero_waits_until_step_then_pauses_again():
    control = RunGates()
    control.reset()
    control.pause()
    passed: list[int] = []

    def loop():
        for n in range(1, 4):
            control.before_step()
            passed.append(n)

    thread, box = in_thread(loop)
    wait_until(lambda: control.status == "paused")
    assert passed == []
    control.allow_steps()
    wait_until(lambda: passed == [1] and control.status == "paused")
    time.sleep(0.1)
    assert passed == [1]  # exactly one step, then paused again
    control.resume()
    thread.join(5)
    assert passed == [1, 2, 3] and "error" not in box


def test_stop_wakes_a_paused_run():
    control = RunGates()
    control.reset()
    control.pause()
    thread, box = in_thread(control.before_step)
    wait_until(lambda: control.status == "paused")
    control.request_stop("enough")
    thread.join(5)
    assert isinstance(box.get("error"), RunStopped) and str(box["error"]) == "enough"


def test_kernel_interrupt_while_paused_in_the_main_thread_becomes_a_stop():
    control = RunGates()
    control.reset()
    control.pause()
    timer = threading.Timer(0.3, kernel_interrupt)
    timer.start()
    with pytest.raises(RunStopped, match="kernel interrupt"):
        control.before_step()
    assert control.stopping


def test_approval_returns_the_edited_code():
    control = RunGates()
    control.reset()
    control.approve_code = True
    step = ActionStep(step_number=4)
    thread, box = in_thread(lambda: control.review_code(step, "x = 1"))
    wait_until(lambda: control.status == "awaiting_approval")
    assert control.pending_code == "x = 1" and control.snapshot()["pending_step"] == 4
    control.approve("x = 2")
    thread.join(5)
    assert box["value"] == "x = 2" and control.status == "running" and control.pending_code is None


def test_approval_without_an_edit_returns_the_model_code():
    control = RunGates()
    control.reset()
    control.approve_code = True
    thread, box = in_thread(lambda: control.review_code(ActionStep(step_number=1), "y = 3"))
    wait_until(lambda: control.status == "awaiting_approval")
    control.approve()
    thread.join(5)
    assert box["value"] == "y = 3"


def test_reject_raises_code_rejected_with_the_note():
    control = RunGates()
    control.reset()
    control.approve_code = True
    thread, box = in_thread(lambda: control.review_code(ActionStep(step_number=1), "rm()"))
    wait_until(lambda: control.status == "awaiting_approval")
    control.reject("  use the cached copy  ")
    thread.join(5)
    error = box["error"]
    assert isinstance(error, CodeRejected) and error.note == "use the cached copy"
    assert "rejected" in error.observation and "use the cached copy" in error.observation


def test_a_step_seen_awaiting_approval_can_be_rejected_at_once(monkeypatch: pytest.MonkeyPatch):
    """The pending step and the status change together: whoever sees step 1 pending can reject it at once (the
    teaching notebook met a 'nothing awaits approval' race under load). Every state a reader can see between two of
    the gates' own updates is checked: a pending step is never visible while the status still says running."""
    control = RunGates()
    control.reset()
    control.approve_code = True
    seen: list[dict] = []
    set_status = control._set_status
    monkeypatch.setattr(control, "_set_status", lambda *a, **k: (seen.append(control.snapshot()), set_status(*a, **k)))
    thread, box = in_thread(lambda: control.review_code(ActionStep(step_number=1), "x = 1"))
    wait_until(lambda: control.snapshot()["pending_step"] == 1, timeout=5)
    control.reject("no")
    thread.join(5)
    assert isinstance(box["error"], CodeRejected)
    assert all(state["pending_step"] is None or state["status"] == "awaiting_approval" for state in seen), seen


def test_no_approval_needed_by_default_and_approve_without_pending_code_is_an_error():
    control = RunGates()
    control.reset()
    assert control.review_code(ActionStep(step_number=1), "z = 1") == "z = 1"
    with pytest.raises(ControlError, match="Nothing awaits approval"):
        control.approve()
    with pytest.raises(ControlError, match="Nothing awaits approval"):
        control.reject("no")
    with pytest.raises(ControlError, match="string"):
        control.reject(3)  # type: ignore[arg-type]
    with pytest.raises(ControlError, match="positive integer"):
        control.allow_steps(0)


def test_request_approval_asks_once_and_approval_check_asks_case_by_case():
    control = RunGates()
    control.reset()
    control.approval_check = lambda step, code: "delete" in code
    assert control.review_code(ActionStep(step_number=1), "keep()") == "keep()"
    control.request_approval()
    thread, box = in_thread(lambda: control.review_code(ActionStep(step_number=2), "keep()"))
    wait_until(lambda: control.status == "awaiting_approval")
    control.approve()
    thread.join(5)
    assert control.review_code(ActionStep(step_number=3), "keep()") == "keep()"  # once only
    thread, box = in_thread(lambda: control.review_code(ActionStep(step_number=4), "delete(all)"))
    wait_until(lambda: control.status == "awaiting_approval")
    control.reject("")
    thread.join(5)
    assert isinstance(box["error"], CodeRejected) and "no note" in box["error"].observation


def test_stop_while_awaiting_approval_raises_run_stopped_and_clears_the_pending_code():
    control = RunGates()
    control.reset()
    control.approve_code = True
    thread, box = in_thread(lambda: control.review_code(ActionStep(step_number=1), "a = 1"))
    wait_until(lambda: control.status == "awaiting_approval")
    control.request_stop()
    thread.join(5)
    assert isinstance(box["error"], RunStopped) and control.pending_code is None


def test_listeners_see_every_status_change_and_a_failing_listener_is_ignored():
    control = RunGates()
    seen: list[str] = []
    control.add_listener(lambda snap: seen.append(snap["status"]))
    control.add_listener(lambda snap: 1 / 0)
    control.reset()
    control.pause()
    thread, _ = in_thread(control.before_step)
    wait_until(lambda: control.status == "paused")
    control.allow_steps()
    thread.join(5)
    control.finish("success")
    assert seen[0] == "running" and "paused" in seen and seen[-1] == "done"
    assert control.budget is None  # a later plain run starts unpaused
    assert control.halts == 2  # paused, done


def test_finish_maps_run_states_to_statuses():
    control = RunGates()
    for state, status in [
        ("success", "done"),
        ("max_steps_error", "max_steps"),
        ("stopped", "stopped"),
        ("error", "error"),
    ]:
        control.finish(state)
        assert control.status == status


def test_run_approves_only_code_that_awaited_approval_when_it_was_asked():
    """Run/Step decide in one look: code that begins to await approval after the command waits for a person
    (resuming first and then looking approved it unseen when the loop thread was quicker)."""
    control = RunGates()
    control.reset()
    control.approve_code = True
    control.pause()
    control.go(None)  # Run while nothing awaits approval
    step = ActionStep(step_number=1)
    thread, box = in_thread(lambda: control.review_code(step, "x = 1"))
    wait_until(lambda: control.status == "awaiting_approval")
    time.sleep(0.1)
    assert thread.is_alive() and control.pending_code == "x = 1"  # still waiting: nobody approved it
    control.go(1, "x = 2")  # Step while it awaits: run the edited code, then pause
    thread.join(5)
    assert box == {"value": "x = 2"} and control.budget == 0
    with pytest.raises(ControlError, match="positive integer"):
        control.go(0)
    with pytest.raises(ControlError, match="must be a string"):
        control.go(None, code=3)  # type: ignore[arg-type]


def test_the_views_hear_of_a_stop_before_the_calls_it_cancels_begin_to_unwind():
    control = RunGates()
    control.reset()
    order: list[str] = []
    control.add_listener(lambda snap: order.append("stopping" if snap["stopping"] else snap["status"]))
    control.on_stop(lambda: order.append("cancelled"))
    control.request_stop()
    assert order == ["stopping", "cancelled"]


def test_cancel_on_stop_cancels_a_call_that_begins_after_the_stop_and_can_be_removed():
    control = RunGates()
    control.reset()
    calls: list[str] = []
    remove = control.cancel_on_stop(lambda: calls.append("first"))
    remove()
    control.request_stop()
    assert calls == []  # removed before the stop
    control.cancel_on_stop(lambda: calls.append("late"))
    assert calls == ["late"]  # the run was already stopping: cancelled at once
    control.finish("stopped")
    control.cancel_on_stop(lambda: calls.append("after the run"))
    assert calls == ["late"]  # a call outside a run (provide_final_answer) is not cancelled by an old stop


def test_stopping_is_said_before_the_run_can_see_the_stop_and_end():
    """A run that ends at once on a stop (a loaded machine) must not have its "stopped" said before "stopping…"."""
    gates = RunGates()
    gates.reset()
    seen: list[tuple[bool, bool]] = []
    gates.add_listener(lambda snapshot: seen.append((snapshot["stopping"], gates.stopping)))
    gates.request_stop()
    assert seen[0] == (True, False)  # "stopping…" went out while the run could not yet see the stop
    assert gates.stopping
    gates.finish("stopped")  # the run saw it and ended
    assert gates.status == "stopped" and seen[-1][0] is False
