"""`RunSession`: the runs of one agent as one event stream, "re-run from step k" included.

`events(...)` is what `agent.run(stream=True)` hands out. A re-run from a finished
step k keeps the whole memory in `forks`, cuts the live memory just before step k,
emits a `Rerun` event (views rebuild from the cut memory) and goes on with the same
views. Asked for while a run is under way, the re-run happens at the run's next
safe point (the run is stopped, then continues from k in the same stream); asked
for when idle, `continue_from(k)` returns the continuation's stream for the caller
to drain (the notebook's driver does so on a worker thread).

Time travel: an agent whose executor keeps step snapshots (`checkpoint`/`rewind`,
nbagent/sandbox/wire/timeline.py) gets its namespace back as it was before step k,
and the cut-off line's namespace goes with its memory: `restore_fork(i)` makes
fork i the live run again, namespace included (the live line becomes a fork).

Undo (`undo()`, `agent.undo()`, `%agent --undo`, the widget's "Undo this run"): the last run's namespace effects
are taken back with the same snapshots, a rewind to before the run's first step whose line is dropped; the memory
stays (the run is still shown), and the note says what was restored and what was not (files, tools' effects).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from nbagent.record import ActionStep, AgentMemory, PlanningStep, Rerun

from .gates import ControlError
from .undo import undo_note
from .view import View

if TYPE_CHECKING:
    from .engine import AgentLoop

__all__ = ["RunSession", "RERUN_NOTE"]

RERUN_NOTE = "Re-running from step {k}: the earlier run is kept in agent.forks[{index}]. {namespace}"
NOT_UNDONE = "Variables and other namespace effects of steps {k} and later are not undone."
RESTORED_NOTE = (
    "agent.forks[{index}] is the live run again; the run it replaced took its place in agent.forks[{index}]. "
    "{namespace}"
)


class RunSession:
    """Starts runs of `agent` and continues them from a step; thread-safe for `request_rerun`."""

    def __init__(self, agent: AgentLoop) -> None:
        self.agent = agent
        self.forks: list[AgentMemory] = []
        self.branches: list[Any] = []  # per fork: its namespace line (timeline.Branch), or None
        self.note = ""  # the last re-run notice, for views that show one
        self._lock = threading.RLock()
        self._active = False
        self._rerun_from: int | None = None
        self._run_args: dict[str, Any] = {}
        self._views: Sequence[View] = ()
        self._on_release: list[Callable[[], Any]] = []
        self.undone = False  # the last run's namespace effects were taken back (`undo`)

    def on_release(self, callback: Callable[[], Any]) -> None:
        """Call `callback()` whenever a run (with its re-runs) has gone through and the session is free again."""
        self._on_release.append(callback)

    @property
    def active(self) -> bool:
        """True while a run (or its continuation) is going through this session."""
        return self._active

    def events(
        self,
        task: str,
        reset: bool = True,
        images: list[Any] | None = None,
        additional_args: dict[str, Any] | None = None,
        max_steps: int | None = None,
        views: Sequence[View] = (),
        max_time: float | None = None,
    ) -> Iterator[Any]:
        """The run's events, including re-runs asked for meanwhile. Raises at once if a run is under way.

        `max_time`: the run's time limit in seconds (None: no limit); each re-run gets it afresh.
        """
        if self._active:
            raise RuntimeError(self.busy_message())
        return self._run(task, reset, images, additional_args, max_steps or self.agent.max_steps, views, max_time)

    def _run(
        self,
        task: str,
        reset: bool,
        images: Any,
        additional_args: Any,
        max_steps: int,
        views: Sequence[View],
        max_time: float | None,
    ) -> Iterator[Any]:
        self._claim()  # here, not in events(): a generator never started never runs its `finally`
        first = 1 if reset else self.agent._next_step_number()
        self._run_args = {"task": task, "first": first, "max_steps": max_steps, "max_time": max_time}
        self._views = tuple(views)
        segment = self.agent._run_events(
            task, reset, images, additional_args, max_steps, views=self._views, max_time=max_time
        )
        yield from self._with_reruns(segment)

    def _claim(self) -> None:
        with self._lock:
            if self._active:
                raise RuntimeError(self.busy_message())
            self._active, self._rerun_from, self.note = True, None, ""
            self.undone = False

    def _with_reruns(self, segment: Iterator[Any]) -> Iterator[Any]:
        """`segment`, then a continuation for every re-run asked for while it ran; releases the session."""
        try:
            while True:
                try:
                    yield from segment
                finally:
                    close = getattr(segment, "close", None)
                    if close is not None:
                        close()
                k = self._take_rerun()
                if k is None:
                    return
                yield self._fork_at(k)
                segment = self._continuation(k)
        finally:
            with self._lock:
                self._active = False
            for callback in list(self._on_release):
                callback()

    def _continuation(self, k: int) -> Iterator[Any]:
        task = self._run_args.get("task", self.agent.task or "")
        max_time = self._run_args.get("max_time", self.agent.max_time)
        return self.agent._run_events(task, False, None, None, self._remaining_steps(k), resume=True, max_time=max_time)

    def _take_rerun(self) -> int | None:
        with self._lock:
            k, self._rerun_from = self._rerun_from, None
        return k

    def _remaining_steps(self, k: int) -> int:
        args = self._run_args
        return max(1, args.get("max_steps", self.agent.max_steps) - (k - args.get("first", 1)))

    # ------------------------------------------------------------------ re-run from step k

    def request_rerun(self, step_number: int) -> bool:
        """Ask for a re-run from finished step `step_number`.

        True: a run is under way; it stops at its next safe point and the same stream
        continues from the step. False: no run is under way; call `continue_from`.
        """
        self._check_step(step_number)
        with self._lock:
            if not self._active:
                return False
            self._rerun_from = step_number
        self.agent.gates.request_stop(f"Stopped to re-run from step {step_number}.")
        return True

    def continue_from(self, step_number: int) -> Iterator[Any]:
        """The stream of a re-run from `step_number` when no run is under way (fork, `Rerun`, continuation)."""
        self._check_step(step_number)
        self._claim()
        if not self._run_args:
            self._run_args = {"task": self.agent.task or "", "first": 1, "max_steps": self.agent.max_steps}
        return self._rerun_stream(step_number)

    def _rerun_stream(self, step_number: int) -> Iterator[Any]:
        def first_segment() -> Iterator[Any]:
            yield self._fork_at(step_number)
            yield from self._continuation(step_number)

        yield from self._with_reruns(first_segment())

    def _check_step(self, step_number: int) -> None:
        if isinstance(step_number, bool) or not isinstance(step_number, int):
            raise ControlError(f"rerun takes a step number (int), got {step_number!r}")
        numbers = [s.step_number for s in self.agent.memory.steps if isinstance(s, ActionStep)]
        if step_number not in numbers:
            shown = ", ".join(map(str, numbers)) or "none yet"
            raise ControlError(f"There is no finished step {step_number} to re-run from (finished steps: {shown})")

    def _fork_at(self, k: int) -> Rerun:
        """Keep the whole memory in `forks`; cut the live memory just before step k (and its plan); put the
        namespace back as it was before step k where the executor can; tell the views."""
        memory = self.agent.memory
        kept = _copy_of(memory)
        memory.steps = memory.steps[: _cut_index(memory, k)]
        _scope(self.agent, "_enter_scope")  # the names the agent holds out of the notebook: back, for the rewind
        namespace, branch = self._rewind(k)
        self.forks.append(kept)
        self.branches.append(branch)
        self.note = RERUN_NOTE.format(k=k, index=len(self.forks) - 1, namespace=namespace)
        return self.agent._notify(Rerun(k, len(self.forks) - 1, memory, self.note))

    def _rewind(self, k: int) -> tuple[str, Any]:
        """The executor's rewind to before step k: its note and the line it cut off (a `Branch`, or None when the
        executor keeps no snapshots). A failure is said in the note, never raised: the re-run goes on."""
        rewind = getattr(getattr(self.agent, "python_executor", None), "rewind", None)
        if rewind is None:
            return NOT_UNDONE.format(k=k), None
        try:
            rewound = rewind(k)
        except Exception as failure:
            said = f"The namespace could not be restored ({type(failure).__name__}: {failure})."
            return f"{said} {NOT_UNDONE.format(k=k)}", None
        return rewound.note, rewound.branch

    # ------------------------------------------------------------------ restore a fork

    def restore_fork(self, index: int) -> str:
        """Make `forks[index]` the live run again, its namespace too where the executor kept it; the live run
        becomes a fork in its place. Returns the note (also in `note`). Only while no run is under way."""
        if isinstance(index, bool) or not isinstance(index, int) or not -len(self.forks) <= index < len(self.forks):
            raise ControlError(f"There is no fork {index!r} (agent.forks has {len(self.forks)})")
        index %= len(self.forks)
        with self._lock:
            if self._active:
                raise RuntimeError(self.busy_message())
        branch = self.branches[index]
        restore = getattr(getattr(self.agent, "python_executor", None), "restore_branch", None)
        _scope(self.agent, "_enter_scope")
        outcome = restore(branch) if restore is not None and branch is not None else None
        fork = self.forks[index]
        live = _copy_of(self.agent.memory)
        self.agent.memory.system_prompt = copy.copy(fork.system_prompt)
        self.agent.memory.steps = list(fork.steps)
        _scope(self.agent, "_end_of_run", None)
        self.forks[index] = live
        self.branches[index] = getattr(outcome, "branch", None)
        namespace = getattr(outcome, "note", "") or "Its namespace was not kept: variables are as they are now."
        self.note = RESTORED_NOTE.format(index=index, namespace=namespace)
        return self.note

    # ------------------------------------------------------------------ undo the last run

    @property
    def undoable(self) -> bool:
        """A finished run whose namespace effects can be asked to be taken back (and were not yet)."""
        return not self._active and not self.undone and bool(self._run_args) and self._ran_code()

    def undo(self) -> str:
        """Put every name the last run created, rebound or changed back as it was before the run (the executor's
        snapshots); returns the note saying what was restored and what could not be (also in `note`)."""
        with self._lock:
            if self._active:
                raise RuntimeError(self.busy_message())
        if not self._run_args:
            raise ControlError("There is no finished run to undo")
        if self.undone:
            return self.note
        first = self._run_args.get("first", 1)
        rewind = getattr(getattr(self.agent, "python_executor", None), "rewind", None)
        rewound, failure = None, ""
        if rewind is not None and self._ran_code():
            _scope(self.agent, "_enter_scope")
            try:
                rewound = rewind(first, keep=False)
            except Exception as error:  # said, never raised: nothing else of the run is touched
                failure = f"{type(error).__name__}: {error}"
            finally:
                scope = getattr(self.agent, "scope", None)
                if scope is not None and rewound is not None:
                    scope.forget(rewound.removed)
                _scope(self.agent, "_end_of_run", None)
        self.undone = rewound is not None and rewound.found
        self.note = undo_note(rewound, self._ran_code(), failure, self._tools_called(first))
        return self.note

    def _run_steps(self) -> list[ActionStep]:
        first = self._run_args.get("first", 1)
        return [s for s in self.agent.memory.steps if isinstance(s, ActionStep) and s.step_number >= first]

    def _ran_code(self) -> bool:
        return any(s.namespace_changes for s in self._run_steps())

    def _tools_called(self, first: int) -> list[str]:
        names = [
            call.name
            for step in self._run_steps()
            for call in step.tool_calls or []
            if call.name not in ("python_interpreter", "final_answer")
        ]
        return list(dict.fromkeys(names))

    def busy_message(self) -> str:
        return (
            f"This agent already has a run under way ({self.agent.gates.status}). Stop it with agent.stop() "
            "(or the widget's Stop), or let it finish, before starting another."
        )


def _scope(agent: Any, hook: str, *args: Any) -> None:
    """Call the agent's scope hook (agents that run code in a notebook's namespace have one)."""
    method = getattr(agent, hook, None)
    if method is not None:
        method(*args)


def _copy_of(memory: AgentMemory) -> AgentMemory:
    kept = AgentMemory()
    kept.system_prompt = copy.copy(memory.system_prompt)
    kept.steps = list(memory.steps)
    return kept


def _cut_index(memory: AgentMemory, k: int) -> int:
    """Where step k starts in `memory.steps` (its plan, if one comes just before it)."""
    cut = next(i for i, s in enumerate(memory.steps) if isinstance(s, ActionStep) and s.step_number == k)
    return cut - 1 if cut > 0 and isinstance(memory.steps[cut - 1], PlanningStep) else cut
