"""A final answer that is still a handle on an object in the worker is refused for every model, with the call that
makes it a value, and never becomes the run's answer (nor `-o`'s value)."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.code_step import AnswerRefused
from nbagent.sandbox import is_worker_handle

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux worker")

SPARSE = "import pandas as pd\nkinds = pd.arrays.SparseArray([0, 0, 1, 2])\nfinal_answer(kinds)"  # no wire form
AS_LIST = "final_answer(kinds.tolist())"


def _agent(*bodies: str, max_steps: int = 3) -> tuple[CodeAgent, ScriptedModel]:
    model = ScriptedModel([f"Thought: go.\n```python\n{body}\n```" for body in bodies])
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"frame": pd.DataFrame({"a": [1, 2]})},
        executor_type="isolated",
        additional_authorized_imports=["pandas", "pandas.*"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=max_steps,
    )
    return agent, model


def _run(agent: CodeAgent, task: str) -> object:
    try:
        return agent.run(task)
    finally:
        agent.python_executor.close()


def test_a_handle_is_refused_with_the_call_to_write_and_the_value_is_taken():
    agent, model = _agent(SPARSE, AS_LIST)
    answer = _run(agent, "Which kinds are in `frame`?")
    first, second = [step for step in agent.memory.steps if isinstance(step, ActionStep)]
    assert isinstance(first.error, AnswerRefused) and not first.is_final_answer
    assert ".tolist()" in str(first.error) and "stays in the worker" in str(first.error)
    assert ".tolist()" in "\n".join(message.text for message in model.calls[1])  # the model read why
    assert answer == [0, 0, 1, 2] and not is_worker_handle(answer)


def test_a_handle_sent_again_and_again_never_becomes_the_answer():
    agent, model = _agent(SPARSE, SPARSE, SPARSE, max_steps=3)
    model.responses.append("No answer.")  # the closing reply after max steps
    try:
        result = agent.run("Which kinds are in `frame`?", return_full_result=True)
    finally:
        agent.python_executor.close()
    ran = [step for step in agent.memory.steps if isinstance(step, ActionStep) and step.code_action]
    assert len(ran) == 3 and all(isinstance(step.error, AnswerRefused) for step in ran)  # past the 2-refusal cap
    assert not any(step.is_final_answer for step in ran)
    assert result.state == "max_steps_error" and not is_worker_handle(result.output)
