"""Memory: inspection, messages, replay, and the lossless save/load round trip (property-tested)."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from rich.console import Console

from nbagent import ActionStep, AgentMemory, FinalAnswerStep, PlanningStep, TaskStep, Timing, ToolCall
from nbagent.errors import AgentExecutionError, AgentMaxStepsError
from nbagent.models.base import ChatMessage, TokenUsage
from nbagent.record.persist import ReprValue
from nbagent.views.console import replay_memory


def sample_memory() -> AgentMemory:
    image = Image.new("RGB", (4, 3), (200, 10, 30))
    memory = AgentMemory("You are a helpful agent.")
    memory.steps = [
        TaskStep(task="Plot the data", task_images=[image]),
        PlanningStep(
            model_input_messages=[ChatMessage(role="user", content=[{"type": "text", "text": "plan"}])],
            model_output_message=ChatMessage(role="assistant", content="1. look 2. plot"),
            plan="1. look 2. plot",
            timing=Timing(1.0, 2.0),
            token_usage=TokenUsage(10, 5),
        ),
        ActionStep(
            step_number=1,
            timing=Timing(2.0, 3.5),
            model_input_messages=[
                ChatMessage(role="user", content=[{"type": "text", "text": "go"}, {"type": "image", "image": image}])
            ],
            model_output="Thought: plot\n```python\nprint(1)\n```",
            model_output_message=ChatMessage(role="assistant", content="Thought: plot", token_usage=TokenUsage(7, 3)),
            code_action="print(1)",
            model_code_action="print(0)",
            edited_code_action="print(1)",
            warnings=["FutureWarning: 'M' is deprecated, use 'ME' (line 1)"],
            tool_calls=[ToolCall(name="python_interpreter", arguments="print(1)", id="call_1")],
            observations="Execution logs:\n1\n",
            observations_images=[image, Image.new("L", (2, 2), 7)],
            error=AgentExecutionError("Code execution failed at line 1"),
            action_output=(1, "two", [3.0]),
            token_usage=TokenUsage(7, 3),
        ),
        ActionStep(
            step_number=2, error=AgentMaxStepsError("Reached max steps."), action_output="done", is_final_answer=True
        ),
        FinalAnswerStep(output={"answer": 42, "$weird": None}),
    ]
    return memory


def test_save_load_round_trip_is_lossless(tmp_path):
    memory = sample_memory()
    path = memory.save(tmp_path / "run.json")
    loaded = AgentMemory.load(path)
    assert loaded == memory
    step = loaded.steps[2]
    assert isinstance(step.error, AgentExecutionError) and step.error.message == "Code execution failed at line 1"
    assert step.action_output == (1, "two", [3.0])
    assert step.observations_images[0].tobytes() == memory.steps[2].observations_images[0].tobytes()
    assert step.observations_images[1].mode == "L"
    assert step.model_input_messages[0].content[1]["image"].size == (4, 3)
    assert loaded.steps[-1].output == {"answer": 42, "$weird": None}
    assert len(list((tmp_path / "run_images").iterdir())) == 2  # the repeated image is stored once
    assert "base64" not in path.read_text()


def test_non_data_outputs_are_kept_as_marked_repr(tmp_path):
    memory = AgentMemory("s")
    memory.steps = [FinalAnswerStep(output=object)]
    loaded = AgentMemory.load(memory.save(tmp_path / "m.json"))
    assert isinstance(loaded.steps[0].output, ReprValue) and "object" in loaded.steps[0].output


def test_load_gives_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="No saved memory"):
        AgentMemory.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="invalid JSON"):
        AgentMemory.load(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match="not a saved agent memory"):
        AgentMemory.load(other)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.dictionaries(st.text(string.ascii_letters + "$_", max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
images = st.builds(
    lambda w, h, mode, color: Image.new(mode, (w, h), color if mode != "L" else color[0]),
    st.integers(1, 5),
    st.integers(1, 5),
    st.sampled_from(["RGB", "RGBA", "L"]),
    st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)),
)


@st.composite
def action_steps(draw):
    return ActionStep(
        step_number=draw(st.integers(1, 50)),
        timing=Timing(draw(st.floats(0, 1e9)), draw(st.none() | st.floats(0, 1e9))),
        model_output=draw(st.none() | st.text(max_size=40)),
        code_action=draw(st.none() | st.text(max_size=40)),
        observations=draw(st.none() | st.text(max_size=40)),
        observations_images=draw(st.none() | st.lists(images, max_size=2)),
        action_output=draw(json_values | images),
        error=draw(st.none() | st.builds(AgentExecutionError, st.text(max_size=20))),
        token_usage=draw(st.none() | st.builds(TokenUsage, st.integers(0, 10**6), st.integers(0, 10**6))),
        is_final_answer=draw(st.booleans()),
        stopped=draw(st.booleans()),
        tool_calls=draw(
            st.none() | st.lists(st.builds(ToolCall, st.text(max_size=8), json_values, st.text(max_size=8)), max_size=2)
        ),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        action_steps() | st.builds(TaskStep, st.text(max_size=30)) | st.builds(FinalAnswerStep, json_values), max_size=4
    ),
    prompt=st.text(max_size=30),
)
def test_round_trip_property(tmp_path, steps, prompt):
    memory = AgentMemory(prompt)
    memory.steps = steps
    loaded = AgentMemory.load(memory.save(tmp_path / "p.json"))
    assert loaded == memory
    assert [type(s) for s in loaded.steps] == [type(s) for s in steps]


def test_inspection_and_messages():
    memory = sample_memory()
    full = memory.get_full_steps()
    succinct = memory.get_succinct_steps()
    assert "model_input_messages" in full[2] and "model_input_messages" not in succinct[2]
    assert succinct[2]["code_action"] == "print(1)" and succinct[2]["observations_images"] == ["<image>", "<image>"]
    json.dumps(succinct)  # JSON-able
    messages = memory.write_memory_to_messages()
    assert messages[0].role.value == "system"
    texts = [m.text for m in messages]
    assert any("New task:\nPlot the data" in t for t in texts)
    assert any("Code execution failed" in t for t in texts)
    assert any("was edited before it ran" in t and "print(1)" in t for t in texts)  # the model sees the code that ran
    summary = memory.write_memory_to_messages(summary_mode=True)
    assert summary[0].role.value != "system" and not any("1. look" in m.text for m in summary)


def test_replay_shows_code_observations_errors_images_tokens_and_time():
    console = Console(record=True, width=120)
    replay_memory(sample_memory(), console=console)
    text = console.export_text()
    for expected in (
        "Plot the data",
        "print(1)",
        "Execution logs",
        "Code execution failed",
        "[image 1: 4×3",
        "Input tokens: 7",
        "Duration 1.50 s",
        "Final answer",
        "Executing this code (edited by you):",
        "- print(0)\n+ print(1)",
        "1 warning (not shown to the model)\n  FutureWarning: 'M' is deprecated",
    ):
        assert expected in text, expected


def test_replay_of_a_hand_made_step_without_timing_through_a_logger():
    from nbagent.monitoring import AgentLogger

    logger = AgentLogger(console=Console(record=True, width=80))
    memory = AgentMemory(system_prompt="test")
    memory.steps.append(ActionStep(step_number=1, timing=0, model_output="hello"))  # smolagents' tests do this
    memory.replay(logger, detailed=True)
    text = logger.console.export_text()
    assert "hello" in text and "[Step 1]" in text and "Duration" not in text


def test_seed_memory_inspection_example_runs(capsys):
    memory = sample_memory()
    for step in memory.steps:
        if isinstance(step, ActionStep):
            if step.error is not None:
                print(f"\nStep {step.step_number} got this error:\n{step.error}\n")
            else:
                print(f"\nStep {step.step_number} got these observations:\n{step.observations}\n")
    assert "Step 1 got this error:\nCode execution failed" in capsys.readouterr().out
