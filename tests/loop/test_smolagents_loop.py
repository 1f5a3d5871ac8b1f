"""The loop behaves as smolagents' for code written against smolagents: when the model streams, the logger
and monitor, interrupt(), RunResult, agent types, the methods subclasses call, constructor options."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from nbagent import (
    ActionStep,
    AgentText,
    ChatMessage,
    ChatMessageStreamDelta,
    CodeAgent,
    FinalAnswerStep,
    Model,
    ScriptedModel,
    ToolCallingAgent,
    tool,
)
from nbagent.loop.monitoring import AgentLogger, Monitor
from nbagent.models import ChatMessageToolCall, ChatMessageToolCallFunction, TokenUsage
from nbagent.record import RunResult, ToolOutput

FENCE = "`" * 3


def code(source: str) -> str:
    return f"Thought: go.\n{FENCE}python\n{source}\n{FENCE}"


class SmolagentsStyleModel(Model):
    """A Model subclass as smolagents users write them: `generate` only, with a short signature."""

    def __init__(self, replies: list[str], usage: bool = True) -> None:
        super().__init__(model_id="style")
        self.replies, self.usage, self.calls = list(replies), usage, []

    def generate(self, messages, stop_sequences=None):  # no response_format, no **kwargs
        self.calls.append(stop_sequences)
        usage = TokenUsage(10, 5) if self.usage else None
        return ChatMessage(role="assistant", content=self.replies.pop(0), token_usage=usage)


def quiet(**kwargs):
    kwargs.setdefault("verbosity_level", -1)
    kwargs.setdefault("show_widget", False)
    return kwargs


class DeltaView:
    """A view that shows the model's text as it comes (as the widget does)."""

    shows_deltas = True

    def __init__(self) -> None:
        self.deltas: list[str] = []

    def consume(self, event) -> None:
        if isinstance(event, ChatMessageStreamDelta):
            self.deltas.append(event.content or "")


def test_a_generate_only_model_runs_and_its_stream_has_no_deltas():
    model = SmolagentsStyleModel([code("final_answer(6 * 7)")])
    events = list(CodeAgent(tools=[], model=model, **quiet()).run("t", stream=True))
    assert not [e for e in events if isinstance(e, ChatMessageStreamDelta)]
    assert isinstance(events[-1], FinalAnswerStep) and events[-1].output == 42
    assert model.calls and model.calls[0]  # called by keyword, with the stop sequences


def test_stream_outputs_puts_the_models_deltas_in_the_stream_and_needs_a_streaming_model():
    agent = CodeAgent(tools=[], model=ScriptedModel([code("final_answer(1)")]), stream_outputs=True, **quiet())
    deltas = [e for e in agent.run("t", stream=True) if isinstance(e, ChatMessageStreamDelta)]
    assert len(deltas) > 3 and "final_answer(1)" in "".join(d.content or "" for d in deltas)
    message = "`stream_outputs` is set to True, but the model class implements no `generate_stream` method."
    with pytest.raises(ValueError, match=f"^{message.replace('(', '.').replace(')', '.')}$"):
        ToolCallingAgent(tools=[], model=SmolagentsStyleModel([]), stream_outputs=True)


def test_a_view_that_shows_deltas_gets_the_model_text_and_the_stream_stays_smolagents():
    for model, pieces in (
        (ScriptedModel([code("final_answer(1)")]), "many"),
        (SmolagentsStyleModel([code("final_answer(1)")]), "one"),
    ):
        agent = CodeAgent(tools=[], model=model, **quiet())
        view = DeltaView()
        agent._views_for_run = lambda view=view: [view]
        events = list(agent.run("t", stream=True))
        assert not [e for e in events if isinstance(e, ChatMessageStreamDelta)]
        assert "final_answer(1)" in "".join(view.deltas)
        assert (len(view.deltas) > 1) if pieces == "many" else (len(view.deltas) == 1)


def test_the_logger_is_the_verbosity_and_the_console_the_run_prints_to():
    console = Console(record=True, width=100, file=io.StringIO())
    agent = CodeAgent(
        tools=[], model=ScriptedModel([code("final_answer('bye')")]), logger=AgentLogger(1, console), show_widget=False
    )
    assert agent.verbosity_level == agent.logger.level == 1
    agent.run("say bye")
    text = console.export_text()
    assert "New run" in text and "Final answer: bye" in text
    default = CodeAgent(tools=[], model=ScriptedModel([]), verbosity_level=2, show_widget=False)
    assert default.logger.level == 2 and isinstance(default.monitor, Monitor)


def test_the_logger_prints_within_its_level_and_never_reads_markup():
    console = Console(record=True, width=80, file=io.StringIO())
    logger = AgentLogger(level=1, console=console)
    logger.log_task(content="a [/bold] b", subtitle={"model": "x"}, title="Run")
    logger.log_code("Code:", "x = 1")
    logger.log_markdown("**m**", title="Out")
    logger.log_rule("Step 1")
    logger.log("hidden", level=2)
    logger.log("shown", level="info")
    text = console.export_text()
    assert "a [/bold] b" in text and '"model": "x"' in text and "x = 1" in text and "Step 1" in text
    assert "shown" in text and "hidden" not in text


def test_the_monitor_counts_action_steps_tokens_per_run():
    model = SmolagentsStyleModel([code("print(1)"), code("final_answer(2)"), code("final_answer(3)")])
    agent = CodeAgent(tools=[], model=model, **quiet())
    agent.run("t")
    assert (agent.monitor.total_input_token_count, agent.monitor.total_output_token_count) == (20, 10)
    assert len(agent.monitor.step_durations) == 2
    agent.run("again")  # reset=True starts the counts over
    assert agent.monitor.get_total_token_counts().dict() == TokenUsage(10, 5).dict()


def test_token_usage_is_none_when_the_model_reports_none_and_answers_are_agent_text():
    agent = CodeAgent(tools=[], model=SmolagentsStyleModel([code("final_answer('ok')")], usage=False), **quiet())
    result = agent.run("t", return_full_result=True)
    assert result.token_usage is None and isinstance(result.output, AgentText) and result.output == "ok"


def test_run_result_takes_steps_or_the_deprecated_messages():
    result = RunResult(output=1, state="success", steps=[{"a": 1}], token_usage=None, timing=None)
    assert result.steps == [{"a": 1}]
    with pytest.warns(FutureWarning, match="deprecated"):
        assert RunResult(messages=[{"b": 2}]).steps == [{"b": 2}]
    with pytest.raises(ValueError, match="Cannot specify both"):
        RunResult(steps=[], messages=[])


@tool
def shout(text: str) -> str:
    """Shout a text.

    Args:
        text: what to shout.
    """
    return text.upper() + "!"


def test_process_tool_calls_runs_calls_and_records_them():
    agent = ToolCallingAgent(tools=[shout], model=ScriptedModel([]), **quiet())
    calls = [
        ChatMessageToolCall(id=f"c{i}", type="function", function=ChatMessageToolCallFunction("shout", {"text": w}))
        for i, w in enumerate(["a", "b"])
    ]
    step = ActionStep(step_number=1)
    events = list(agent.process_tool_calls(ChatMessage(role="assistant", content="", tool_calls=calls), step))
    outputs = [e.output for e in events if isinstance(e, ToolOutput)]
    assert outputs == ["A!", "B!"] and [c.id for c in step.tool_calls] == ["c0", "c1"]
    assert "A!" in step.observations and "B!" in step.observations
    assert list(agent.process_tool_calls(ChatMessage(role="assistant", content="", tool_calls=[]), step)) == []


def test_callbacks_hooks_and_planning_as_smolagents_subclasses_use_them():
    seen = []
    agent = CodeAgent(
        tools=[],
        model=ScriptedModel(["1. answer", code("final_answer(5)"), "2. update"]),
        planning_interval=3,
        step_callbacks={FinalAnswerStep: lambda step: seen.append(step.output)},
        **quiet(),
    )
    assert agent.run("t") == 5 and seen == [5]
    assert len(agent.step_callbacks._callbacks[ActionStep]) == 1  # the monitor's update_metrics
    plan = list(agent._generate_planning_step("t", is_first_step=False, step=2))[-1]
    assert plan.plan and plan.model_input_messages[0].role == "system"


def test_interrupt_raises_agent_interrupted_from_run():
    from nbagent.errors import AgentError

    agent = CodeAgent(
        tools=[],
        model=ScriptedModel([code("a = 1"), code("final_answer(a)")]),
        step_callbacks=[lambda step, agent: agent.interrupt()],
        **quiet(),
    )
    with pytest.raises(AgentError, match="Agent interrupted"):
        agent.run("t")
    assert agent.last_result.state == "stopped"


def test_constructor_messages_and_options_as_in_smolagents():
    with pytest.raises(ValueError, match="Each tool or managed_agent should have a unique name!"):
        CodeAgent(tools=[shout, shout], model=ScriptedModel([]), **quiet())
    agent = CodeAgent(
        tools=[],
        model=ScriptedModel([]),
        executor_type="local",
        max_print_outputs_length=5,
        executor_kwargs={"max_print_outputs_length": 1000},
        **quiet(),
    )
    assert agent.max_print_outputs_length == 5 and agent.executor_kwargs == {"max_print_outputs_length": 1000}
    with pytest.raises(AttributeError, match="read-only"):
        agent.system_prompt = "x"


def test_structured_outputs_ask_for_json_and_run_its_code():
    class JsonModel(Model):
        def generate(self, messages, stop_sequences=None, response_format=None):
            self.format = response_format
            return ChatMessage(role="assistant", content=json.dumps({"thought": "t", "code": "final_answer(9)"}))

    model = JsonModel()
    agent = CodeAgent(tools=[], model=model, use_structured_outputs_internally=True, **quiet())
    assert agent.run("t") == 9 and model.format["json_schema"]["name"] == "ThoughtAndCodeAnswer"


def test_to_dict_writes_the_model_and_managed_agents_as_smolagents_and_reads_them_back():
    helper = ToolCallingAgent(tools=[], model=ScriptedModel([]), name="helper", description="helps", **quiet())
    agent = CodeAgent(tools=[shout], model=ScriptedModel([]), managed_agents=[helper], **quiet())
    data = agent.to_dict()
    assert data["model"]["class"] == "ScriptedModel"
    assert [m["name"] for m in data["managed_agents"]] == ["helper"]
    again = CodeAgent.from_dict(data)
    assert list(again.managed_agents) == ["helper"] and "shout" in again.tools
    model_data = {k: v for k, v in data["model"].items() if k != "class"}  # smolagents' {"class", "data"} too
    assert isinstance(
        CodeAgent.from_dict({**data, "model": {"class": "ScriptedModel", "data": model_data}}).model, ScriptedModel
    )
    with pytest.raises(ValueError, match="Unknown model class 'Nope'. Supported models: .*ScriptedModel"):
        CodeAgent.from_dict({**data, "model": {"class": "Nope", "data": {}}})
