"""`RunController`: Run, Step, Pause, Stop, Approve, Reject and "re-run from step k" for one agent.

Two situations (the mechanism and its measured limits are in nbagent/control.py):

* a blocking run, `agent.run(task)` or `%%agent`: the calling thread drives the
  run; commands arriving from the widget (on another thread) open and close the
  gates of `agent.control`, and the call returns when the run ends or stops;
* a prepared run, `agent.start(task)` or `%%agent --step`: the run is set up in
  the calling thread (its widget shows there), then a worker thread drives it
  and waits, paused, for Step or Run; the kernel stays free in between.

Every run goes through `events()`, which also carries out "re-run from step k":
the whole memory is kept in `forks`, the memory is cut just before step k, and
the run goes on from there with the same views. Namespace effects of the steps
that are re-run are not undone (the widget says so).

`handle_command(message)` is what the widget's message handler calls;
`snapshot()` is what the widget shows (status, pending code, which buttons can act).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from nbagent.control import ControlError
from nbagent.events import RunStart
from nbagent.memory import ActionStep, AgentMemory, PlanningStep

if TYPE_CHECKING:
    from nbagent.agents import MultiStepAgent

__all__ = ["RunController", "ControlError", "ACTIONS", "RERUN_NOTE"]

ACTIONS = ("run", "step", "pause", "stop", "approve", "reject", "rerun", "approve_mode")
RERUN_NOTE = (
    "Re-running from step {k}: the earlier run is kept in agent.forks[{index}]. Variables and other "
    "namespace effects of steps {k} and later are not undone."
)
_ENDED = ("idle", "stopped", "done", "error")


class RunController:
    """Drives the runs of one agent and answers the widget's commands (thread-safe)."""

    def __init__(self, agent: MultiStepAgent) -> None:
        self.agent = agent
        self.control = agent.control
        self.forks: list[AgentMemory] = []
        self.message = ""  # the last notice or error, shown by the widget
        self.last_error: BaseException | None = None
        self._lock = threading.RLock()
        self._active = False  # a run (blocking or prepared) is going through events()
        self._worker: threading.Thread | None = None
        self._rerun_from: int | None = None
        self._run_args: dict[str, Any] = {}
        self._listeners: list[Callable[[dict[str, Any]], Any]] = []
        self._widgets: dict[int, tuple[Any, Callable[[], None]]] = {}  # id(widget) -> (widget, detach)
        self.control.add_listener(self._control_changed)

    # ------------------------------------------------------------------ the run's event stream

    def events(
        self,
        task: str,
        reset: bool = True,
        images: list[Any] | None = None,
        additional_args: dict[str, Any] | None = None,
        max_steps: int | None = None,
    ) -> Iterator[Any]:
        """The run's events (what `agent.run(stream=True)` yields), including re-runs asked for meanwhile."""
        if self._active:
            raise RuntimeError(self._busy_message())
        return self._segments(task, reset, images, additional_args, max_steps or self.agent.max_steps)

    def _segments(self, task: str, reset: bool, images: Any, additional_args: Any, max_steps: int) -> Iterator[Any]:
        agent = self.agent
        with self._lock:  # set here, not in events(): a generator never started never runs its `finally`
            if self._active:
                raise RuntimeError(self._busy_message())
            self._active, self._rerun_from, self.message = True, None, ""
        try:
            first = 1 if reset else agent._next_step_number()
            self._run_args = {"task": task, "first": first, "max_steps": max_steps}
            segment = agent._run_events(task, reset, images, additional_args, max_steps)
            while True:
                yield from self._attached(segment)
                k = self._take_rerun()
                if k is None:
                    return
                segment = agent._run_events(task, False, None, None, self._remaining_steps(k), resume=True)
        finally:
            with self._lock:
                self._active = False
            self._changed()

    def _attached(self, segment: Iterator[Any]) -> Iterator[Any]:
        """The segment's events; once the run has started (views exist), its widgets get working buttons."""
        try:
            for event in segment:
                if isinstance(event, RunStart):
                    self._attach_views()
                yield event
        finally:
            close = getattr(segment, "close", None)
            if close is not None:
                close()

    def _attach_views(self) -> None:
        """Buttons for this run's widgets; widgets of earlier runs lose theirs (they show a finished run)."""
        from nbagent.control_channel import attach_controls

        views = [v for v in list(getattr(self.agent, "_views", [])) if hasattr(v, "has_trait")]
        for key in [k for k in self._widgets if all(id(v) != k for v in views)]:
            _, detach = self._widgets.pop(key)
            detach()
        for view in views:
            if id(view) in self._widgets:
                continue
            try:
                detach = attach_controls(view, self)
            except Exception as failure:  # no buttons is better than no run
                self.message = f"The controls could not be connected: {type(failure).__name__}: {failure}"
                continue
            if detach is not None:
                self._widgets[id(view)] = (view, detach)

    def _take_rerun(self) -> int | None:
        with self._lock:
            k, self._rerun_from = self._rerun_from, None
        if k is not None:
            self._fork_at(k)
        return k

    def _remaining_steps(self, k: int) -> int:
        args = self._run_args
        return max(1, args.get("max_steps", self.agent.max_steps) - (k - args.get("first", 1)))

    # ------------------------------------------------------------------ re-run from step k

    def _fork_at(self, k: int) -> None:
        """Keep the whole memory in `forks`; cut the live memory just before step k (and its plan)."""
        memory = self.agent.memory
        kept = AgentMemory()
        kept.system_prompt = copy.copy(memory.system_prompt)
        kept.steps = list(memory.steps)
        cut = next(i for i, s in enumerate(memory.steps) if isinstance(s, ActionStep) and s.step_number == k)
        if cut > 0 and isinstance(memory.steps[cut - 1], PlanningStep):
            cut -= 1
        memory.steps = memory.steps[:cut]
        self.forks.append(kept)
        self.message = RERUN_NOTE.format(k=k, index=len(self.forks) - 1)
        for view in list(getattr(self.agent, "_views", [])):
            show = getattr(view, "show_memory", None)
            if show is not None:
                show(memory)

    def rerun(self, step_number: int) -> None:
        """Re-run from finished step `step_number`: fork the memory there and continue live."""
        if isinstance(step_number, bool) or not isinstance(step_number, int):
            raise ControlError(f"rerun takes a step number (int), got {step_number!r}")
        numbers = [s.step_number for s in self.agent.memory.steps if isinstance(s, ActionStep)]
        if step_number not in numbers:
            shown = ", ".join(map(str, numbers)) or "none yet"
            raise ControlError(f"There is no finished step {step_number} to re-run from (finished steps: {shown})")
        with self._lock:
            if self._active:
                self._rerun_from = step_number
                running = True
            else:
                running = False
        if running:  # the current run ends at its next safe point, then events() continues from k
            self.control.request_stop(f"Stopped to re-run from step {step_number}.")
            return
        self._fork_at(step_number)
        args = self._run_args or {"task": self.agent.task or "", "first": 1, "max_steps": self.agent.max_steps}
        self._run_args = args
        with self._lock:
            self._active = True
        segment = self.agent._run_events(
            args["task"], False, None, None, self._remaining_steps(step_number), resume=True
        )
        self._start_worker(self._resumed(segment))

    def _resumed(self, segment: Iterator[Any]) -> Iterator[Any]:
        """A continuation started from an idle kernel, followed by any re-run asked for meanwhile."""
        try:
            while True:
                yield from self._attached(segment)
                k = self._take_rerun()
                if k is None:
                    return
                segment = self.agent._run_events(
                    self._run_args["task"], False, None, None, self._remaining_steps(k), resume=True
                )
        finally:
            with self._lock:
                self._active = False
            self._changed()

    # ------------------------------------------------------------------ prepared runs (idle kernel)

    def start(self, task: str, **run_kwargs: Any) -> RunController:
        """Prepare a run of `task`, paused before its first step; Step/Run (buttons or methods) advance it.

        The run is set up here (so a widget is displayed by the calling cell), then a
        worker thread drives it; this returns at once.
        """
        unknown = set(run_kwargs) - {"reset", "images", "additional_args", "max_steps"}
        if unknown:
            raise TypeError(f"start() got unexpected arguments: {', '.join(sorted(unknown))}")
        if not isinstance(task, str) or not task.strip():
            raise ValueError("The task must be a non-empty string")
        max_steps = run_kwargs.get("max_steps")
        if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        events = self.events(task, **run_kwargs)
        self.control.pause()
        try:
            next(events)  # RunStart: memory and views are set up in this thread
        except BaseException:
            events.close()
            self.control.resume()
            raise
        self._start_worker(events)
        return self

    def _start_worker(self, events: Iterator[Any]) -> None:
        from nbagent.control_channel import watch_kernel_interrupt

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
            if self.control.status not in ("stopped", "done", "error"):
                self.control.finish("error")
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
        return self._active

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

        Returns early (None) if the step awaits approval of its code.
        """
        self._need_active("step")
        halts = self.control.halts
        self._step_or_approve({})
        if wait:
            self._wait(lambda c: c.halts > halts, timeout)
        return self._last_action_step() if self.control.status != "awaiting_approval" else None

    def run(self, wait: bool = True, timeout: float | None = None) -> Any:
        """Run to the end; with `wait`, return the run's output once it ended (None if it stopped,
        or if it halted earlier: code awaiting approval, or paused by someone else)."""
        self._need_active("run")
        halts = self.control.halts
        self._run_or_approve({})
        if wait:
            self._wait(lambda c: c.halts > halts, timeout)
            if self.control.status in _ENDED:
                self.join(timeout)
        result = getattr(self.agent, "last_result", None)
        return result.output if result is not None and not self._active else None

    def pause(self) -> None:
        self.control.pause()

    def stop(self) -> None:
        self.control.request_stop()

    def approve(self, code: str | None = None) -> None:
        self.control.approve(code)

    def reject(self, note: str = "") -> None:
        self.control.reject(note)

    def _wait(self, predicate: Callable[[Any], bool], timeout: float | None) -> None:
        try:
            self.control.wait_for(lambda c: predicate(c) or not self._active, timeout)
        except KeyboardInterrupt:  # ■ while the calling cell waits: the run stops like with Stop
            self.control.request_stop("Stopped by a kernel interrupt.")
            self.join(5)

    def _last_action_step(self) -> ActionStep | None:
        steps = [s for s in self.agent.memory.steps if isinstance(s, ActionStep)]
        return steps[-1] if steps else None

    def _need_active(self, action: str) -> None:
        if not self._active:
            raise ControlError(
                f"{action.capitalize()}: there is no run to {action}. Prepare one with agent.start(task) "
                "(or %%agent --step), or re-run from a finished step."
            )

    # ------------------------------------------------------------------ the widget's commands

    def handle_command(self, message: dict[str, Any]) -> None:
        """Carry out a command from the widget: {"action": one of ACTIONS, "code"?, "note"?, "step"?, "on"?}.

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
            self.control.pause()
        elif action == "run":
            self._need_active(action)
            self._run_or_approve(message)
        elif action == "step":
            self._need_active(action)
            self._step_or_approve(message)
        elif action == "approve":
            self.control.approve(_code(message))
        elif action == "reject":
            note = message.get("note") or ""
            self.control.reject(note if isinstance(note, str) else str(note))
        elif action == "rerun":
            self.rerun(_step_number(message.get("step")))
        elif action == "approve_mode":
            self.control.approve_code = bool(message.get("on"))

    def _run_or_approve(self, message: dict[str, Any]) -> None:
        self.control.resume()
        if self.control.status == "awaiting_approval":
            self.control.approve(_code(message))

    def _step_or_approve(self, message: dict[str, Any]) -> None:
        if self.control.status == "awaiting_approval":  # run this step's (edited) code, then pause
            self.control.pause()
            self.control.approve(_code(message))
        else:
            self.control.step(1)

    # ------------------------------------------------------------------ what the widget shows

    def snapshot(self) -> dict[str, Any]:
        """Status, pending code, mode, notices, and which buttons can act now (JSON-able)."""
        state = self.control.snapshot()
        status, active = state["status"], self._active
        if not active and status in ("running", "paused", "awaiting_approval"):
            status = "idle"  # a run that was abandoned without ending (e.g. a closed generator)
        awaiting = status == "awaiting_approval"
        live = active and not state["stopping"]
        state.update(
            status=status,
            active=active,
            message=self.message,
            forks=len(self.forks),
            rerunnable=[s.step_number for s in list(self.agent.memory.steps) if isinstance(s, ActionStep)],
            can={
                "run": live and (status == "paused" or awaiting or (status == "running" and state["mode"] != "run")),
                "step": live and (status == "paused" or awaiting),
                "pause": live and status in ("running", "awaiting_approval") and state["mode"] != "pause",
                "stop": active and not state["stopping"],
                "approve": live and awaiting,
                "reject": live and awaiting,
                "rerun": not state["stopping"],
            },
        )
        return state

    def when_finished(self, callback: Callable[[Any], Any]) -> None:
        """Call `callback(agent.last_result)` once, when the current run has ended (any thread)."""

        def check(snapshot: dict[str, Any]) -> None:
            if not snapshot["active"] and snapshot["status"] in ("done", "stopped", "error"):
                self.remove_listener(check)
                callback(getattr(self.agent, "last_result", None))

        self.add_listener(check)

    def add_listener(self, callback: Callable[[dict[str, Any]], Any]) -> None:
        """Call `callback(snapshot)` after every change, from the thread that made it."""
        self._listeners.append(callback)

    def remove_listener(self, callback: Callable[[dict[str, Any]], Any]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def _control_changed(self, _state: dict[str, Any]) -> None:
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

    def _busy_message(self) -> str:
        status = self.control.status
        return (
            f"This agent already has a run under way ({status}). Stop it with agent.stop() "
            "(or the widget's Stop), or let it finish, before starting another."
        )

    def __repr__(self) -> str:
        return f"RunController(status={self.control.status!r}, active={self._active}, forks={len(self.forks)})"


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
