"""`RunGates`: the points where a run can be steered from outside the loop — stop, pause, step, approve code.

The loop passes its gates at fixed points: `before_step()` (the pause point),
`check()` between streamed tokens, `review_code(step, code)` after a
CodeAgent's model wrote code and before it runs (the approval point), and
`ask_permission(step, refused)` when the sandbox refused the code a file or a
host and a person (the widget) is asked whether to allow it. People and
code act on them from any thread: `agent.stop()`, `agent.pause()`, the widget's
buttons (the notebook's `RunDriver` turns those into calls here). All state is
guarded by one condition variable; the loop's thread waits on it while a run is
paused or code awaits approval, and every change is announced to the listeners
(the widget) as a `snapshot()`.

The verbs live here once: `request_stop`, `request_interrupt`, `pause`, `resume`,
`allow_steps(n)`, `approve`, `reject`, `answer_permission`. `MultiStepAgent.stop()/pause()/…` and the
driver only forward to them. How the widget's buttons reach these gates while a
cell blocks is in nbagent/notebook/channel.py.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from nbagent.errors import RunStopped
from nbagent.record.status import ENDED_STATUSES, HALT_STATUSES, REJECTED_OBSERVATION, RunStatus, status_of

__all__ = [
    "RunGates",
    "RunControl",
    "CodeRejected",
    "ControlError",
    "INTERRUPT_REASON",
    "ANSWERS",
    "ask_text",
    "ask_parts",
]

_WAIT_SLICE = 0.25  # seconds per wait; short waits keep the main thread responsive to signals
INTERRUPT_REASON = "Stopped by a kernel interrupt."
#: The answers to a permission ask: allow once (this step's re-run), allow for this run, deny.
ANSWERS = ("once", "run", "deny")


def ask_text(step_number: int | None, refused: Any) -> str:
    """What a person is asked, as plain text: "Step 3 wants to write `out/report.csv`" (the target escaped: see
    `ask_parts`, which the widget and the static page render)."""
    return "".join(f"`{text}`" if role == "target" else text for role, text in ask_parts(step_number, refused))


def ask_parts(step_number: int | None, refused: Any) -> list[tuple[str, str]]:
    """The question as parts, nbagent's words apart from the target: ``[("words", "Step 3 wants to write "),
    ("target", "out/report.csv")]`` (a path under the working directory shown relative to it; `refused` is a
    `RefusedCapability`, whose `parts()` escape the target)."""
    here = os.path.realpath(os.getcwd())
    if refused.kind in ("read", "write") and refused.target.startswith(here + os.sep):
        refused = dataclasses.replace(refused, target=os.path.relpath(refused.target, here))
    return [("words", f"Step {step_number if step_number is not None else '?'} wants to "), *refused.parts()]


class ControlError(ValueError):
    """A command that cannot act now (e.g. Approve with nothing awaiting approval)."""


class CodeRejected(Exception):
    """A person rejected the code of a step; `note` goes back to the model as the observation."""

    def __init__(self, note: str = "") -> None:
        super().__init__(note)
        self.note = note.strip()

    @property
    def observation(self) -> str:
        said = f" Their note: {self.note}" if self.note else " They left no note."
        return f"{REJECTED_OBSERVATION}{said}"  # the step's "rejected" mark is read from it (record/status.py)


class RunGates:
    """Thread-safe gates the loop passes, and the commands that open or close them.

    `budget` is how many more steps may start before the run pauses: None runs
    freely, 0 pauses at the next step boundary, 1 is "Step".
    `approve_code=True` stops every CodeAgent step after the model wrote its
    code until `approve(code)` (possibly edited) or `reject(note)`;
    `approval_check(step, code) -> bool` asks for approval case by case, and
    `request_approval()` (e.g. from a step callback) asks once, for the next code.
    `answerer() -> bool` says whether a person can answer a permission ask now (the notebook's driver sets
    it: a widget with working buttons shows the run); without one, `ask_permission` is not called.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.RLock())
        self._stop = threading.Event()
        self._stop_asked = False  # set before `_stop`: the widget says "stopping…" before the run can end
        self._interrupt = threading.Event()
        self.stop_reason = ""
        self._on_stop: list[Callable[[], Any]] = []
        self._listeners: list[Callable[[dict[str, Any]], Any]] = []
        self._status = RunStatus.IDLE.value
        self._budget: int | None = None
        self._approve_code = False
        self._approval_once = False
        self.approval_check: Callable[[Any, str], bool] | None = None
        self._pending_code: str | None = None
        self._pending_step: int | None = None
        self._decision: tuple[str, str] | None = None
        self._pending_ask: dict[str, Any] | None = None
        self._answer: str | None = None
        self.answerer: Callable[[], bool] | None = None
        self._waiting = 0  # threads waiting in a gate (the loop's thread, normally one)
        self.steps_started = 0  # steps that passed the pause point, ever
        self.halts = 0  # times the run paused, awaited approval or ended, ever (to wait for "the next halt")

    # ------------------------------------------------------------------ observing

    @property
    def status(self) -> str:
        return self._status

    @property
    def pending_code(self) -> str | None:
        """The code awaiting approval (None unless the status is "awaiting_approval")."""
        return self._pending_code

    @property
    def pending_ask(self) -> dict[str, Any] | None:
        """The permission asked for: {"step", "kind", "target", "text"} (None unless "awaiting_permission")."""
        return dict(self._pending_ask) if self._pending_ask else None

    @property
    def budget(self) -> int | None:
        return self._budget

    @property
    def approve_code(self) -> bool:
        return self._approve_code

    @approve_code.setter
    def approve_code(self, value: bool) -> None:
        with self._cond:
            self._approve_code = bool(value)
        self._changed()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def snapshot(self) -> dict[str, Any]:
        """The state the widget shows, as JSON-able data."""
        with self._cond:
            budget = self._budget
            return {
                "status": self._status,
                "mode": "run" if budget is None else ("pause" if budget == 0 else "step"),
                "approve_code": self._approve_code,
                "pending_code": self._pending_code,
                "pending_step": self._pending_step,
                "pending_ask": dict(self._pending_ask) if self._pending_ask else None,
                "stopping": self._stop_asked and self._status not in ENDED_STATUSES,
            }

    def add_listener(self, callback: Callable[[dict[str, Any]], Any]) -> None:
        """Call `callback(snapshot)` after every change (from the thread that made it)."""
        self._listeners.append(callback)

    def remove_listener(self, callback: Callable[[dict[str, Any]], Any]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def _changed(self) -> None:
        snapshot = self.snapshot()
        for callback in list(self._listeners):
            try:
                callback(snapshot)
            except Exception:  # a broken view must never break the run or the command
                pass

    def _set_status(self, status: str, pending: tuple[str, int | None] | None = None) -> None:
        """``pending`` (code, step number): the code that awaits approval, set with the status under one lock, so
        that whoever sees the step awaiting approval can approve or reject it at once."""
        with self._cond:
            if pending is not None:
                (self._pending_code, self._pending_step), self._decision = pending, None
            changed = status != self._status
            self._status = status
            if changed and status in HALT_STATUSES:
                self.halts += 1
            self._cond.notify_all()
        if changed:
            self._changed()

    # ------------------------------------------------------------------ the loop's side

    def reset(self) -> None:
        """A run (or a continuation of one) begins: clear the stop, keep the mode and settings."""
        with self._cond:
            self._stop.clear()
            self._stop_asked = False
            self._interrupt.clear()
            self.stop_reason = ""
            self._decision = self._pending_code = self._pending_step = None
            self._pending_ask = self._answer = None
            self._approval_once = False
        self._set_status(RunStatus.RUNNING.value)

    def finish(self, state: str) -> None:
        """The run ended with `state` (RunResult.state); later plain runs start unpaused."""
        with self._cond:
            self._budget = None
            self._pending_code = self._pending_step = self._decision = None
            self._pending_ask = self._answer = None
        self._set_status(status_of(state))

    def check(self) -> None:
        """Raise `RunStopped` if a stop was requested (called between tokens and steps)."""
        if self._stop.is_set():
            raise RunStopped(self.stop_reason)

    def before_step(self) -> None:
        """The pause point: wait while the budget is 0, then spend one step of it."""
        self.check()
        if self._interrupt.is_set():
            raise RunStopped(self.stop_reason)
        with self._cond:
            paused = self._budget == 0
        if paused:
            self._set_status(RunStatus.PAUSED.value)
        self._wait_until(lambda: self._budget != 0)
        with self._cond:
            if self._budget:
                self._budget -= 1
            self.steps_started += 1
        self._set_status(RunStatus.RUNNING.value)

    def review_code(self, step: Any, code: str) -> str:
        """The code to run for `step`: as written, or as a person approved (and maybe edited) it.

        Raises `CodeRejected` when the person rejects it, `RunStopped` on Stop.
        """
        if not self._needs_approval(step, code):
            return code
        self._set_status(RunStatus.AWAITING_APPROVAL.value, pending=(code, getattr(step, "step_number", None)))
        try:
            self._wait_until(lambda: self._decision is not None)
            with self._cond:
                kind, text = self._decision  # type: ignore[misc]
        finally:
            with self._cond:
                self._pending_code = self._pending_step = self._decision = None
            self._set_status(RunStatus.RUNNING.value)
        if kind == "reject":
            raise CodeRejected(text)
        return text

    def can_ask_person(self) -> bool:
        """Whether a person can answer a permission ask here now (see `answerer`)."""
        answerer = self.answerer
        try:
            return bool(answerer is not None and answerer())
        except Exception:  # a broken view must never break the run: nobody can be asked then
            return False

    def ask_permission(self, step: Any, refused: Any) -> str:
        """Wait for a person's answer to "Step k wants to write `x`": "once", "run" or "deny".

        `refused` is a `RefusedCapability`. Raises `RunStopped` on Stop (the ask ends as a stop).
        """
        with self.waiting_for_person(step, refused):
            self._wait_until(lambda: self._answer is not None)
            with self._cond:
                return str(self._answer)

    @contextmanager
    def waiting_for_person(self, step: Any, refused: Any) -> Iterator[dict[str, Any]]:
        """The run awaits a person's answer about `refused` (the status, `pending_ask`) while inside."""
        number = getattr(step, "step_number", step)
        ask = {
            "step": number,
            "kind": refused.kind,
            "target": refused.target,
            "text": ask_text(number, refused),
            "parts": [list(part) for part in ask_parts(number, refused)],  # what the widget renders
        }
        with self._cond:
            self._pending_ask, self._answer = ask, None
        self._set_status(RunStatus.AWAITING_PERMISSION.value)
        try:
            yield ask
        finally:
            with self._cond:
                self._pending_ask = self._answer = None
            self._set_status(RunStatus.RUNNING.value)

    def _needs_approval(self, step: Any, code: str) -> bool:
        with self._cond:
            once, self._approval_once = self._approval_once, False
            if self._approve_code or once:
                return True
        check = self.approval_check
        return bool(check is not None and check(step, code))

    def _wait_until(self, ready: Callable[[], bool]) -> None:
        """Wait (in slices, so signals get through) until `ready()` or a stop; KeyboardInterrupt stops."""
        try:
            with self._cond:
                self._waiting += 1
                try:
                    while not ready():
                        self.check()
                        self._cond.wait(_WAIT_SLICE)
                finally:
                    self._waiting -= 1
        except KeyboardInterrupt:
            self.request_stop(INTERRUPT_REASON)
            raise RunStopped(INTERRUPT_REASON) from None

    # ------------------------------------------------------------------ commands (any thread)

    def on_stop(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call `callback` (from the stopping thread) when a stop is requested; returns `remove()`."""
        with self._cond:
            self._on_stop.append(callback)

        def remove() -> None:
            with self._cond:
                if callback in self._on_stop:
                    self._on_stop.remove(callback)

        return remove

    def cancel_on_stop(self, cancel: Callable[[], Any]) -> Callable[[], None]:
        """`on_stop(cancel)`, and `cancel()` at once if the run under way was already asked to stop (a model
        call that begins just after a Stop must not run to its end); returns `remove()`."""
        remove = self.on_stop(cancel)
        if self._stop.is_set() and self._status not in ENDED_STATUSES:
            cancel()
        return remove

    def request_stop(self, reason: str = "Stopped by the user.") -> None:
        """Stop now: the model call or the code running is cancelled, a waiting run wakes up and ends."""
        with self._cond:
            self._stop_asked = True
        # the widget says "stopping…" before the run sees the stop: its "stopped" cannot come first (a loaded machine
        # ended the run between the stop and a later "stopping…" snapshot, which then said the run had ended)
        self._changed()
        with self._cond:
            self.stop_reason = reason
            self._stop.set()
            self._cond.notify_all()
        with self._cond:
            callbacks = list(self._on_stop)  # a model call may remove its own while we go through them
        for callback in callbacks:
            callback()

    def request_interrupt(self) -> None:
        """Stop before the next step (smolagents' `interrupt()`)."""
        self.stop_reason = "Agent interrupted."
        self._interrupt.set()

    def pause(self) -> None:
        """Pause at the next step boundary (the current step finishes)."""
        self._set_budget(0)

    def resume(self) -> None:
        """Run freely again (code awaiting approval still waits for it)."""
        self._set_budget(None)

    def allow_steps(self, count: int = 1) -> None:
        """Let exactly `count` more steps start, then pause (the widget's Step)."""
        if not isinstance(count, int) or count < 1:
            raise ControlError(f"allow_steps(count) takes a positive integer, got {count!r}")
        self._set_budget(count)

    def _set_budget(self, budget: int | None) -> None:
        with self._cond:
            self._budget = budget
            self._cond.notify_all()
        self._changed()

    def go(self, steps: int | None, code: str | None = None) -> None:
        """Run (``steps=None``) or Step (``steps=1``) from where the run is now, in one decision: code awaiting
        approval at this moment is approved (``code``: an edited version), then the run goes on freely or pauses;
        otherwise ``steps`` more steps may start. (Resuming first and then looking could approve code that began
        to await approval only after the command, which nobody saw.)"""
        if code is not None and not isinstance(code, str):
            raise ControlError(f"the code to run must be a string, got {type(code).__name__}")
        if steps is not None and (not isinstance(steps, int) or steps < 1):
            raise ControlError(f"steps takes a positive integer or None, got {steps!r}")
        with self._cond:
            if self._status == RunStatus.AWAITING_APPROVAL.value and self._pending_code is not None:
                self._budget = None if steps is None else 0
                self._decision = ("approve", self._pending_code if code is None else code)
            else:
                self._budget = steps
            self._cond.notify_all()
        self._changed()

    def approve(self, code: str | None = None) -> None:
        """Run the pending code, or `code` in its place (an edited version)."""
        if code is not None and not isinstance(code, str):
            raise ControlError(f"approve(code) takes the code as a string, got {type(code).__name__}")
        with self._cond:
            if self._status != RunStatus.AWAITING_APPROVAL.value or self._pending_code is None:
                raise ControlError("Nothing awaits approval: there is no code waiting to run")
            self._decision = ("approve", self._pending_code if code is None else code)
            self._cond.notify_all()

    def reject(self, note: str = "") -> None:
        """Do not run the pending code; `note` goes back to the model as the step's observation."""
        if not isinstance(note, str):
            raise ControlError(f"reject(note) takes a string, got {type(note).__name__}")
        with self._cond:
            if self._status != RunStatus.AWAITING_APPROVAL.value or self._pending_code is None:
                raise ControlError("Nothing awaits approval: there is no code to reject")
            self._decision = ("reject", note)
            self._cond.notify_all()

    def answer_permission(self, answer: str) -> None:
        """Answer the permission asked for: "once" (allow for the step's re-run), "run" (for the rest of the
        run) or "deny"."""
        if answer not in ANSWERS:
            raise ControlError(f"answer_permission(answer) takes one of {', '.join(ANSWERS)}, got {answer!r}")
        with self._cond:
            if self._status != RunStatus.AWAITING_PERMISSION.value or self._pending_ask is None:
                raise ControlError("Nothing awaits permission: the run asked for nothing")
            self._answer = answer
            self._cond.notify_all()

    def request_approval(self) -> None:
        """Ask for approval of the next code, once (e.g. from a step callback)."""
        with self._cond:
            self._approval_once = True

    def wait_for(self, predicate: Callable[[RunGates], bool], timeout: float | None = None) -> bool:
        """Wait until `predicate(self)` holds (checked on every change and a few times a second); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not predicate(self):
                left = _WAIT_SLICE if deadline is None else min(_WAIT_SLICE, deadline - time.monotonic())
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True


RunControl = RunGates  # the name of nbagent 0.1; kept for old code
