"""AgentWidget: state from memory, the live event stream -> traitlets + custom messages, images once, display."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from nbagent import AgentMemory, ScriptedModel, ToolCallingAgent
from nbagent.models.base import ChatMessageStreamDelta
from nbagent.notebook.widget import WIDGET_VIEW_MIMETYPE, AgentWidget
from nbagent.record import ActionStep, RunStart, StepStart, ToolCall, ToolOutput
from nbagent.views.state import memory_to_state


class Wire:
    """Records what the widget's comm sends: (content, buffers) per message."""

    def __init__(self, widget: AgentWidget) -> None:
        self.messages: list[tuple[dict, list[bytes]]] = []
        widget.comm.send = lambda data=None, metadata=None, buffers=None: self.messages.append(
            (data, [bytes(b) for b in buffers or []])
        )

    def custom(self, kind: str | None = None) -> list[tuple[dict, list[bytes]]]:
        return [
            (m["content"], b)
            for m, b in self.messages
            if m["method"] == "custom" and (kind is None or m["content"]["type"] == kind)
        ]

    def updates(self, key: str) -> list[tuple[dict, list[bytes]]]:
        return [(m, b) for m, b in self.messages if m["method"] == "update" and key in m["state"]]

    def buffer_bytes(self) -> int:
        return sum(len(b) for _, buffers in self.messages for b in buffers)


def scripted_run_agent() -> ToolCallingAgent:
    model = ScriptedModel(
        [
            {
                "content": "Thought: look",
                "tool_calls": [{"function": {"name": "final_answer", "arguments": {"answer": "done"}}}],
            },
        ]
    )
    return ToolCallingAgent(tools=[], model=model, show_widget=False, verbosity_level=0, name="looker")


def test_from_memory_holds_the_run_and_pngs(memory: AgentMemory) -> None:
    widget = AgentWidget.from_memory(memory, agent_name="analyst")
    run, pngs = memory_to_state(memory, agent_name="analyst")
    assert widget.run == run
    assert widget.images == pngs
    state = widget.get_state()
    assert state["images"] == pngs and json.loads(json.dumps(state["run"])) == run


def test_images_travel_as_buffers_not_base64(memory: AgentMemory) -> None:
    widget = AgentWidget.from_memory(memory)
    from ipywidgets.widgets.widget import _remove_buffers

    state, paths, buffers = _remove_buffers(widget.get_state())
    assert paths == [["images", 0], ["images", 1]]
    assert [bytes(b) for b in buffers] == widget.images
    assert state["images"] == [None, None]
    assert "iVBOR" not in json.dumps(state)  # no base64 PNG anywhere in the JSON part


def test_live_run_streams_deltas_and_syncs_steps() -> None:
    agent = scripted_run_agent()
    widget = AgentWidget(agent_name="looker")
    wire = Wire(widget)
    for event in agent.event_stream("Look around"):
        widget.consume(event)
    deltas = wire.custom("delta")
    assert "".join(m["text"] for m, _ in deltas) == "Thought: look"
    assert all(m["step_number"] == 1 for m, _ in deltas)
    assert [m for m, _ in wire.custom("step_start")] == [{"type": "step_start", "step_number": 1, "kind": "action"}]
    runs = [m["state"]["run"] for m, _ in wire.updates("run")]
    assert runs[0]["status"] == "running" and runs[-1]["status"] == "done"
    assert widget.run["final_answer"]["text"] == "done"
    assert widget.run["steps"] == memory_to_state(agent.memory)[0]["steps"]


def test_new_images_are_sent_once_as_a_custom_message() -> None:
    widget = AgentWidget()
    wire = Wire(widget)
    images = [Image.new("RGB", (40, 30), (i * 40, 0, 0)) for i in range(3)]
    widget.consume(RunStart(task="draw", agent_name="a"))
    for step_number, image in enumerate(images, start=1):
        widget.consume(StepStart(step_number))
        call = ToolCall("python_interpreter", "img", f"c{step_number}")
        widget.consume(call)
        widget.consume(ToolOutput(call.id, image, False, "", call, images=[image]))
        widget.consume(
            ActionStep(step_number=step_number, code_action="img", observations_images=[image], tool_calls=[call])
        )
    pushed = wire.custom("images")
    assert [m["start"] for m, _ in pushed] == [0, 1, 2]
    assert [b for _, buffers in pushed for b in buffers] == widget.images
    assert all("images" not in m["state"] for m, _ in wire.updates("run"))
    assert wire.updates("images") == []  # the list itself is never re-sent
    png_bytes = sum(len(p) for p in widget.images)
    assert wire.buffer_bytes() == png_bytes  # ratio 1.0: each PNG crosses the wire once
    assert widget.get_state()["images"] == widget.images  # a view opened later gets them all


def test_a_new_run_resets_the_images_as_state() -> None:
    widget = AgentWidget()
    widget.consume(RunStart(task="one", agent_name="a", images=[Image.new("RGB", (2, 2))]))
    wire = Wire(widget)
    widget.consume(RunStart(task="two", agent_name="a"))
    assert widget.images == [] and [m["state"]["images"] for m, _ in wire.updates("images")] == [[]]


def test_front_end_can_ask_for_missing_images(memory: AgentMemory) -> None:
    widget = AgentWidget.from_memory(memory)
    wire = Wire(widget)
    widget._handle_custom_msg({"type": "request_images", "have": 1}, [])
    [(content, buffers)] = wire.custom("images")
    assert content == {"type": "images", "start": 1} and buffers == widget.images[1:]


def test_control_messages_reach_handlers() -> None:
    widget = AgentWidget()
    seen = []
    widget.control_handlers.append(seen.append)
    widget._handle_custom_msg({"type": "control", "action": "stop"}, [])
    widget._handle_custom_msg({"type": "unknown"}, [])
    assert seen == [{"type": "control", "action": "stop"}]


def test_deltas_do_not_touch_the_run_state() -> None:
    widget = AgentWidget()
    widget.consume(RunStart(task="t", agent_name="a"))
    widget.consume(StepStart(1))
    wire = Wire(widget)
    for token in ["a", "b", "c"]:
        widget.consume(ChatMessageStreamDelta(content=token))
    assert wire.updates("run") == [] and len(wire.custom("delta")) == 3


def test_bundle_and_display_refresh(memory: AgentMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown, updated = [], []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append((obj, kw)))
    monkeypatch.setattr(IPython.display, "update_display", lambda obj, **kw: updated.append((obj, kw)))
    agent = scripted_run_agent()
    widget = AgentWidget(agent_name="looker")
    widget._ipython_display_()
    [(bundle, kw)] = shown
    assert set(bundle) == {WIDGET_VIEW_MIMETYPE, "text/html", "text/plain"}
    assert bundle[WIDGET_VIEW_MIMETYPE]["model_id"] == widget.model_id
    assert kw["raw"] is True and kw["display_id"].startswith("nbagent-")
    for event in agent.event_stream("Look"):
        widget.consume(event)
    [(final, update_kw)] = updated  # refreshed once, when the run ended
    assert update_kw["display_id"] == kw["display_id"]
    assert 'data-status="done"' in final["text/html"] and "Final answer" in final["text/html"]
    assert final["text/plain"] == "AgentWidget(looker · done · 1 step · final answer: done)"


def test_agent_shows_its_widget_by_default_in_a_notebook(monkeypatch: pytest.MonkeyPatch) -> None:
    import nbagent.notebook.display

    shown = []
    monkeypatch.setattr(nbagent.notebook.display, "in_kernel", lambda: True)
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append(obj))
    agent = scripted_run_agent()
    agent.show_widget = None
    agent.verbosity_level = 1
    agent.run("Look")
    assert shown == [agent.widget] and agent.widget.run["status"] == "done"


def test_bad_state_is_refused() -> None:
    with pytest.raises(TypeError, match="run dict"):
        AgentWidget(run={"task": "x"})
    with pytest.raises(ValueError, match="status"):
        AgentWidget(run={"steps": [], "status": "finished"})


def test_show_memory_replaces_the_images_whole(memory: AgentMemory) -> None:
    other = AgentMemory()
    other.steps = [memory.steps[3]]  # one step with a blue image
    widget = AgentWidget.from_memory(other)
    wire = Wire(widget)
    widget.show_memory(memory, status="paused")  # two images, the first one different
    [(update, buffers)] = wire.updates("images")
    assert update["state"]["images"] == [None, None] and buffers == memory_to_state(memory)[1]
    assert widget.images == memory_to_state(memory)[1] and widget.run["status"] == "paused"
    assert wire.custom("images") == []
