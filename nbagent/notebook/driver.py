"""`RunDriver`: the widget's Run, Step, Pause, Stop, Approve, Reject, "re-run from step k" and the answers to
permission asks ("Allow once · Allow for this run · Deny") for one agent.

Two situations (the mechanism and its measured limits are in nbagent/notebook/channel.py):

* a blocking run, `agent.run(task)` or `%%agent`: the calling thread drives the
  run; commands arriving from the widget (on another thread) open and close the
  agent's `RunGates`, and the call returns when the run ends or stops;
* a prepared run, `agent.start(task)` or `%%agent --step`: the run is set up in
  the calling thread (its widget shows there), then a worker thread drives it
  and waits, paused, for Step or Run; the kernel stays free in between.

Runs and re-runs are the loop's `RunSession`; the driver only asks it for a re-run
and, when the kernel is idle, drains the continuation on its worker thread.
`handle_command(message)` is what the widget's message handler calls;
`snapshot()` is what the widget shows (status, pending code or ask, which buttons can act). While a widget
with working buttons is attached, the run's permission asks go to it (the gates' `answerer`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from nbagent.loop import ControlError
from nbagent.record import ActionStep
from nbagent.record.status import ENDED_STATUSES, LIVE_STATUSES, RunStatus

if TYPE_CHECKING:
    from nbagent.loop import AgentLoop

__all__ = ["RunDriver", "RunController", "ControlError", "ACTIONS"]

SHOWN_GRACE_SECONDS = 15.0  # how long an ask waits for a front end to show a new widget before nobody is asked

ACTIONS = (
    "run", "step", "pause", "stop", "approve", "reject", "rerun", "restore_fork", "approve_mode", "permission", "undo"
)  # fmt: skip


class RunDriver:
    """Drives the runs of one agent and answers the widget's commands (thread-safe)."""

    def __init__(self, agent: AgentLoop) -> None:  # a MultiStepAgent: the loop with a `session`
        self.agent = agent
        self.gates = agent.gates
        self.session = agent.session
        self._message = ""
        self.last_error: BaseException | None = None
        self._lock = threading.RLock()
        self._worker: threading.Thread | None = None
        self._listeners: list[Callable[[dict[str, Any]], Any]] = []
        self._widgets: dict[int, tuple[Any, Callable[[], None]]] = {}  # id(widget) -> (widget, detach)
        self._shown = threading.Condition()
        self._shown_ids: set[int] = set()  # widgets a front end said it shows (the "shown" command)
        self._unseen_ids: set[int] = set()  # widgets no front end showed within SHOWN_GRACE_SECONDS
        self.gates.add_listener(self._gates_changed)
        self.gates.answerer = self.person_can_answer  # permission asks go to a widget a front end shows
        self.session.on_release(self._changed)

    @property
    def message(self) -> str:
        """The last notice or error, shown by the widget (a re-run's notice while it goes on)."""
        return self._message or self.session.note

    @message.setter
    def message(self, text: str) -> None:
        self._message = text

    @property
    def forks(self) -> list[Any]:
        return self.session.forks

    # ------------------------------------------------------------------ widgets

    def attach(self, widget: Any) -> None:
        """Give `widget` working buttons; widgets of earlier runs lose theirs (they show a finished run)."""
        from .channel import attach_controls

        self.message = ""
        for key in [k for k in self._widgets if k != id(widget)]:
            _, detach = self._widgets.pop(key)
            detach()
        if id(widget) in self._widgets:
            return
        try:
            detach = attach_controls(widget, self)
        except Exception as failure:  # no buttons is better than no run
            self.message = f"The controls could not be connected: {type(failure).__name__}: {failure}"
            return
        if detach is not None:
            self._widgets[id(widget)] = (widget, detach)
        if hasattr(widget, "show_forks"):
            widget.show_forks(self.session.forks)  # the earlier runs (re-runs) it can reopen

    def has_widget(self) -> bool:
        """Whether a widget with working buttons shows the run under way (a person can answer there); the widget
        of an earlier run that kept its buttons does not count."""
        views = getattr(self.agent, "_views", ())
        return any(any(view is widget for view in views) for widget, _ in list(self._widgets.values()))

    def widget_shown(self, widget: Any) -> None:
        """A front end rendered `widget` and reached its control channel (js/controls.js sends "shown")."""
        with self._shown:
            self._shown_ids.add(id(widget))
            self._shown.notify_all()

    def person_can_answer(self) -> bool:
        """Whether a person can answer an ask in the widget of the run under way: it is attached and a front end
        shows it. A widget no front end confirmed is waited for once, SHOWN_GRACE_SECONDS (its script may still
        be loading); a kernel run by nbclient, nbconvert or papermill never renders one, and a run there must not
        wait forever on an ask nobody sees."""
        if not self.has_widget():
            return False
        current = {id(view) for view in getattr(self.agent, "_views", ())} & set(self._widgets)
        with self._shown:
            if current & self._shown_ids:
                return True
            if current <= self._unseen_ids:
                return False
            self._shown.wait_for(lambda: bool(current & self._shown_ids), timeout=SHOWN_GRACE_SECONDS)
            self._unseen_ids |= current - self._shown_ids
            return bool(current & self._shown_ids)

    # ------------------------------------------------------------------ re-run from step k

    def rerun(self, step_number: int) -> None:
        """Re-run from finished step `step_number`: fork the memory there and continue live."""
        if self.session.request_rerun(step_number):
            return  # the run under way ends at its next safe point, then its stream continues from the step
        self._start_worker(self.session.continue_from(step_number))

    def restore_fork(self, index: int) -> str:
        """Make fork `index` the live run again (memory and namespace); the widgets show it and the new fork list."""
        note = self.session.restore_fork(index)
        self.message = note
        for widget, _ in list(self._widgets.values()):
            if hasattr(widget, "show_memory"):
                widget.show_memory(self.agent.memory, status=self.gates.status)
            if hasattr(widget, "show_forks"):
                widget.show_forks(self.session.forks)
        self._changed()
        return note

    def undo(self) -> str:
        """Undo the last run's changes to the namespace ("Undo this run"); the widgets say what was restored."""
        note = self.session.undo()
        self.message = note
        self._changed()
        return note

    # ------------------------------------------------------------------ prepared runs (idle kernel)

    def start(self, task: str, **run_kwargs: Any) -> RunDriver:
        """Prepare a run of `task`, paused before its first step; Step/Run (buttons or methods) advance it.

        The run is set up here (so a widget is displayed by the calling cell), then a
        worker thread drives it; this returns at once.
        """
        unknown = set(run_kwargs) - {"reset", "images", "additional_args", "max_steps", "max_time"}
        if unknown:
            raise TypeError(f"start() got unexpected arguments: {', '.join(sorted(unknown))}")
        if not isinstance(task, str) or not task.strip():
            raise ValueError("The task must be a non-empty string")
        max_steps = run_kwargs.get("max_steps")
        if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        self.message = ""
        events = self.agent.event_stream(task, **run_kwargs)
        self.gates.pause()
        try:
            next(events)  # RunStart: memory and views are set up in this thread
        except BaseException:
            events.close()
            self.gates.resume()
            raise
        self._start_worker(events)
        return self

    def _start_worker(self, events: Iterator[Any]) -> None:
        from .channel import watch_kernel_interrupt

        worker = threading.Thread(target=self._drain, args=(events,), name="nbagent-run", daemon=True)
        with self._lock:
            self._worker = worker
        watch_kernel_interrupt(self)
        worker.start()

    def _drain(self, events: Iterator[Any]) -> None:
        try:
            for _ in events:
                pass
        except BaseException as failure:  # a worker must end quietly; the status says what happened
            self.last_error = failure
            self.message = f"The run ended with an error: {type(failure).__name__}: {failure}"
            if self.gates.status not in ENDED_STATUSES:
                self.gates.finish("error")
        finally:
            with self._lock:
                if self._worker is threading.current_thread():
                    self._worker = None
            self._changed()

    @property
    def in_background(self) -> bool:
        """True while a worker thread drives a prepared run."""
        worker = self._worker
        return worker is not None and worker.is_alive()

    @property
    def active(self) -> bool:
        """True while a run (blocking or prepared) is under way, paused ones included."""
        return self.session.active

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the prepared run's worker to end; False on timeout."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
            return not worker.is_alive()
        return True

    # ------------------------------------------------------------------ Python API

    def step(self, wait: bool = True, timeout: float | None = None) -> ActionStep | None:
        """Advance exactly one step, then pause; with `wait`, return that step once it has finished.

        Returns early (None) if the step awaits approval of its code or an answer to a permission ask.
        """
        self._need_active("step")
        halts = self.gates.halts
        self._step_or_approve({})
        if wait:
            self._wait(lambda c: c.halts > halts, timeout)
        waiting = (RunStatus.AWAITING_APPROVAL, RunStatus.AWAITING_PERMISSION)
        return None if self.gates.status in waiting else self._last_action_step()

    def run(self, wait: bool = True, timeout: float | None = None) -> Any:
        """Run to the end; with `wait`, return the run's output once it ended (None if it stopped,
        or if it halted earlier: code awaiting approval, or paused by someone else)."""
        self._need_active("run")
        halts = self.gates.halts
        self._run_or_approve({})
        if wait:
            self._wait(lambda c: c.halts > halts, timeout)
            if self.gates.status in ENDED_STATUSES or self.gates.status == RunStatus.IDLE:
                self.join(timeout)
        result = getattr(self.agent, "last_result", None)
        return result.output if result is not None and not self.session.active else None

    def pause(self) -> None:
        self.gates.pause()

    def stop(self) -> None:
        self.gates.request_stop()

    def approve(self, code: str | None = None) -> None:
        self.gates.approve(code)

    def reject(self, note: str = "") -> None:
        self.gates.reject(note)

    def answer_permission(self, answer: str) -> None:
        """Answer the permission asked for: "once", "run" or "deny" (the ask panel's buttons)."""
        self.gates.answer_permission(answer)

    def _wait(self, predicate: Callable[[Any], bool], timeout: float | None) -> None:
        try:
            self.gates.wait_for(lambda c: predicate(c) or not self.session.active, timeout)
        except KeyboardInterrupt:  # ■ while the calling cell waits: the run stops like with Stop
            self.gates.request_stop("Stopped by a kernel interrupt.")
            self.join(5)

    def _last_action_step(self) -> ActionStep | None:
        steps = [s for s in self.agent.memory.steps if isinstance(s, ActionStep)]
        return steps[-1] if steps else None

    def _need_active(self, action: str) -> None:
        if not self.session.active:
            raise ControlError(
                f"{action.capitalize()}: there is no run to {action}. Prepare one with agent.start(task) "
                "(or %%agent --step), or re-run from a finished step."
            )

    # ------------------------------------------------------------------ the widget's commands

    def handle_command(self, message: dict[str, Any]) -> None:
        """Carry out a command from the widget: {"action": one of ACTIONS, "code"?, "note"?, "step"?, "on"?, "answer"?}.

        Raises `ControlError` (a ValueError) with a message for the person when it cannot act.
        """
        if not isinstance(message, dict):
            raise ControlError(f"A control command is a dict with an 'action', got {type(message).__name__}")
        action = message.get("action")
        if action not in ACTIONS:
            raise ControlError(f"Unknown control action {action!r}; expected one of {', '.join(ACTIONS)}")
        if action == "stop":
            self.stop()
        elif action == "pause":
            self._need_active(action)
            self.gates.pause()
        elif action == "run":
            self._need_active(action)
            self._run_or_approve(message)
        elif action == "step":
            self._need_active(action)
            self._step_or_approve(message)
        elif action == "approve":
            self.gates.approve(_code(message))
        elif action == "reject":
            note = message.get("note") or ""
            self.gates.reject(note if isinstance(note, str) else str(note))
        elif action == "rerun":
            self.rerun(_step_number(message.get("step")))
        elif action == "restore_fork":
            self.restore_fork(_fork_index(message.get("index")))
        elif action == "undo":
            self.undo()
        elif action == "approve_mode":
            self.gates.approve_code = bool(message.get("on"))
        elif action == "permission":
            self.gates.answer_permission(message.get("answer"))  # type: ignore[arg-type]  # checked there

    def _run_or_approve(self, message: dict[str, Any]) -> None:
        self.gates.go(None, _code(message))

    def _step_or_approve(self, message: dict[str, Any]) -> None:
        self.gates.go(1, _code(message))  # code awaiting approval runs (maybe edited), then the run pauses

    # ------------------------------------------------------------------ what the widget shows

    def snapshot(self) -> dict[str, Any]:
        """Status, pending code, mode, notices, and which buttons can act now (JSON-able)."""
        state = self.gates.snapshot()
        status, active = state["status"], self.session.active
        if not active and status in LIVE_STATUSES:
            status = RunStatus.IDLE.value  # a run that was abandoned without ending (e.g. a closed generator)
        awaiting = status == RunStatus.AWAITING_APPROVAL
        asking = status == RunStatus.AWAITING_PERMISSION
        live = active and not state["stopping"]
        state.update(
            status=status,
            active=active,
            message=self.message,
            forks=len(self.session.forks),
            undone=bool(self.session.undone),  # the widget stops warning about changes an undo took back
            rerunnable=[s.step_number for s in list(self.agent.memory.steps) if isinstance(s, ActionStep)],
            can={
                "run": live and (status == "paused" or awaiting or (status == "running" and state["mode"] != "run")),
                "step": live and (status == "paused" or awaiting),
                "pause": live
                and status in ("running", "awaiting_approval", "awaiting_permission")
                and state["mode"] != "pause",
                "stop": active,  # never greyed out while the run is under way: a second Stop is harmless
                "approve": live and awaiting,
                "reject": live and awaiting,
                "permission": live and asking and state["pending_ask"] is not None,
                "rerun": not state["stopping"],
                "undo": self.session.undoable,
            },
        )
        return state

    def when_finished(self, callback: Callable[[Any], Any]) -> None:
        """Call `callback(agent.last_result)` once, when the current run has ended (any thread)."""

        def check(snapshot: dict[str, Any]) -> None:
            if not snapshot["active"] and snapshot["status"] in ENDED_STATUSES:
                self.remove_listener(check)
                callback(getattr(self.agent, "last_result", None))

        self.add_listener(check)

    def add_listener(self, callback: Callable[[dict[str, Any]], Any]) -> None:
        """Call `callback(snapshot)` after every change, from the thread that made it."""
        self._listeners.append(callback)

    def remove_listener(self, callback: Callable[[dict[str, Any]], Any]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def _gates_changed(self, _state: dict[str, Any]) -> None:
        self._changed()

    def _changed(self) -> None:
        if not self._listeners:
            return
        snapshot = self.snapshot()
        for callback in list(self._listeners):
            try:
                callback(snapshot)
            except Exception:  # a broken view must never break the run
                pass

    def __repr__(self) -> str:
        return f"RunDriver(status={self.gates.status!r}, active={self.session.active}, forks={len(self.session.forks)})"


def _code(message: dict[str, Any]) -> str | None:
    code = message.get("code")
    if code is not None and not isinstance(code, str):
        raise ControlError(f"'code' must be a string, got {type(code).__name__}")
    return code


def _step_number(value: Any) -> int:
    if isinstance(value, bool):
        raise ControlError(f"rerun needs the step number as 'step', got {value!r}")
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int):
        return value
    raise ControlError(f"rerun needs the step number as 'step', got {value!r}")


RunController = RunDriver  # the name of nbagent 0.1; kept for old code


def _fork_index(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ControlError(f"restore_fork needs the fork's number as 'index', got {value!r}")
