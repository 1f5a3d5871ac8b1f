"""Callbacks, planning, final-answer checks, managed agents, step-by-step, the tool-calling agent."""

from __future__ import annotations

import pytest
from PIL import Image

from nbagent import (
    ActionStep,
    AgentToolCallError,
    AgentToolExecutionError,
    ChildEvent,
    CodeAgent,
    PlanningStep,
    ScriptedModel,
    TaskStep,
    ToolCallingAgent,
    tool,
)
from nbagent.models.base import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


def quiet(cls, responses, **kwargs):
    return cls(
        tools=kwargs.pop("tools", []), model=ScriptedModel(responses), verbosity_level=-1, show_widget=False, **kwargs
    )


def call(name: str, arguments, call_id: str = "c1") -> ChatMessage:
    return ChatMessage(
        role="assistant",
        content="",
        tool_calls=[
            ChatMessageToolCall(function=ChatMessageToolCallFunction(name=name, arguments=arguments), id=call_id)
        ],
    )


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first number
        b: second number
    """
    return a + b


def test_list_callbacks_get_action_steps_and_the_agent():
    seen = []

    def on_step(step, agent):
        seen.append((type(step).__name__, step.step_number, agent.name))

    agent = quiet(CodeAgent, [code("x = 1"), code("final_answer(x)")], step_callbacks=[on_step], name="bob")
    agent.run("t")
    assert seen == [("ActionStep", 1, "bob"), ("ActionStep", 2, "bob")]


def test_dict_callbacks_by_step_class_and_one_argument_callbacks():
    plans, actions = [], []
    agent = quiet(
        CodeAgent,
        ["1. do it", code("final_answer(3)")],
        planning_interval=5,
        step_callbacks={PlanningStep: plans.append, ActionStep: [lambda step, agent=None: actions.append(step)]},
    )
    agent.run("t")
    assert len(plans) == 1 and "1. do it" in plans[0].plan
    assert len(actions) == 1


def test_seed_callback_removes_old_images():
    def update_screenshot(memory_step: ActionStep, agent: CodeAgent) -> None:
        latest_step = memory_step.step_number
        for previous in agent.memory.steps:
            if isinstance(previous, ActionStep) and previous.step_number <= latest_step - 2:
                previous.observations_images = None
        memory_step.observations_images = [Image.new("RGB", (2, 2))]

    agent = quiet(
        CodeAgent, [code("a = 1"), code("b = 2"), code("final_answer(3)")], step_callbacks=[update_screenshot]
    )
    agent.run("browse")
    images = [s.observations_images for s in agent.memory.action_steps()]
    assert images[0] is None and images[1] is not None and images[2] is not None


def test_planning_initial_then_updates():
    model = ScriptedModel(["1. first plan", code("a = 1"), code("b = 2"), "2. updated plan", code("final_answer(5)")])
    agent = CodeAgent(tools=[], model=model, planning_interval=2, verbosity_level=-1, show_widget=False)
    assert agent.run("plan it") == 5
    plans = [s for s in agent.memory.steps if isinstance(s, PlanningStep)]
    assert len(plans) == 2
    assert "first plan" in plans[0].plan and "updated plan" in plans[1].plan
    assert "I still need to solve the task" in plans[1].plan
    assert model.calls[3][0].role.value == "system"  # update uses the pre-messages, then the memory summary
    assert any("first plan" in m.text for m in model.calls[1])  # the plan is shown to the acting model


def test_failing_final_answer_check_is_recorded_and_the_run_goes_on():
    def must_be_positive(answer, memory):
        return answer > 0

    def raises(answer, memory, agent):
        assert answer != 99, "99 is not allowed"
        return True

    agent = quiet(
        CodeAgent,
        [code("final_answer(-1)"), code("final_answer(99)"), code("final_answer(7)")],
        final_answer_checks=[must_be_positive, raises],
    )
    assert agent.run("t") == 7
    errors = [str(s.error) for s in agent.memory.action_steps()]
    assert "must_be_positive failed" in errors[0]
    assert "99 is not allowed" in errors[1]
    assert agent.memory.action_steps()[2].error is None


def test_managed_agent_is_called_from_code_with_a_report_and_nested_events():
    helper = quiet(
        CodeAgent,
        [code("final_answer('Paris')")],
        name="geo",
        description="Answers geography questions.",
        provide_run_summary=True,
    )
    manager = quiet(
        CodeAgent,
        [code("report = geo(task='capital of France?')\nprint(report)"), code("final_answer('done')")],
        managed_agents=[helper],
    )
    events = list(manager.event_stream("ask geo"))
    observations = manager.memory.action_steps()[0].observations
    assert "Paris" in observations and "geo" in observations
    assert "<summary_of_work>" in observations
    children = [e for e in events if isinstance(e, ChildEvent)]
    assert children and all(c.agent_name == "geo" for c in children)
    assert "geo" in manager.system_prompt and "Answers geography questions." in manager.system_prompt


def test_managed_agent_needs_name_and_description():
    nameless = quiet(CodeAgent, [])
    with pytest.raises(ValueError, match="needs a name"):
        quiet(CodeAgent, [], managed_agents=[nameless])
    undescribed = quiet(CodeAgent, [], name="helper")
    with pytest.raises(ValueError, match="description"):
        quiet(CodeAgent, [], managed_agents=[undescribed])


def test_seed_step_by_step_recipe():
    agent = quiet(CodeAgent, [code("a = 20"), code("final_answer(6765)")])
    agent.python_executor.send_tools({**agent.tools})
    assert "final_answer" in str(agent.memory.system_prompt)
    task = "What is the 20th Fibonacci number?"
    agent.memory.steps.append(TaskStep(task=task, task_images=[]))
    final_answer = None
    step_number = 1
    while final_answer is None and step_number <= 10:
        memory_step = ActionStep(step_number=step_number, observations_images=[])
        final_answer = agent.step(memory_step)
        agent.memory.steps.append(memory_step)
        step_number += 1
    assert final_answer == 6765 and step_number == 3
    assert len(agent.memory.action_steps()) == 2


def test_step_returns_none_and_records_errors():
    agent = quiet(CodeAgent, ["no code here"])
    agent.memory.steps.append(TaskStep(task="t"))
    step = ActionStep(step_number=1)
    assert agent.step(step) is None
    assert "no code block" in str(step.error)


def test_toolcalling_agent_calls_tools_then_final_answer():
    model = ScriptedModel([call("add", {"a": 2, "b": 3}), call("final_answer", {"answer": "5"})])
    agent = ToolCallingAgent(tools=[add], model=model, verbosity_level=-1, show_widget=False)
    assert agent.run("2+3") == "5"
    first = agent.memory.action_steps()[0]
    assert first.tool_calls[0].name == "add" and "5" in first.observations


def test_toolcalling_agent_reads_json_from_text_and_runs_parallel_calls():
    two_calls = ChatMessage(
        role="assistant",
        content="",
        tool_calls=[
            ChatMessageToolCall(function=ChatMessageToolCallFunction(name="add", arguments='{"a": 1, "b": 1}'), id="x"),
            ChatMessageToolCall(function=ChatMessageToolCallFunction(name="add", arguments={"a": 2, "b": 2}), id="y"),
        ],
    )
    model = ScriptedModel([two_calls, 'Action: {"name": "final_answer", "arguments": {"answer": "ok"}}'])
    agent = ToolCallingAgent(tools=[add], model=model, verbosity_level=-1, show_widget=False, max_tool_threads=2)
    assert agent.run("t") == "ok"
    observations = agent.memory.action_steps()[0].observations
    assert "2" in observations and "4" in observations


def test_toolcalling_agent_errors_name_the_tool():
    @tool
    def broken(x: str) -> str:
        """Always fails.

        Args:
            x: anything
        """
        raise RuntimeError("disk full")

    model = ScriptedModel(
        [call("nope", {}), call("add", {"a": 1}), call("broken", {"x": "y"}), call("final_answer", {"answer": "end"})]
    )
    agent = ToolCallingAgent(tools=[add, broken], model=model, verbosity_level=-1, show_widget=False)
    assert agent.run("t") == "end"
    errors = [s.error for s in agent.memory.action_steps()[:3]]
    assert isinstance(errors[0], AgentToolExecutionError) and "nope" in str(errors[0]) and "add" in str(errors[0])
    assert isinstance(errors[1], AgentToolCallError) and "'add'" in str(errors[1])
    assert (
        isinstance(errors[2], AgentToolExecutionError) and "broken" in str(errors[2]) and "disk full" in str(errors[2])
    )


def test_toolcalling_agent_unparsable_answer_is_fed_back():
    model = ScriptedModel(["I would like to add numbers", call("final_answer", {"answer": "x"})])
    agent = ToolCallingAgent(tools=[add], model=model, verbosity_level=-1, show_widget=False)
    assert agent.run("t") == "x"
    assert "tool call" in str(agent.memory.action_steps()[0].error)


def test_scripted_callable_answers_keep_their_tool_calls_when_streamed():
    answers = iter([call("add", {"a": 20, "b": 22}), call("final_answer", {"answer": "42"})])
    model = ScriptedModel(lambda messages, **kwargs: next(answers))
    agent = ToolCallingAgent(tools=[add], model=model, verbosity_level=-1, show_widget=False)
    assert agent.run("20+22") == "42"
    assert "42" in agent.memory.action_steps()[0].observations


def test_a_script_that_runs_out_says_what_the_run_had_come_to():
    model = ScriptedModel([call("add", {"a": 1, "b": "two"})])
    agent = ToolCallingAgent(tools=[add], model=model, verbosity_level=-1, show_widget=False)
    with pytest.raises(
        Exception, match=r"(?s)call 2 but only 1 scripted\. The last message it was sent ends: .*unsupported operand"
    ):
        agent.run("1+2")
