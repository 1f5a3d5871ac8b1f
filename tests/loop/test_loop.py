"""The ReAct loop with a ScriptedModel: steps, errors, max steps, streaming, continuation."""

from __future__ import annotations

import pytest

from nbagent import (
    ActionOutput,
    ActionStep,
    AgentExecutionError,
    AgentGenerationError,
    AgentMaxStepsError,
    AgentParsingError,
    CodeAgent,
    FinalAnswerStep,
    RunEnd,
    RunStart,
    ScriptedModel,
    StepStart,
    TaskStep,
    ToolCall,
    ToolOutput,
    tool,
)
from nbagent.errors import AgentError
from nbagent.models.base import ChatMessageStreamDelta, ModelError


def code(body: str, thought: str = "I will run code.") -> str:
    return f"Thought: {thought}\n```python\n{body}\n```"


def make_agent(responses, **kwargs) -> CodeAgent:
    kwargs.setdefault("verbosity_level", -1)
    kwargs.setdefault("show_widget", False)
    return CodeAgent(tools=kwargs.pop("tools", []), model=ScriptedModel(responses), **kwargs)


def test_two_steps_then_final_answer():
    agent = make_agent([code("x = 6 * 7\nprint('x is', x)"), code("final_answer(x)")])
    assert agent.run("Compute 6*7") == 42
    steps = agent.memory.steps
    assert isinstance(steps[0], TaskStep) and steps[0].task == "Compute 6*7"
    actions = [s for s in steps if isinstance(s, ActionStep)]
    assert [s.step_number for s in actions] == [1, 2]
    assert "x is 42" in actions[0].observations
    assert actions[0].code_action == "x = 6 * 7\nprint('x is', x)"
    assert actions[1].is_final_answer and actions[1].action_output == 42
    assert actions[0].token_usage.output_tokens > 0 and actions[0].timing.duration >= 0


def test_observation_is_fed_back_to_the_model():
    model = ScriptedModel([code("print('the secret is 17')"), code("final_answer(17)")])
    agent = CodeAgent(tools=[], model=model, verbosity_level=-1, show_widget=False)
    agent.run("find the secret")
    second_call = model.calls[1]
    assert any("the secret is 17" in m.text for m in second_call)


def test_unparsable_output_is_recorded_and_fed_back():
    model = ScriptedModel(["I think the answer is 4.", code("final_answer(4)")])
    agent = CodeAgent(tools=[], model=model, verbosity_level=-1, show_widget=False)
    assert agent.run("2+2?") == 4
    first = agent.memory.action_steps()[0]
    assert isinstance(first.error, AgentParsingError)
    assert "no code block" in str(first.error)
    assert any("no code block" in m.text for m in model.calls[1])


def test_code_error_is_recorded_with_line_and_the_run_goes_on():
    agent = make_agent([code("y = 1\nz = y / 0"), code("final_answer('recovered')")])
    assert agent.run("divide") == "recovered"
    error = agent.memory.action_steps()[0].error
    assert isinstance(error, AgentExecutionError)
    assert "ZeroDivisionError" in str(error) and "z = y / 0" in str(error)


def test_tool_raising_is_reported_with_the_tool_name():
    @tool
    def fetch_price(item: str) -> float:
        """Look up the price of an item.

        Args:
            item: the item's name
        """
        raise ConnectionError("price service down")

    agent = make_agent([code("fetch_price('apple')"), code("final_answer('gave up')")], tools=[fetch_price])
    assert agent.run("price of apple") == "gave up"
    message = str(agent.memory.action_steps()[0].error)
    assert "fetch_price" in message and "price service down" in message


def test_model_exception_ends_the_run_with_a_clear_error_and_memory_intact():
    def failing(messages, **kwargs):
        if len(model.calls) == 2:
            raise ModelError("HTTP 503 from the provider: overloaded")
        return code("print('step one done')")

    model = ScriptedModel(failing)
    agent = CodeAgent(tools=[], model=model, verbosity_level=-1, show_widget=False)
    with pytest.raises(AgentGenerationError, match="overloaded"):
        agent.run("two steps")
    steps = agent.memory.action_steps()
    assert len(steps) == 2
    assert "step one done" in steps[0].observations
    assert isinstance(steps[1].error, AgentGenerationError)
    assert agent.last_result.state == "error"


def test_max_steps_gives_a_final_answer_from_memory():
    model = ScriptedModel([code("a = 1"), code("b = 2"), "The answer is 3."])
    agent = CodeAgent(tools=[], model=model, verbosity_level=-1, show_widget=False, max_steps=2)
    result = agent.run("never finishes", return_full_result=True)
    assert result.state == "max_steps_error"
    assert result.output == "The answer is 3."
    last = agent.memory.action_steps()[-1]
    assert isinstance(last.error, AgentMaxStepsError) and last.action_output == "The answer is 3."
    assert len(agent.memory.action_steps()) == 3


def test_run_max_steps_argument_overrides_and_is_validated():
    agent = make_agent([code("a = 1"), "final text"], max_steps=20)
    assert agent.run("t", max_steps=1) == "final text"
    with pytest.raises(ValueError, match="max_steps"):
        agent.run("t", max_steps=0)
    with pytest.raises(ValueError, match="non-empty"):
        agent.run("   ")


def test_stream_yields_typed_events_in_order():
    agent = make_agent([code("print('hi')"), code("final_answer('done')")], stream_outputs=True)
    events = list(agent.event_stream("stream it"))
    kinds = [type(e).__name__ for e in events]
    assert isinstance(events[0], RunStart) and isinstance(events[-1], RunEnd)
    assert isinstance(events[-2], FinalAnswerStep) and events[-2].output == "done"
    first_step = kinds[kinds.index("StepStart") : kinds.index("ActionStep") + 1]
    assert first_step[0] == "StepStart" and "ChatMessageStreamDelta" in first_step
    order = [k for k in first_step if k != "ChatMessageStreamDelta"]
    assert order == ["StepStart", "ToolCall", "ToolOutput", "ActionOutput", "ActionStep"]
    deltas = "".join(e.content or "" for e in events if isinstance(e, ChatMessageStreamDelta))
    assert "print('hi')" in deltas
    tool_outputs = [e for e in events if isinstance(e, ToolOutput)]
    assert "hi" in tool_outputs[0].logs
    assert [e.is_final_answer for e in events if isinstance(e, ActionOutput)] == [False, True]
    assert all(isinstance(e.step_number, int) for e in events if isinstance(e, StepStart))
    assert isinstance([e for e in events if isinstance(e, ToolCall)][0].arguments, str)


def test_run_stream_yields_smolagents_kinds_with_the_final_answer_last():
    agent = make_agent([code("print('hi')"), code("final_answer('done')")], stream_outputs=True)
    events = list(agent.run("stream it", stream=True))
    smolagents_kinds = {
        "ChatMessageStreamDelta",
        "ToolCall",
        "ToolOutput",
        "ActionOutput",
        "ActionStep",
        "FinalAnswerStep",
    }
    assert {type(e).__name__ for e in events} == smolagents_kinds
    assert isinstance(events[-1], FinalAnswerStep) and events[-1].output == "done"  # "the last event is the answer"
    per_step = ["ToolCall", "ToolOutput", "ActionOutput", "ActionStep"]
    kinds = [type(e).__name__ for e in events if not isinstance(e, ChatMessageStreamDelta)]
    assert kinds == per_step * 2 + ["FinalAnswerStep"]


def test_leaving_a_run_stream_early_ends_the_run():
    agent = make_agent([code("print('hi')"), code("final_answer('done')")])
    stream = agent.run("stream it", stream=True)
    next(stream)
    assert agent.session.active
    stream.close()
    assert not agent.session.active
    assert agent.run("again") == "done"  # the next run starts cleanly


def test_reset_false_continues_the_conversation_and_numbering():
    model = ScriptedModel([code("final_answer(1)"), code("final_answer(2)"), code("final_answer(3)")])
    agent = CodeAgent(tools=[], model=model, verbosity_level=-1, show_widget=False)
    agent.run("first")
    agent.run("second", reset=False)
    tasks = [s.task for s in agent.memory.steps if isinstance(s, TaskStep)]
    assert tasks == ["first", "second"]
    assert [s.step_number for s in agent.memory.action_steps()] == [1, 2]
    assert any("first" in m.text for m in model.calls[1])
    agent.run("third")  # reset=True forgets
    assert [s.task for s in agent.memory.steps if isinstance(s, TaskStep)] == ["third"]


def test_additional_args_are_variables_and_described():
    model = ScriptedModel([code("final_answer(len(rows))")])
    agent = CodeAgent(tools=[], model=model, verbosity_level=-1, show_widget=False)
    assert agent.run("count rows", additional_args={"rows": [1, 2, 3]}) == 3
    task_text = agent.memory.steps[0].task
    assert "rows" in task_text and "list" in task_text


def test_full_result_carries_tokens_timing_and_steps():
    agent = make_agent([code("final_answer('ok')")], return_full_result=True)
    result = agent.run("go")
    assert result.output == "ok" and result.state == "success"
    assert result.token_usage.total_tokens > 0
    assert result.timing.duration is not None and result.timing.duration >= 0
    assert result.steps[0]["task"] == "go"


def test_interrupt_from_a_callback_raises_agent_interrupted_after_the_step():
    def stop_after_first(step, agent):
        agent.interrupt()

    agent = make_agent([code("a = 1"), code("final_answer(2)")], step_callbacks=[stop_after_first])
    with pytest.raises(AgentError, match=r"^Agent interrupted\.$"):  # smolagents' interrupt()
        agent.run("t", return_full_result=True)
    result = agent.last_result
    assert result.state == "stopped" and result.output is None and result.error == "Agent interrupted."
    assert len(agent.memory.action_steps()) == 1
    assert agent.run("again") == 2  # the next run is not interrupted


def test_stop_from_another_thread_cancels_running_code():
    import time

    from control_helpers import stop_when

    agent = make_agent([code("import time\ntime.sleep(30)")])
    stop_when(agent, lambda: len(agent.model.calls) == 1, delay=0.5)
    started = time.time()
    result = agent.run("sleep", return_full_result=True)
    assert time.time() - started < 5
    assert result.state == "stopped"
    step = agent.memory.action_steps()[-1]
    assert step.stopped and "Stopped" in str(step.error)


def test_constructor_rejects_bad_options():
    with pytest.raises(ValueError, match="max_steps"):
        make_agent([], max_steps=0)
    with pytest.raises(TypeError, match="unexpected arguments: bogus"):
        make_agent([], bogus=1)
    with pytest.raises(TypeError, match="nbagent Tool"):
        make_agent([], tools=[lambda x: x])
    with pytest.raises(ValueError, match="executor_type"):
        make_agent([], executor_type="docker")


def test_code_end_stop_sequence_is_used_and_the_fence_put_back():
    model = ScriptedModel([code("final_answer(3)") + "\nObservation: I made this up"])
    agent = CodeAgent(tools=[], model=model, verbosity_level=-1, show_widget=False)
    assert agent.run("t") == 3
    step = agent.memory.action_steps()[0]
    assert step.model_output.endswith("final_answer(3)\n```") and "made this up" not in step.model_output


def test_observation_omits_a_none_result_after_printed_logs():
    agent = make_agent([code("print('four')"), code("x = None\nx"), code("final_answer(0)")])
    agent.run("t")
    first, second = agent.memory.action_steps()[:2]
    assert "four" in first.observations and "Last output" not in first.observations
    assert second.observations.endswith("Last output from code snippet:\nNone")
