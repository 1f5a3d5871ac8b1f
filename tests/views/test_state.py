"""The widget's state: memory -> run dict + PNGs, and the incremental builder fed by a real event stream."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest
from PIL import Image

from nbagent import ActionStep, AgentMemory, ScriptedModel, TaskStep, ToolCallingAgent, tool
from nbagent.models.base import ChatMessageStreamDelta
from nbagent.record import ChildEvent, FinalAnswerStep, RunEnd, RunResult, RunStart, StepStart, ToolCall, ToolOutput
from nbagent.views.state import ImageStore, RunStateBuilder, memory_to_state


def pixels(png: bytes) -> bytes:
    return Image.open(io.BytesIO(png)).convert("RGB").tobytes()


@tool
def square(x: int) -> int:
    """Square a number.

    Args:
        x: the number
    """
    return x * x


def scripted_agent(**kwargs) -> ToolCallingAgent:
    model = ScriptedModel(
        [
            {"content": "I will square 3", "tool_calls": [{"function": {"name": "square", "arguments": {"x": 3}}}]},
            {"content": "Wrong tool", "tool_calls": [{"function": {"name": "cube", "arguments": {"x": 3}}}]},
            {"content": "Done", "tool_calls": [{"function": {"name": "final_answer", "arguments": {"answer": "9"}}}]},
        ]
    )
    return ToolCallingAgent(tools=[square], model=model, show_widget=False, verbosity_level=0, **kwargs)


class TestMemoryToState:
    def test_steps_in_order_with_their_kinds(self, memory: AgentMemory) -> None:
        run, _ = memory_to_state(memory, agent_name="analyst", model_id="scripted")
        assert [s["kind"] for s in run["steps"]] == ["task", "planning", "action", "action", "action", "final"]
        assert run["task"] == "Plot the **squares**"
        assert (run["agent_name"], run["model_id"], run["status"]) == ("analyst", "scripted", "done")
        assert run["final_answer"] == {"text": "1, 4, 9", "type": "str", "images": [], "outcome": "success"}
        assert json.loads(json.dumps(run)) == run  # JSON-able as it is

    def test_error_step(self, memory: AgentMemory) -> None:
        step = memory_to_state(memory)[0]["steps"][2]
        assert step["step_number"] == 1
        assert "ZeroDivisionError" in step["error"]
        assert step["code"] == "x = 1/0"
        assert step["model_code"] is None  # the model's code ran unchanged
        assert step["tool_calls"] == []  # the CodeAgent's own python_interpreter call is the code block
        assert step["token_usage"] == {"input_tokens": 100, "output_tokens": 20}
        assert step["duration"] == pytest.approx(1.5)

    def test_images_become_indexed_pngs(self, memory: AgentMemory, red_image: Image.Image) -> None:
        run, pngs = memory_to_state(memory)
        assert run["steps"][0]["images"] == [0]
        assert run["steps"][3]["images"] == [1]
        assert len(pngs) == 2 and all(p.startswith(b"\x89PNG") for p in pngs)
        assert pixels(pngs[0]) == red_image.tobytes()
        assert pixels(pngs[1])[:3] == bytes([0, 0, 255])

    def test_edited_code_keeps_both_versions(self, memory: AgentMemory) -> None:
        step = memory_to_state(memory)[0]["steps"][3]
        assert (step["code"], step["model_code"]) == ("img = plot(color='red')", "img = plot()")
        assert step["code_changes"] == [
            {
                "by": "you",
                "label": "edited by you",
                "diff": [["-", "img = plot()"], ["+", "img = plot(color='red')"]],
            }
        ]

    def test_planning_step_numbered_like_the_next_action(self, memory: AgentMemory) -> None:
        plan = memory_to_state(memory)[0]["steps"][1]
        assert (plan["step_number"], plan["plan"]) == (1, "1. compute\n2. plot")
        assert plan["token_usage"] == {"input_tokens": 10, "output_tokens": 5}

    def test_totals(self, memory: AgentMemory) -> None:
        run, _ = memory_to_state(memory)
        assert run["token_usage"] == {"input_tokens": 360, "output_tokens": 60}
        assert run["duration"] == pytest.approx(4.5)

    def test_status_from_the_memory(self, memory: AgentMemory) -> None:
        assert memory_to_state(AgentMemory())[0]["status"] == "idle"
        memory.steps = memory.steps[:3]  # ends with the error step
        assert memory_to_state(memory)[0]["status"] == "error"
        memory.steps[-1].stopped = True
        assert memory_to_state(memory)[0]["status"] == "stopped"
        assert memory_to_state(memory, status="paused")[0]["status"] == "paused"

    def test_image_final_answer(self, red_image: Image.Image) -> None:
        memory = AgentMemory()
        memory.steps = [TaskStep(task="draw"), FinalAnswerStep(output=red_image)]
        run, pngs = memory_to_state(memory)
        assert run["final_answer"]["images"] == [0] and run["final_answer"]["text"] == ""
        assert pixels(pngs[0]) == red_image.tobytes()

    def test_other_values_keep_their_type_name(self) -> None:
        memory = AgentMemory()
        memory.steps = [TaskStep(task="t"), ActionStep(step_number=1, action_output=[1, 2], is_final_answer=True)]
        assert memory_to_state(memory)[0]["final_answer"] == {
            "text": "[1, 2]",
            "type": "list",
            "images": [],
            "outcome": "success",
        }

    def test_bad_input(self) -> None:
        with pytest.raises(TypeError, match="AgentMemory"):
            memory_to_state({"steps": []})
        with pytest.raises(ValueError, match="status must be one of"):
            memory_to_state(AgentMemory(), status="finished")

    def test_memory_loaded_from_disk_shows_the_same(self, memory: AgentMemory, tmp_path) -> None:
        memory.save(tmp_path / "run.json")
        loaded = AgentMemory.load(tmp_path / "run.json")
        (run_a, pngs_a), (run_b, pngs_b) = memory_to_state(memory), memory_to_state(loaded)
        assert run_b == run_a
        assert [pixels(p) for p in pngs_b] == [pixels(p) for p in pngs_a]


class TestRunStateBuilder:
    def test_real_run_matches_the_memory(self) -> None:
        agent = scripted_agent()
        builder = RunStateBuilder(agent_name="agent", model_id="scripted")
        for event in agent.event_stream("Square 3"):
            builder.apply(event)
        from_memory, _ = memory_to_state(agent.memory, agent_name="agent", model_id="scripted")
        built = builder.run
        assert built["status"] == "done" and built["final_answer"]["text"] == "9"
        assert built["steps"] == from_memory["steps"]
        assert built["token_usage"] == from_memory["token_usage"]
        assert "cube" in built["steps"][2]["error"]  # the wrong tool call is an error step

    def test_step_shows_as_soon_as_the_action_is_known(self) -> None:
        builder = RunStateBuilder()
        builder.apply(RunStart(task="t", agent_name="a"))
        assert builder.apply(StepStart(1)).kind == "step_start"
        update = builder.apply(ChatMessageStreamDelta(content="Thought: "))
        assert (update.kind, update.step_number, update.text) == ("delta", 1, "Thought: ")
        builder.apply(ChatMessageStreamDelta(content="go"))
        assert len(builder.run["steps"]) == 1  # still streaming: only the task
        builder.apply(ToolCall("python_interpreter", "print(1)", "c1"))
        step = builder.run["steps"][1]
        assert (step["model_output"], step["code"], step["duration"]) == ("Thought: go", "print(1)", None)

    def test_start_times_for_the_widget_clock(self, monkeypatch: pytest.MonkeyPatch) -> None:
        clock = SimpleNamespace(now=100.0)
        monkeypatch.setattr("nbagent.views.state.time", SimpleNamespace(time=lambda: clock.now))
        builder = RunStateBuilder()
        assert (builder.run["started_at"], builder.run["step_started_at"]) == (None, None)
        builder.apply(RunStart(task="t", agent_name="a"))
        assert (builder.run["started_at"], builder.run["step_started_at"]) == (100.0, None)
        clock.now = 130.0
        builder.apply(StepStart(1))
        assert builder.run["step_started_at"] == 130.0  # the running step's start
        clock.now = 140.0
        builder.apply(ToolCall("python_interpreter", "print(1)", "c1"))
        assert builder.run["step_started_at"] == 130.0
        builder.apply(ActionStep(step_number=1, code_action="print(1)"))
        assert builder.run["step_started_at"] is None  # between steps
        clock.now = 175.0
        builder.apply(StepStart(2))
        assert builder.run["step_started_at"] == 175.0
        clock.now = 200.0
        builder.apply(RunEnd(RunResult(None, "stopped", [], None, None)))
        assert (builder.run["started_at"], builder.run["step_started_at"]) == (100.0, None)
        assert builder.run["duration"] == 100.0  # no timing in the result: measured from the start
        run, _ = memory_to_state(AgentMemory())
        assert (run["started_at"], run["step_started_at"]) == (None, None)  # rebuilt from memory: no clock

    def test_tool_output_images_are_not_duplicated_by_the_step(self, red_image: Image.Image) -> None:
        builder = RunStateBuilder()
        builder.apply(RunStart(task="t", agent_name="a"))
        builder.apply(StepStart(1))
        call = ToolCall("python_interpreter", "img", "c1")
        builder.apply(call)
        builder.apply(ToolOutput("c1", red_image, False, "obs", call, images=[red_image]))
        assert builder.run["steps"][1]["images"] == [0]
        builder.apply(ActionStep(step_number=1, code_action="img", observations_images=[red_image], tool_calls=[call]))
        assert builder.run["steps"][1]["images"] == [0]
        assert len(builder.images) == 1

    def test_managed_agent_runs_nest_in_the_calling_step(self) -> None:
        builder = RunStateBuilder()
        builder.apply(RunStart(task="main", agent_name="boss"))
        builder.apply(StepStart(1))
        builder.apply(ToolCall("helper", {"task": "2+2?"}, "c1"))
        for inner in [RunStart(task="2+2?", agent_name="helper"), StepStart(1), ChatMessageStreamDelta(content="x")]:
            builder.apply(ChildEvent("helper", inner))
        update = builder.apply(
            ChildEvent("helper", ActionStep(step_number=1, model_output="4", action_output="4", is_final_answer=True))
        )
        assert update.kind == "child"
        builder.apply(ChildEvent("helper", FinalAnswerStep(output="4")))
        builder.apply(ChildEvent("helper", RunEnd(RunResult("4", "success", [], None, None))))
        builder.apply(
            ActionStep(step_number=1, tool_calls=[ToolCall("helper", {"task": "2+2?"}, "c1")], observations="4")
        )
        [child] = builder.run["steps"][1]["children"]
        assert (child["agent_name"], child["task"], child["status"]) == ("helper", "2+2?", "done")
        assert [s["kind"] for s in child["steps"]] == ["task", "action", "final"]

    def test_real_managed_agent_reaches_the_widget(self) -> None:
        helper = ToolCallingAgent(
            tools=[],
            model=ScriptedModel(
                [
                    {
                        "content": "sub",
                        "tool_calls": [{"function": {"name": "final_answer", "arguments": {"answer": "4"}}}],
                    }
                ]
            ),
            name="helper",
            description="Adds numbers.",
            verbosity_level=0,
        )
        boss = ToolCallingAgent(
            tools=[],
            model=ScriptedModel(
                [
                    {"content": "ask", "tool_calls": [{"function": {"name": "helper", "arguments": {"task": "2+2?"}}}]},
                    {
                        "content": "",
                        "tool_calls": [{"function": {"name": "final_answer", "arguments": {"answer": "4"}}}],
                    },
                ]
            ),
            managed_agents=[helper],
            show_widget=True,
            verbosity_level=0,
        )
        boss.run("What is 2+2?")
        run = boss.widget.run
        [child] = run["steps"][1]["children"]
        assert child["agent_name"] == "helper" and child["final_answer"]["text"] == "4"
        assert run["status"] == "done"

    def test_continuing_a_run_keeps_earlier_steps(self) -> None:
        agent = scripted_agent()
        builder = RunStateBuilder()
        agent.model.responses += [
            {"content": "again", "tool_calls": [{"function": {"name": "final_answer", "arguments": {"answer": "81"}}}]}
        ]
        for event in agent.event_stream("Square 3"):
            builder.apply(event)
        for event in agent.event_stream("Now square 9", reset=False):
            builder.apply(event)
        kinds = [s["kind"] for s in builder.run["steps"]]
        assert kinds == ["task", "action", "action", "action", "final", "task", "action", "final"]
        assert builder.run["task"] == "Now square 9" and builder.run["final_answer"]["text"] == "81"
        assert builder.run["steps"] == memory_to_state(agent.memory)[0]["steps"]

    def test_a_new_run_resets_steps_and_images(self, red_image: Image.Image) -> None:
        builder = RunStateBuilder()
        builder.apply(RunStart(task="one", agent_name="a", images=[red_image]))
        assert len(builder.images) == 1
        generation = builder.images.generation
        builder.apply(RunStart(task="two", agent_name="a"))
        assert [s["task"] for s in builder.run["steps"]] == ["two"]
        assert len(builder.images) == 0 and builder.images.generation == generation + 1

    @pytest.mark.parametrize(
        ("state", "status"), [("stopped", "stopped"), ("error", "error"), ("max_steps_error", "max_steps")]
    )
    def test_run_end_status(self, state: str, status: str) -> None:
        builder = RunStateBuilder()
        builder.apply(RunStart(task="t", agent_name="a"))
        update = builder.apply(
            RunEnd(RunResult(None, state, [], None, None, error="model down" if state == "error" else None))
        )
        assert update.kind == "end"
        assert builder.run["status"] == status
        assert builder.run["error"] == ("model down" if state == "error" else None)

    def test_unknown_events_change_nothing(self) -> None:
        builder = RunStateBuilder()
        assert builder.apply(object()).kind == "none"
        assert builder.run["steps"] == []


def test_image_store_encodes_each_object_once(red_image: Image.Image) -> None:
    store = ImageStore()
    assert store.add(red_image) == store.add(red_image) == 0
    assert store.add(red_image.copy()) == 1
    assert store.add(b"\x89PNG raw") == 2
    store.clear()
    assert len(store) == 0 and store.add(red_image) == 0
