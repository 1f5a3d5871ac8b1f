"""The public surface the agent loop relies on: outputs, final answers, tools, errors."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from nbagent.sandbox import (
    BASE_BUILTIN_MODULES,
    CodeOutput,
    ExecutionError,
    ExecutionStopped,
    ExecutionTimeout,
    FinalAnswerException,
    LocalPythonExecutor,
    OperationLimitExceeded,
    PolicyError,
)


class RecordingTool:
    name = "final_answer"
    description = "Provides the final answer."
    inputs = {"answer": {"type": "any", "description": "the answer"}}
    output_type = "any"

    def __init__(self) -> None:
        self.calls: list[tuple[tuple, dict]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        print("tool printed")
        return f"final:{args[0] if args else kwargs['answer']}"


def test_exception_hierarchy() -> None:
    for cls in (PolicyError, ExecutionStopped, ExecutionTimeout, OperationLimitExceeded):
        assert issubclass(cls, ExecutionError)
    assert issubclass(FinalAnswerException, BaseException) and not issubclass(FinalAnswerException, Exception)
    assert [f.name for f in dataclasses.fields(CodeOutput)] == [
        "output",
        "logs",
        "is_final_answer",
        "images",
        "warnings",
        "figures",
    ]


def test_output_is_the_trailing_expression(executor: LocalPythonExecutor) -> None:
    assert executor("x = 2\nx * 21") == CodeOutput(output=42, logs="", is_final_answer=False)
    assert executor("y = x").output is None
    assert executor("print('a')\nprint('b')").logs == "a\nb\n"


@pytest.mark.parametrize(
    "code",
    [
        "final_answer(7)\nprint('not reached')",
        "def f():\n    def g():\n        final_answer(7)\n    g()\nf()\nprint('not reached')",
        "for i in range(10):\n    if i == 7:\n        final_answer(i)\nprint('not reached')",
        "try:\n    final_answer(7)\nexcept BaseException as e:\n    print('not reached', e)",
        "try:\n    final_answer(7)\nexcept:\n    print('not reached')",
        "[final_answer(x) for x in (7, 8)]",
        "class C:\n    def m(self):\n        return final_answer(7)\nC().m()\nprint('not reached')",
        "def gen():\n    yield 1\n    final_answer(7)\nlist(gen())",
        "final_answer(answer=7)",
    ],
)
def test_final_answer_from_any_depth(executor: LocalPythonExecutor, code: str) -> None:
    result = executor(code)
    assert result.is_final_answer and result.output == 7
    assert "not reached" not in result.logs


def test_final_answer_tool_is_called_then_the_step_ends() -> None:
    tool = RecordingTool()
    executor = LocalPythonExecutor()
    executor.send_tools({"final_answer": tool})
    result = executor("print('before')\nfinal_answer('done')\nprint('after')")
    assert tool.calls == [(("done",), {})]
    assert result == CodeOutput(output="final:done", logs="before\ntool printed\n", is_final_answer=True)


def test_final_answer_called_outside_a_call_just_returns(executor: LocalPythonExecutor) -> None:
    executor("def finish(x):\n    return final_answer(x * 2)")
    assert executor.state["finish"](4) == 8  # e.g. the user calling the function from a cell


def test_tools_and_additional_functions() -> None:
    executor = LocalPythonExecutor(additional_functions={"helper": lambda x: x + 1})
    executor.send_tools({"search": lambda q: print(f"searching {q}") or ["r1"]})
    result = executor("r = search('cats')\nhelper(len(r))")
    assert result.output == 2 and result.logs == "searching cats\n"
    with pytest.raises(PolicyError):
        executor("helper = 3")
    executor.send_tools({})
    with pytest.raises(ExecutionError) as info:
        executor("search('x')")
    assert info.value.cause_type == "NameError"


def test_tool_descriptions_are_readable_copies() -> None:
    tool = RecordingTool()
    executor = LocalPythonExecutor()
    executor.send_tools({"final_answer": tool})
    assert executor("final_answer.description").output == "Provides the final answer."
    executor("d = final_answer.inputs\nd['answer']['type'] = 'changed'")
    assert tool.inputs["answer"]["type"] == "any"


def test_execution_error_message_and_attributes(executor: LocalPythonExecutor) -> None:
    with pytest.raises(ExecutionError) as info:
        executor("print('first')\nitems = {'a': 1}\nvalue = items['missing']\nprint('never')")
    error = info.value
    assert str(error) == "Error on line 3 of the code:\n    value = items['missing']\nKeyError: 'missing'"
    assert error.logs == "first\n" and error.cause_type == "KeyError" and error.lineno == 3
    assert type(error) is ExecutionError


def test_nested_error_shows_the_call_chain_and_earlier_steps(executor: LocalPythonExecutor) -> None:
    executor("def parse(s):\n    return int(s)")
    with pytest.raises(ExecutionError) as info:
        executor("def load(xs):\n    return [parse(x) for x in xs]\nload(['1', 'x'])")
    message = str(info.value)
    assert message.startswith("Error on line 3 of the code:\n    load(['1', 'x'])\n")
    assert "which called load(), line 2" in message
    assert "which called parse(), line 2 (code from an earlier step):\n    return int(s)" in message
    assert message.endswith("ValueError: invalid literal for int() with base 10: 'x'")


def test_syntax_error_message(executor: LocalPythonExecutor) -> None:
    with pytest.raises(ExecutionError) as info:
        executor("x = 1\nif x > 0\n    print(x)")
    assert info.value.cause_type == "SyntaxError" and info.value.lineno == 2
    assert str(info.value).startswith("Error on line 2 of the code:\n    if x > 0\n")
    assert "SyntaxError: expected ':'" in str(info.value)


@pytest.mark.parametrize("code", ["return 1", "yield 2", "nonlocal x"])
def test_module_level_syntax_errors_match_python(executor: LocalPythonExecutor, code: str) -> None:
    with pytest.raises(ExecutionError) as info:
        executor(code)
    assert info.value.cause_type == "SyntaxError"


def test_policy_error_says_how_to_grant(executor: LocalPythonExecutor) -> None:
    with pytest.raises(PolicyError) as info:
        executor("import json\njson.dumps({})")
    message = str(info.value)
    assert message.startswith("Error on line 1 of the code:\n    import json\nImportNotAllowed: Import of json")
    assert "additional_authorized_imports=['json']" in message and "%%agent --imports json" in message
    assert info.value.cause_type == "ImportNotAllowed"


def test_authorized_imports_is_the_effective_list() -> None:
    executor = LocalPythonExecutor(additional_authorized_imports=["numpy", "pandas.*"])
    assert set(executor.authorized_imports) == set(BASE_BUILTIN_MODULES) | {"numpy", "pandas.*"}
    assert executor("import pandas.io.formats\nimport numpy.linalg\n1").output == 1


def test_state_and_send_variables() -> None:
    namespace = {"given": 5}
    executor = LocalPythonExecutor(namespace=namespace)
    executor.send_variables({"extra": 2})
    assert executor("made = given * extra\nmade").output == 10
    assert executor.state is namespace and namespace["made"] == 10


def test_calls_cannot_nest() -> None:
    executor = LocalPythonExecutor()
    executor.send_tools({"again": lambda: executor("1")})
    with pytest.raises(ExecutionError) as info:
        executor("again()")
    assert info.value.cause_type == "RuntimeError" and "already running" in str(info.value)
    assert executor("1 + 1").output == 2


def test_non_string_code_is_rejected(executor: LocalPythonExecutor) -> None:
    with pytest.raises(TypeError):
        executor(b"1")  # type: ignore[arg-type]


def test_prints_of_other_threads_are_not_captured(capsys: pytest.CaptureFixture[str]) -> None:
    import threading

    def tool() -> str:
        thread = threading.Thread(target=lambda: print("from another thread"))
        thread.start()
        thread.join()
        return "ok"

    executor = LocalPythonExecutor()
    executor.send_tools({"tool": tool})
    result = executor("print('mine')\ntool()")
    assert result.logs == "mine\n" and result.output == "ok"
    assert "from another thread" in capsys.readouterr().out


def test_code_cannot_close_the_kernel_stream() -> None:
    import sys

    executor = LocalPythonExecutor(additional_authorized_imports=["sys"])
    assert executor("import sys\nsys.stdout.close()\nprint('still here')").logs == "still here\n"
    assert not sys.stdout.closed
