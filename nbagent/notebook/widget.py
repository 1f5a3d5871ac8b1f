"""`AgentWidget`: the live view of a run in a notebook (anywidget; front-end in js/).

State is two traitlets, `run` (JSON) and `images` (PNG bytes, sent as binary buffers);
their schema is in nbagent/views/state.py and js/types.js. Events of a run come in through
`consume(event)`:

* model text deltas, what the code prints while it runs, and "a step began" go out as
  custom messages (transient);
* every other change syncs `run` at once (they are a few per step), except
  changes inside managed agents' runs, which sync at most every `sync_interval`
  seconds (the next step boundary flushes them);
* new images go out once, as a custom message with the PNGs as buffers; the
  Python side records them in `images` without re-sending the whole list (a
  later view or a reloaded page gets them with the rest of the state).

Displayed, the widget's output bundle holds the widget view, a static `text/html`
rendering of the run (refreshed when the run ends) and a `text/plain` summary, so a
notebook saved without widget state still shows the run (see nbagent/notebook/save_hook.py).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import anywidget
import traitlets
from ipywidgets import Widget, widget_serialization

from nbagent.record import CodeOutputDelta, Rerun
from nbagent.record.status import STATUSES, answered
from nbagent.text import ONE_LINE, truncate
from nbagent.views.html import run_to_html
from nbagent.views.state import ImageStore, RunStateBuilder, empty_run, memory_to_state, normalize_run

__all__ = ["AgentWidget", "WIDGET_VIEW_MIMETYPE"]

STATIC = Path(__file__).parent.parent / "static"  # nbagent/static: the esbuild output of js/
WIDGET_VIEW_MIMETYPE = "application/vnd.jupyter.widget-view+json"
if not (STATIC / "widget.js").is_file() or not (STATIC / "widget.css").is_file():
    raise ImportError(
        f"The widget's front-end is not built ({STATIC}/widget.js is missing). "
        "Run `npm ci && npm run build` in the nbagent repository (installs from a wheel include it)."
    )


class AgentWidget(anywidget.AnyWidget):
    """Shows a run: task, steps (thought, code, logs, errors, images, tokens, time), nested runs, final answer."""

    _esm = STATIC / "widget.js"
    _css = STATIC / "widget.css"

    run = traitlets.Dict().tag(sync=True)
    images = traitlets.List(traitlets.Bytes()).tag(sync=True)
    # Run controls (nbagent/notebook/driver.py, js/controls.js): their state, and the comm the buttons send on.
    controls = traitlets.Dict().tag(sync=True)
    control_channel = traitlets.Instance(Widget, allow_none=True).tag(sync=True, **widget_serialization)
    # Earlier runs kept by "re-run from here" (agent.forks): one summary each; js/forks.js opens one on request.
    forks = traitlets.List(traitlets.Dict()).tag(sync=True)
    # The same in every view of this widget: what a person opened among the earlier runs stays open when the
    # display is drawn anew (anywidget hands each view its own proxy of the model, so the front-end keys on this).
    views_key = traitlets.Unicode().tag(sync=True)

    @traitlets.default("views_key")
    def _fresh_views_key(self) -> str:
        return uuid.uuid4().hex

    sync_interval: float = 0.1  # seconds between syncs caused by managed agents' events

    def __init__(
        self,
        run: dict[str, Any] | None = None,
        images: list[bytes] | None = None,
        *,
        agent_name: str | None = None,
        model_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        run = _checked_run(run) if run is not None else empty_run(agent_name, model_id)
        images = [bytes(png) for png in images or []]
        super().__init__(run=_plain_copy(run), images=images, **kwargs)
        self._builder = RunStateBuilder(run=_plain_copy(run), images=ImageStore(images))
        self._images_generation = 0
        self._pushing_images = False
        self._last_sync = 0.0
        self._dirty = False
        self._display_ids: list[str] = []
        self.control_handlers: list[Any] = []  # callables(message) for {"type": "control", ...}
        self._fork_memories: list[Any] = []  # the agent's forks list (RunSession.forks), read when asked
        #: when set (display.py: the agent's `to_code`), called as a run ends: its program goes into `run["program"]`
        self.program_of: Any = None
        self.on_msg(self._on_front_end_message)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_memory(cls, memory: Any, **kwargs: Any) -> AgentWidget:
        """A widget showing a memory (e.g. `AgentMemory.load(path)`); kwargs go to `memory_to_state`."""
        run, images = memory_to_state(memory, **kwargs)
        return cls(run=run, images=images)

    @classmethod
    def for_agent(cls, agent: Any) -> AgentWidget:
        """A widget for `agent`, showing its memory so far."""
        name = getattr(agent, "name", None)
        model_id = getattr(getattr(agent, "model", None), "model_id", None)
        memory = getattr(agent, "memory", None)
        if memory is not None and memory.steps:
            return cls.from_memory(memory, agent_name=name, model_id=model_id)
        return cls(agent_name=name, model_id=model_id)

    def show_memory(self, memory: Any, status: str = "running") -> None:
        """Show `memory` from now on (a re-run from a step cut it); the run's next events continue from it."""
        run, images = memory_to_state(
            memory, agent_name=self.run.get("agent_name"), model_id=self.run.get("model_id"), status=status
        )
        self._builder = RunStateBuilder(run=_plain_copy(run), images=ImageStore(images))
        self._images_generation = -1  # a different list, not an extension of the shown one: send it whole
        self._sync_images()
        self._sync_run()

    def show_forks(self, forks: list[Any]) -> None:
        """List the earlier runs in `forks` (a RunSession's list of memories, kept by reference: a re-run
        appends to it, and the widget lists the new one when it shows the re-run)."""
        self._fork_memories = forks
        self._sync_forks()

    def _sync_forks(self) -> None:
        self.forks = [fork_summary(index, memory) for index, memory in enumerate(self._fork_memories)]

    def _send_fork(self, index: int) -> None:
        """Send earlier run `index` to the front-end, its PNGs as buffers (`{"type": "fork", ...}`)."""
        if not 0 <= index < len(self._fork_memories):
            return
        run, pngs = memory_to_state(
            self._fork_memories[index], agent_name=self.run.get("agent_name"), model_id=self.run.get("model_id")
        )
        self.send({"type": "fork", "index": index, "run": run}, buffers=pngs)

    # ------------------------------------------------------------------ events

    def consume(self, event: Any) -> None:
        """Apply one event of the run's stream (nbagent/record/events.py) and tell the front-end."""
        if isinstance(event, Rerun):
            self.show_memory(event.memory)
            self._sync_forks()
            return
        if isinstance(event, CodeOutputDelta):
            self.send({"type": "logs", "step_number": event.step_number, "text": event.text})
            return
        update = self._builder.apply(event)
        if update.kind == "none":
            return
        if update.kind == "delta":
            self.send({"type": "delta", "step_number": update.step_number, "text": update.text})
            return
        if update.kind == "step_start":
            self.send({"type": "step_start", "step_number": update.step_number, "kind": update.step_kind})
            if self._dirty:
                self._sync_run()
            return
        self._sync_images()
        if update.kind == "end":
            self._builder.run["program"] = self._program()
        if update.kind == "child" and time.monotonic() - self._last_sync < self.sync_interval:
            self._dirty = True
        else:
            self._sync_run()
        if update.kind == "end":
            self._refresh_displays()

    def _program(self) -> dict[str, Any] | None:
        """The ended run's program as state (checked: "Copy as cell" offers it), or None; a failure costs only it."""
        if self.program_of is None:
            return None
        try:
            return self.program_of(call_tools=False).state()  # no tool runs again unasked
        except Exception:  # the run is shown whatever happens to its program
            return None

    def _sync_run(self) -> None:
        self._dirty = False
        self._last_sync = time.monotonic()
        self.run = _plain_copy(self._builder.run)

    def _sync_images(self) -> None:
        store = self._builder.images
        pngs, have = store.pngs, len(self.images)
        if store.generation != self._images_generation or len(pngs) < have:
            self._images_generation = store.generation
            self.images = list(pngs)  # a new run: send its (short) list as state
            return
        if len(pngs) == have:
            return
        new = pngs[have:]
        self._pushing_images = True
        try:
            self.images = list(pngs)  # recorded for later views, not re-sent (see _should_send_property)
        finally:
            self._pushing_images = False
        self.send({"type": "images", "start": have}, buffers=new)

    def _should_send_property(self, key: str, value: Any) -> bool:
        # ipywidgets hook: images pushed as a custom message are not sent again as state.
        if key == "images" and self._pushing_images:
            return False
        return super()._should_send_property(key, value)

    def _on_front_end_message(self, _widget: Any, content: dict[str, Any], _buffers: list[Any]) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "request_images":
            have = max(0, int(content.get("have", 0)))
            if have < len(self.images):
                self.send({"type": "images", "start": have}, buffers=list(self.images[have:]))
        elif kind == "open_fork" and isinstance(content.get("index"), int):
            self._send_fork(content["index"])
        elif kind == "control":
            for handler in list(self.control_handlers):
                handler(content)

    # ------------------------------------------------------------------ display

    def summary(self) -> str:
        """One line for text/plain: agent, status, steps, the final answer ("no answer" for a run that had none)."""
        run = self.run
        steps = sum(1 for s in run.get("steps", []) if s.get("kind") == "action")
        parts = [
            run.get("agent_name") or "agent",
            run.get("status", "idle"),
            f"{steps} step{'' if steps == 1 else 's'}",
        ]
        final = run.get("final_answer") or {}
        outcome = run.get("outcome") or final.get("outcome")
        if outcome is not None and not answered(outcome):  # max steps, stopped, failed, an apology: no answer
            parts.append("no answer")
        elif final.get("text"):
            parts.append("final answer: " + truncate(final["text"], ONE_LINE))
        return f"AgentWidget({' · '.join(parts)})"

    def mimebundle(self) -> dict[str, Any]:
        """Widget view + static HTML of the run + a text summary."""
        data, _ = super()._repr_mimebundle_()
        return {
            WIDGET_VIEW_MIMETYPE: data[WIDGET_VIEW_MIMETYPE],
            "text/html": run_to_html(self.run, list(self.images)),
            "text/plain": self.summary(),
        }

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return self.mimebundle()

    def _ipython_display_(self) -> None:
        # Displayed with a display id, so that the static HTML can be refreshed when the run ends.
        from IPython.display import display

        display_id = f"nbagent-{self.model_id}-{len(self._display_ids)}"
        display(self.mimebundle(), raw=True, display_id=display_id)
        self._display_ids.append(display_id)

    def _refresh_displays(self) -> None:
        if not self._display_ids:
            return
        from IPython.display import update_display

        bundle = self.mimebundle()
        for display_id in self._display_ids:
            update_display(bundle, raw=True, display_id=display_id)


def fork_summary(index: int, memory: Any) -> dict[str, Any]:
    """How the earlier runs list shows one fork: its task, how many steps it ran, how it ended."""
    run, _ = memory_to_state(memory, images=_NoImages())
    steps = sum(1 for s in run["steps"] if s.get("kind") == "action")
    return {"index": index, "task": run.get("task") or "", "steps": steps, "status": run.get("status") or "idle"}


class _NoImages(ImageStore):
    """An image store that encodes nothing (a summary needs no pictures)."""

    def add(self, image: Any) -> int:
        return 0


def _checked_run(run: Any) -> dict[str, Any]:
    if not isinstance(run, dict) or not isinstance(run.get("steps"), list):
        raise TypeError("AgentWidget(run=...) takes a run dict with a 'steps' list (see nbagent.views.state)")
    status = run.get("status", "idle")
    if status not in STATUSES:
        raise ValueError(f"run['status'] must be one of {STATUSES}, got {status!r}")
    return normalize_run(run)


def _plain_copy(value: Any) -> Any:
    """A copy of nested dicts/lists (so traitlets sees a new value and the builder can keep mutating its own)."""
    if isinstance(value, dict):
        return {k: _plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_copy(v) for v in value]
    return value
