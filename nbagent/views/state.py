"""The widget's state: a run as JSON-able data plus a list of PNG images.

Both `memory_to_state` (a finished memory, e.g. loaded from disk) and
`RunStateBuilder` (the live event stream) produce the same shapes, from the
same step converters, so a view built from events and one rebuilt from memory
show the same run. The JS front-end (js/) reads exactly this; keep the two in
step.

Widget traitlets (nbagent/notebook/widget.py; the same schema as JSDoc typedefs in js/types.js):

* ``run`` (Dict) — the run::

    {
      "task": str,                      # the latest task of the run
      "agent_name": str | None,
      "model_id": str | None,
      "status": "idle" | "running" | "paused" | "awaiting_approval" | "awaiting_permission"
                | "stopped" | "done" | "error" | "max_steps" | "no_answer" | "timed_out" | "stuck",
      "outcome": None | "success" | "max_steps_error" | "stopped" | "error" | "timed_out" | "stuck"
                 | "model_error" | "error_answer",   # how it ended (record/status.py)
      "message": str | None,            # a passing note, e.g. "loading the offline model…"
      "steps": [step, ...],             # in order, see below
      "final_answer": answer | None,    # the last final answer
      "token_usage": {"input_tokens": int, "output_tokens": int} | None,
      "duration": float | None,         # seconds
      "error": str | None,              # what ended the run (status "error", "timed_out" or "stuck"),
                                        # unless its last step already shows it
      "max_time": float | None,         # the run's time limit in seconds (max_time), None: no limit
      "started_at": float | None,       # when the run (or its re-run) started: Unix time of the kernel,
                                        # None for a run rebuilt from memory
      "step_started_at": float | None,  # when the running step started (Unix time), None between steps
      "scratch": [str],                 # the names its code made that stay in the agent's scope (loop/scope.py)
      "program": program | None,       # the run as code (agent.to_code(), loop/program), set when it ended
    }

  where ``program`` is ``{"text": str, "checked": bool | None, "reason": str, "inputs": [str],
  "tools": [str]}`` (``RunProgram.state()``: ``text`` is the program with its first comment line, what
  "Copy as cell" inserts; ``checked`` None when the run has no program, ``reason`` then says why).

  The two start times are what the widget's header clock (js/clock.js) counts from while the run is
  live; a finished run shows its ``duration``.

  where ``answer`` is ``{"text": str, "type": str, "images": [int],
  "outcome": str | None}`` (``text`` is the value as a person reads it,
  ``nbagent.text.plain_text``: 25124.05, not np.float64(25124.05); ``type``
  is the Python type name of the value,
  "str" for any text; the front-end renders "str" as markdown and anything
  else preformatted; ``outcome`` other than "success" means the text is not
  an answer: the model's reply after max steps, or an error/apology, shown
  in a warning style). The forced reply after max steps is not a step: it
  shows only as that final answer.

* ``images`` (List of Bytes) — PNG bytes. ipywidgets sends them as binary
  buffers, never as base64 inside JSON; steps refer to them by index.

A step is one of::

    {"kind": "task", "step_number": None, "task": str, "images": [int],
     "parts": [part, ...]}            # the task cut where a DataFrame's first rows show as a table
    {"kind": "final", "step_number": None, "final_answer": answer}
    {"kind": "action" | "planning",
     "step_number": int,
     "model_output": str | None,        # markdown: the model's text, thought included
     "code": str | None,                # the code that ran
     "model_code": str | None,          # what the model wrote, only when it differs from what ran
     "code_changes": [code_change, ...], # who changed the model's code before it ran, see below
     "tool_calls": [{"name": str, "arguments": Any}],   # not the CodeAgent's own python_interpreter call; the
                                        # tools its code called add "result"?, "error"?, "seconds"?, "more"?
     "observations": str | None,        # execution logs / tool results
     "warnings": [str],                 # warnings raised while the code ran (kept out of the observations)
     "permissions": [permission, ...],  # what the sandbox refused the code and the answer, see below
     "error": str | None,
     "images": [int],
     "action_output": str | None,       # str() of the value the step returned
     "is_final_answer": bool,
     "token_usage": {"input_tokens": int, "output_tokens": int} | None,
     "duration": float | None,          # None while the step runs
     "stopped": bool,
     "mark": None | "error" | "stopped" | "timed_out" | "stuck" | "rejected",  # its badge (record/status.py)
     "plan": str | None,                # planning steps
     "children": [run, ...],           # runs of managed agents called in this step
     "changes": [change, ...]}         # what the code did to the namespace, see below

where ``part`` is ``{"kind": "markdown" | "table" | "text", "text": str | None,
"table": {"index_name": str | None, "columns": [str], "index": [str],
"rows": [[str]], "more_columns": bool} | None}`` (nbagent/views/task_preview.py;
``parts`` is [] when the task holds no preview: it shows as Markdown, whole),
``code_change`` is ``{"by": "nbagent" | "you" | "unknown", "label": str,
"diff": [[" " | "-" | "+", line], ...]}`` (nbagent/views/code_diff.py: nbagent's
rewrite of the model's code, a person's edit at approval, or for a run saved
before steps said who: a change of unknown origin), and ``change`` is ``{"name": str, "change": "created" | "rebound" |
"modified" | "deleted", "type": str, "detail": str, "kept"?: true, "yours"?: true}``
(nbagent/sandbox/changes.py: ``type`` like "DataFrame 50×6", ``detail``
like "+1 column total_revenue"; ``kept``: the change stayed in the agent's
copy, ``copy_inputs``; ``yours``: the name was the person's, shown as a warning), and ``permission`` is ``{"kind": "read" | "write" |
"connect" | "network" | "variable", "target": str, "answer": "once" | "run" |
"deny" | "never", "parts": [[role, str], ...], "text": str}``
(nbagent/views/permissions.py: ``parts`` what is rendered, role "words",
"target" or "detail", each one text node; ``text`` the plain line, like
"Allowed once: write `/work/out.csv` (by you)").

Transient custom messages (Python -> JS) are not state: ``{"type":
"step_start", "step_number", "kind"}``, ``{"type": "delta", "step_number",
"text"}`` and ``{"type": "images", "start"}`` with the new PNGs as buffers.
A view opened later, a second view, or a saved notebook rebuilds from
``run`` + ``images`` alone.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nbagent.media import image_to_png, is_image
from nbagent.models.base import ChatMessageStreamDelta
from nbagent.record import (
    CODE_TOOL_NAME,
    ActionStep,
    AgentMemory,
    ChildEvent,
    FinalAnswerStep,
    PlanningStep,
    RunEnd,
    RunStart,
    StepStart,
    TaskStep,
    ToolCall,
    ToolOutput,
)
from nbagent.record.status import STATUSES, RunOutcome, looks_like_error, run_outcome, status_of, step_mark
from nbagent.text import plain_text

from .code_diff import code_changes
from .permissions import permission_state
from .task_preview import task_parts

__all__ = [
    "STATUSES",
    "ImageStore",
    "StateUpdate",
    "RunStateBuilder",
    "memory_to_state",
    "empty_run",
    "normalize_run",
    "action_step_to_dict",
    "planning_step_to_dict",
    "answer_to_dict",
    "is_forced_answer",
]

TEXT_LIMIT = 100_000  # characters kept of one observation/output; the widget collapses long text anyway


class ImageStore:
    """PNG bytes of the run's images; each image object is encoded once."""

    def __init__(self, pngs: list[bytes] | None = None) -> None:
        self.pngs: list[bytes] = list(pngs or [])
        self.generation = 0  # bumped by clear(): indexes from before no longer apply
        self._by_id: dict[int, tuple[Any, int]] = {}  # id(image) -> (image kept alive, index)

    def clear(self) -> None:
        self.pngs = []
        self._by_id = {}
        self.generation += 1

    def add(self, image: Any) -> int:
        known = self._by_id.get(id(image))
        if known is not None and known[0] is image:
            return known[1]
        png = image if isinstance(image, (bytes, bytearray)) else image_to_png(image)
        self.pngs.append(bytes(png))
        index = len(self.pngs) - 1
        self._by_id[id(image)] = (image, index)
        return index

    def add_all(self, images: Iterable[Any] | None) -> list[int]:
        return [self.add(image) for image in images or []]

    def __len__(self) -> int:
        return len(self.pngs)


def empty_run(agent_name: str | None = None, model_id: str | None = None) -> dict[str, Any]:
    return {
        "task": "",
        "agent_name": agent_name,
        "model_id": model_id,
        "status": "idle",
        "steps": [],
        "final_answer": None,
        "token_usage": None,
        "duration": None,
        "error": None,
        "outcome": None,
        "message": None,
        "max_time": None,
        "started_at": None,
        "step_started_at": None,
        "scratch": [],
        "program": None,
    }


# ---------------------------------------------------------------------------- converters


def _message_text(content: Any) -> str | None:
    """A model output: a string, or multi-part content whose text parts are joined."""
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return _text(content)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    if len(text) > TEXT_LIMIT:
        text = text[:TEXT_LIMIT] + f"\n[… {len(text) - TEXT_LIMIT} more characters]"
    return text


def _usage(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    return {"input_tokens": int(usage.input_tokens or 0), "output_tokens": int(usage.output_tokens or 0)}


def _error(error: Any) -> str | None:
    if error is None:
        return None
    if isinstance(error, dict):  # {"type", "message"} as saved by some formats
        return str(error.get("message", error))
    return str(getattr(error, "message", None) or error)


def _tool_call(call: ToolCall | Any) -> dict[str, Any]:
    return {"name": call.name, "arguments": _jsonable(call.arguments)}


def _code_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    """A tool the step's code called (nbagent/loop/tool_uses.py): with its result or error and its time."""
    shown = {"name": str(call.get("name")), "arguments": _jsonable(call.get("arguments"))}
    shown.update({key: call[key] for key in ("result", "error", "seconds", "more") if call.get(key) is not None})
    return shown


def _jsonable(value: Any) -> Any:
    """Tool arguments as JSON data (anything else becomes its str())."""
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return str(value)


def answer_to_dict(value: Any, images: ImageStore) -> dict[str, Any]:
    """A final answer: text (str() of the value) and its type; images go to the store."""
    if is_image(value):
        return {"text": "", "type": type(value).__name__, "images": [images.add(value)]}
    kind = "str" if isinstance(value, str) else type(value).__name__
    return {"text": _text(plain_text(value)) or "", "type": kind, "images": []}


def _base_step(kind: str, step_number: int | None) -> dict[str, Any]:
    return {
        "kind": kind,
        "step_number": step_number,
        "model_output": None,
        "code": None,
        "model_code": None,
        "code_changes": [],
        "tool_calls": [],
        "observations": None,
        "warnings": [],
        "permissions": [],
        "error": None,
        "images": [],
        "action_output": None,
        "is_final_answer": False,
        "token_usage": None,
        "duration": None,
        "stopped": False,
        "mark": None,
        "plan": None,
        "children": [],
        "changes": [],
    }


def action_step_to_dict(step: ActionStep, images: ImageStore, children: list[dict] | None = None) -> dict[str, Any]:
    code = step.code_action
    edited = step.model_code_action if step.model_code_action not in (None, code) else None
    calls = [c for c in step.tool_calls or [] if not (c.name == CODE_TOOL_NAME and code is not None)]
    output = step.action_output
    data = _base_step("action", step.step_number)
    data.update(
        model_output=_message_text(step.model_output),
        code=code,
        model_code=edited,
        code_changes=code_changes(step),
        tool_calls=[_tool_call(c) for c in calls] + [_code_tool_call(c) for c in step.code_tool_calls or []],
        observations=_text(step.observations),
        warnings=[_text(w) for w in getattr(step, "warnings", None) or []],
        permissions=[permission_state(entry) for entry in getattr(step, "permissions", None) or []],
        error=_error(step.error),
        images=images.add_all(step.observations_images),
        action_output=None if output is None or is_image(output) else _text(plain_text(output)),
        is_final_answer=bool(step.is_final_answer),
        token_usage=_usage(step.token_usage),
        duration=step.timing.duration if step.timing else None,
        stopped=bool(step.stopped),
        mark=step_mark(step.error, bool(step.stopped), step.observations),  # the step's badge (record/status.py)
        children=children or [],
        changes=[dict(c) for c in step.namespace_changes or []],
    )
    return data


def planning_step_to_dict(step: PlanningStep, step_number: int | None) -> dict[str, Any]:
    data = _base_step("planning", step_number)
    message = step.model_output_message
    data.update(
        model_output=_message_text(message.text) if message is not None else None,
        plan=step.plan,
        token_usage=_usage(step.token_usage),
        duration=step.timing.duration if step.timing else None,
    )
    return data


def task_step_to_dict(task: str, task_images: list[Any] | None, images: ImageStore) -> dict[str, Any]:
    return {
        "kind": "task",
        "step_number": None,
        "task": task,
        "images": images.add_all(task_images),
        "parts": task_parts(task),
    }


def final_step_to_dict(answer: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "final", "step_number": None, "final_answer": answer}


def is_forced_answer(step: Any) -> bool:
    """The model's reply when the steps ran out: recorded as an action step, shown only as a (non-)answer."""
    return (
        isinstance(step, ActionStep)
        and bool(step.is_final_answer)
        and type(step.error).__name__ == "AgentMaxStepsError"
    )


def _answer_outcome(value: Any, forced: bool) -> str:
    if forced:
        return RunOutcome.MAX_STEPS.value
    return RunOutcome.ERROR_ANSWER.value if looks_like_error(value) else RunOutcome.SUCCESS.value


def _final_answer(value: Any, images: ImageStore, forced: bool) -> dict[str, Any]:
    return {**answer_to_dict(value, images), "outcome": _answer_outcome(value, forced)}


def normalize_run(run: dict[str, Any]) -> dict[str, Any]:
    """A copy of a (possibly hand-made, partial) run dict with every key of the schema present."""
    if not isinstance(run, dict) or not isinstance(run.get("steps"), list):
        raise TypeError("a run is a dict with a 'steps' list (see nbagent.views.state)")
    steps = []
    for step in run["steps"]:
        kind = step.get("kind", "action")
        if kind in ("action", "planning"):
            step = {**_base_step(kind, step.get("step_number")), **step}
        steps.append(step)
    children = lambda step: [normalize_run(c) for c in step.get("children") or []]  # noqa: E731
    steps = [{**s, "children": children(s)} if s.get("children") else s for s in steps]
    return {**empty_run(), **run, "steps": steps}


# ---------------------------------------------------------------------------- memory -> state


def memory_to_state(
    memory: AgentMemory,
    *,
    agent_name: str | None = None,
    model_id: str | None = None,
    status: str | None = None,
    images: ImageStore | None = None,
) -> tuple[dict[str, Any], list[bytes]]:
    """The run dict and the PNG list of a memory (what a reopened or reloaded run shows).

    `status` defaults to "done" when the memory ends with a final answer,
    "timed_out" or "stuck" when its last step says the run ended at that limit,
    "stopped" when its last step was stopped, "idle" when it is empty, else
    "error". Nested runs of managed agents live in their own memories, so
    `children` stays empty here; the live builder fills it from events.
    """
    if not isinstance(memory, AgentMemory):
        raise TypeError(f"memory_to_state() takes an AgentMemory, got {type(memory).__name__}")
    store = images or ImageStore()
    run = empty_run(agent_name, model_id)
    next_number = 1
    for step in memory.steps:
        if isinstance(step, TaskStep):
            run["task"] = step.task
            run["steps"].append(task_step_to_dict(step.task, step.task_images, store))
        elif isinstance(step, PlanningStep):
            run["steps"].append(planning_step_to_dict(step, next_number))
        elif isinstance(step, ActionStep):
            forced = is_forced_answer(step)
            if not forced:
                run["steps"].append(action_step_to_dict(step, store))
            next_number = step.step_number + 1
            if step.is_final_answer:
                run["final_answer"] = _final_answer(step.action_output, store, forced)
                run["steps"].append(final_step_to_dict(run["final_answer"]))
        elif isinstance(step, FinalAnswerStep) and not _ends_with_final(run):
            run["final_answer"] = _final_answer(step.output, store, forced=False)
            run["steps"].append(final_step_to_dict(run["final_answer"]))
    total = memory.total_token_usage()
    run["token_usage"] = _usage(total) if total.input_tokens or total.output_tokens else None
    run["duration"] = _memory_duration(memory)
    run["outcome"] = _memory_outcome(memory, run)
    run["status"] = status or (status_of(run["outcome"]) if run["outcome"] else "idle")
    if status is not None and status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
    return run, store.pngs


def _ends_with_final(run: dict[str, Any]) -> bool:
    return bool(run["steps"]) and run["steps"][-1]["kind"] == "final"


def _memory_outcome(memory: AgentMemory, run: dict[str, Any]) -> str | None:
    """How the run in `memory` ended (None: nothing ran yet); a memory cut without an end reads as stopped."""
    actions = memory.action_steps()
    if _ends_with_final(run):
        return run["final_answer"]["outcome"]
    if not actions:
        return None
    last = actions[-1]
    kind = type(last.error).__name__
    if kind in _ENDING_ERRORS:
        return _ENDING_ERRORS[kind].value
    if last.stopped or last.error is None:
        return RunOutcome.STOPPED.value
    return run_outcome(RunOutcome.ERROR.value, error=last.error).value


# the error on the last step of a run that ended at a limit (nbagent.errors), and the outcome it means
_ENDING_ERRORS = {"AgentTimedOutError": RunOutcome.TIMED_OUT, "AgentStuckError": RunOutcome.STUCK}


def _memory_duration(memory: AgentMemory) -> float | None:
    timings = [s.timing for s in memory.steps if getattr(s, "timing", None) is not None]
    ends = [t.end_time for t in timings if t.end_time is not None]
    if not timings or not ends:
        return None
    return max(ends) - min(t.start_time for t in timings)


# ---------------------------------------------------------------------------- events -> state


@dataclass
class StateUpdate:
    """What an event changed, so the widget knows what to send.

    kind: "none" (nothing visible), "state" (run changed), "boundary" (a step or
    run began/ended), "child" (a managed agent's run changed; may be throttled),
    "delta" (streamed text), "step_start" (a step began), "end" (the run ended).
    """

    kind: str
    step_number: int | None = None
    step_kind: str | None = None
    text: str = ""


_NONE = StateUpdate("none")
# the states whose error the run shows (a stop by a person needs no explanation; a limit does)
_ERROR_SHOWN = frozenset({RunOutcome.ERROR.value, RunOutcome.TIMED_OUT.value, RunOutcome.STUCK.value})


class RunStateBuilder:
    """Applies the event stream of nbagent/events.py to a run dict, step by step.

    Events of managed agents arrive wrapped in `ChildEvent`; their runs are
    built by child builders (sharing this builder's images) and appear in the
    `children` of the step that called them.
    """

    def __init__(
        self,
        agent_name: str | None = None,
        model_id: str | None = None,
        *,
        run: dict[str, Any] | None = None,
        images: ImageStore | None = None,
    ) -> None:
        self.images = images or ImageStore()
        self.run = run or empty_run(agent_name, model_id)
        self._step: dict[str, Any] | None = None  # the step in progress
        self._stream: list[str] = []  # model text of the step in progress
        self._children: dict[str, RunStateBuilder] = {}  # managed agent name -> its builder
        self._started = 0.0
        self._forced = False  # the steps ran out: the final answer is the model's closing reply
        self._last_error: Any = None  # the error of the last finished step (tells a model error)

    # -- public ---------------------------------------------------------------

    def apply(self, event: Any) -> StateUpdate:
        """Update the run with one event and say what changed."""
        handler = _HANDLERS.get(type(event))
        if handler is None:
            for cls, fn in _HANDLERS.items():
                if isinstance(event, cls):
                    handler = fn
                    break
        return handler(self, event) if handler else _NONE

    @property
    def current_step_number(self) -> int | None:
        return self._step["step_number"] if self._step else None

    # -- handlers -------------------------------------------------------------

    def _run_start(self, event: RunStart) -> StateUpdate:
        if event.reset:
            self.images.clear()
            self.run["steps"] = []
        self.run.update(
            task=event.task,
            agent_name=event.agent_name or self.run.get("agent_name"),
            status="running",
            final_answer=None,
            error=None,
            duration=None,
            outcome=None,
            message=None,
            max_time=getattr(event, "max_time", None),
            started_at=time.time(),
            step_started_at=None,
        )
        self._forced, self._last_error = False, None
        steps = self.run["steps"]
        if getattr(event, "resumed", False):  # re-run from a step: the task is already shown
            self._step, self._stream, self._children = None, [], {}
            self._started = time.time()
            return StateUpdate("boundary")
        if steps and steps[-1]["kind"] == "task" and steps[-1]["task"] == event.task:
            steps.pop()  # already shown (a widget made from the memory that holds this task)
        steps.append(task_step_to_dict(event.task, event.images, self.images))
        self._step, self._stream, self._children = None, [], {}
        self._started = time.time()
        return StateUpdate("boundary")

    def _step_start(self, event: StepStart) -> StateUpdate:
        kind = "planning" if event.kind == "planning" else "action"
        self._step, self._stream, self._children = _base_step(kind, event.step_number), [], {}
        self.run.update(message=None, step_started_at=time.time())
        return StateUpdate("step_start", step_number=event.step_number, step_kind=kind)

    def _delta(self, event: ChatMessageStreamDelta) -> StateUpdate:
        if not event.content:
            return _NONE
        self._stream.append(event.content)
        return StateUpdate("delta", step_number=self.current_step_number, text=event.content)

    def _shown_step(self) -> dict[str, Any]:
        """The step in progress, added to the run's steps once it has something besides streamed text."""
        if self._step is None:
            self._step = _base_step("action", None)
        if not any(s is self._step for s in self.run["steps"]):
            self._step["model_output"] = "".join(self._stream) or None
            self.run["steps"].append(self._step)
        return self._step

    def _tool_call(self, event: ToolCall) -> StateUpdate:
        step = self._shown_step()
        if event.name == CODE_TOOL_NAME and isinstance(event.arguments, str):
            step["code"] = event.arguments
        else:
            step["tool_calls"].append(_tool_call(event))
        return StateUpdate("state")

    def _tool_output(self, event: ToolOutput) -> StateUpdate:
        step = self._shown_step()
        if event.observation:
            step["observations"] = "\n".join(filter(None, [step["observations"], event.observation]))
        step["images"] += [i for i in self.images.add_all(event.images) if i not in step["images"]]
        return StateUpdate("state")

    def _action_step(self, event: ActionStep) -> StateUpdate:
        self._last_error = event.error
        if is_forced_answer(event):  # not a step: it shows as the final (non-)answer
            self._forced = True
            self.run["steps"] = [s for s in self.run["steps"] if s is not self._step]
            self._step, self._stream = None, []
            self.run["step_started_at"] = None
            return StateUpdate("boundary")
        children = self._step["children"] if self._step else []
        self._replace_current(action_step_to_dict(event, self.images, children))
        return StateUpdate("boundary")

    def _planning_step(self, event: PlanningStep) -> StateUpdate:
        self._replace_current(planning_step_to_dict(event, self.current_step_number))
        return StateUpdate("boundary")

    def _replace_current(self, finished: dict[str, Any]) -> None:
        steps = self.run["steps"]
        index = next((i for i, s in enumerate(steps) if s is self._step), None)
        if index is None:
            steps.append(finished)
        else:
            steps[index] = finished
        self._step, self._stream = None, []
        self.run["step_started_at"] = None

    def _final_answer(self, event: FinalAnswerStep) -> StateUpdate:
        answer = _final_answer(event.output, self.images, self._forced)
        self.run["final_answer"] = answer
        self.run["steps"].append(final_step_to_dict(answer))
        return StateUpdate("boundary")

    def _run_end(self, event: RunEnd) -> StateUpdate:
        result = event.result
        if self._step is not None and any(s is self._step for s in self.run["steps"]):
            self._step["stopped"] = result.state in (RunOutcome.STOPPED.value, RunOutcome.TIMED_OUT.value)
            if self._step["stopped"]:
                self._step["mark"] = "timed_out" if result.state == RunOutcome.TIMED_OUT.value else "stopped"
        self._step = None
        timing = getattr(result, "timing", None)
        duration = getattr(timing, "duration", None)
        outcome = run_outcome(result.state, result.output, self._last_error or result.error)
        if self._forced:
            outcome = RunOutcome.MAX_STEPS
        self.run.update(
            status=status_of(outcome),
            outcome=outcome.value,
            message=None,
            step_started_at=None,
            token_usage=_usage(result.token_usage),
            duration=duration if duration is not None else time.time() - self._started,
            error=self._unshown_error(result.error if result.state in _ERROR_SHOWN else None),
            scratch=list(getattr(result, "scratch", None) or []),
        )
        return StateUpdate("end")

    def _unshown_error(self, error: str | None) -> str | None:
        """The run's error, unless its last step already shows it (an error is shown once)."""
        last = next((s for s in reversed(self.run["steps"]) if s["kind"] == "action"), None)
        return None if last is not None and error is not None and last["error"] == error else error

    def _child(self, event: ChildEvent) -> StateUpdate:
        inner = event.event
        if isinstance(inner, RunStart) or event.agent_name not in self._children:
            child = RunStateBuilder(
                inner.agent_name if isinstance(inner, RunStart) else event.agent_name, images=self.images
            )
            self._children[event.agent_name] = child
            self._shown_step()["children"].append(child.run)
        update = self._children[event.agent_name].apply(inner)
        return _NONE if update.kind in ("none", "delta", "step_start") else StateUpdate("child")


_HANDLERS: dict[type, Any] = {
    RunStart: RunStateBuilder._run_start,
    StepStart: RunStateBuilder._step_start,
    ChatMessageStreamDelta: RunStateBuilder._delta,
    ToolCall: RunStateBuilder._tool_call,
    ToolOutput: RunStateBuilder._tool_output,
    ActionStep: RunStateBuilder._action_step,
    PlanningStep: RunStateBuilder._planning_step,
    FinalAnswerStep: RunStateBuilder._final_answer,
    RunEnd: RunStateBuilder._run_end,
    ChildEvent: RunStateBuilder._child,
}
