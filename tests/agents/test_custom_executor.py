"""`PythonExecutor`: the base class of both executors, and a person's own subclass given as `CodeAgent(executor=...)`
(smolagents' option): one written from scratch and one that wraps the isolated executor."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from contextlib import redirect_stdout
from typing import Any

import pytest

import nbagent
from nbagent import (
    CodeAgent,
    CodeOutput,
    ExecutionError,
    IsolatedPythonExecutor,
    LocalPythonExecutor,
    PythonExecutor,
    ScriptedModel,
    tool,
)


@tool
def square(x: int) -> int:
    """Square a number.

    Args:
        x: the number
    """
    return x * x


def code(body: str) -> str:
    return f"Thought: compute.\n```python\n{body}\n```"


class _Answered(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class PlainExecutor(PythonExecutor):
    """Runs the code with exec() in its own dict: what a person writes to run code somewhere else."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {}
        self.codes: list[str] = []

    def send_tools(self, tools: Mapping[str, Callable]) -> None:
        def final_answer(answer: Any) -> None:
            raise _Answered(answer)

        self.namespace.update(tools)
        self.namespace["final_answer"] = final_answer

    def send_variables(self, variables: Mapping[str, Any]) -> None:
        self.namespace.update(variables)

    def __call__(self, code_action: str) -> CodeOutput:
        self.codes.append(code_action)
        printed = io.StringIO()
        try:
            with redirect_stdout(printed):
                exec(code_action, self.namespace)
        except _Answered as answered:
            return CodeOutput(answered.value, printed.getvalue(), True)
        except Exception as failure:
            raise ExecutionError(f"{type(failure).__name__}: {failure}", logs=printed.getvalue()) from None
        return CodeOutput(None, printed.getvalue(), False)


class ReviewedExecutor(PythonExecutor):
    """Wraps the isolated executor and refuses code that mentions a word: a person's policy on top of nbagent's."""

    def __init__(self, banned: str) -> None:
        self.inner = IsolatedPythonExecutor(timeout_seconds=30)
        self.banned = banned
        self.authorized_imports = self.inner.authorized_imports
        self.stops = 0

    def send_tools(self, tools: Mapping[str, Callable]) -> None:
        self.inner.send_tools(tools)

    def send_variables(self, variables: Mapping[str, Any]) -> None:
        self.inner.send_variables(variables)

    def request_stop(self) -> None:
        self.stops += 1
        self.inner.request_stop()

    def __call__(self, code_action: str) -> CodeOutput:
        if self.banned in code_action:
            raise ExecutionError(f"the reviewer refused code that mentions {self.banned!r}")
        return self.inner(code_action)


def test_both_executors_are_python_executors() -> None:
    assert issubclass(LocalPythonExecutor, PythonExecutor) and issubclass(IsolatedPythonExecutor, PythonExecutor)
    assert nbagent.PythonExecutor is nbagent.sandbox.PythonExecutor
    from nbagent.local_python_executor import PythonExecutor as shimmed  # smolagents' module path

    assert shimmed is PythonExecutor


def test_a_subclass_must_run_code() -> None:
    class Incomplete(PythonExecutor):
        def send_tools(self, tools: Mapping[str, Callable]) -> None: ...

        def send_variables(self, variables: Mapping[str, Any]) -> None: ...

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()


def test_a_person_s_own_executor_runs_the_agents_code() -> None:
    executor = PlainExecutor()
    steps = [code("n = square(7)\nprint('n is', n)"), code("oops = undefined_name"), code("final_answer(n + 1)")]
    agent = CodeAgent(tools=[square], model=ScriptedModel(steps), executor=executor, verbosity_level=-1)
    assert agent.python_executor is executor and agent.executor_type == "isolated"  # what a saved agent would use
    assert agent.run("square 7, add 1") == 50
    assert executor.codes == ["n = square(7)\nprint('n is', n)", "oops = undefined_name", "final_answer(n + 1)"]
    first, failed, _ = agent.memory.action_steps()
    assert "n is 49" in first.observations
    assert "NameError: name 'undefined_name' is not defined" in str(failed.error)
    assert "math" in executor.authorized_imports  # the base modules, shown in the system prompt
    assert "math" in agent.memory.system_prompt.system_prompt


def test_a_wrapping_executor_keeps_the_boundary_and_adds_its_rule() -> None:
    executor = ReviewedExecutor("secret")
    steps = [code("print('secret')"), code("import math\nfinal_answer(square(math.isqrt(16)) == 16)")]
    agent = CodeAgent(tools=[square], model=ScriptedModel(steps), executor=executor, verbosity_level=-1)
    try:
        assert agent.run("go") is True
        refused, _ = agent.memory.action_steps()
        assert "the reviewer refused code that mentions 'secret'" in str(refused.error)
        agent.stop()  # Stop reaches the executor's request_stop
        assert executor.stops >= 1
    finally:
        executor.inner.close()


def test_anything_else_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="executor= takes a PythonExecutor .* got function"):
        CodeAgent(tools=[], model=ScriptedModel([]), executor=lambda code: None)
