"""`nbagent.local_python_executor.evaluate_python_code`: smolagents' function on nbagent's sandbox."""

from __future__ import annotations

import pytest
from nbagent.local_python_executor import (
    ExecutionTimeoutError,
    InterpreterError,
    PrintContainer,
    evaluate_python_code,
    fix_final_answer_code,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # the local executor's one-time notice


def test_the_value_is_the_last_statements_and_the_state_is_updated() -> None:
    state = {"y": 5}
    assert evaluate_python_code("x = y * 2", state=state) == (10, False)
    assert state["x"] == 10
    assert evaluate_python_code("x + 1", state=state) == (11, False)


def test_code_ending_in_a_compound_statement_has_the_last_value_run_inside() -> None:
    assert evaluate_python_code("x = 3\nif x <= 3:\n    y = 2\nelse:\n    y = 5")[0] == 2
    state: dict = {}
    assert evaluate_python_code("total = 0\nfor i in range(4):\n    total += i", state=state)[0] == 6
    assert set(state) >= {"total", "i"} and not any(key.startswith("_smolagents") for key in state)


def test_functions_defined_in_one_call_work_in_the_next() -> None:
    state: dict = {}
    evaluate_python_code("def double(v):\n    return 2 * v", state=state)
    assert evaluate_python_code("double(21)", state=state) == (42, False)


def test_printed_text_is_a_print_container_in_the_state() -> None:
    state: dict = {}
    evaluate_python_code("print('hello')\nprint(1 + 1)", state=state)
    assert isinstance(state["_print_outputs"], PrintContainer)
    assert state["_print_outputs"].value == "hello\n2\n"


def test_final_answer_ends_the_code_with_its_value() -> None:
    result = evaluate_python_code("final_answer(6 * 7)\nprint('never')", {"final_answer": lambda answer: answer})
    assert result == (42, True)


def test_tools_are_callable_and_protected() -> None:
    tools = {"add_two": lambda v: v + 2}
    assert evaluate_python_code("add_two(1)", tools)[0] == 3
    assert evaluate_python_code("add_two(2)", custom_tools=tools)[0] == 4
    with pytest.raises(InterpreterError, match="'add_two' is a tool"):
        evaluate_python_code("add_two = 3", tools)


def test_a_failure_is_an_interpreter_error_naming_the_line() -> None:
    with pytest.raises(InterpreterError) as failure:
        evaluate_python_code("a = 1\nb = [1][a]")
    assert isinstance(failure.value, ValueError)  # as in smolagents
    assert "line 2" in str(failure.value) and "IndexError" in str(failure.value)


def test_a_refused_import_is_an_interpreter_error_in_smolagents_words() -> None:
    with pytest.raises(InterpreterError, match="Import of os is not allowed"):
        evaluate_python_code("import os")
    assert evaluate_python_code("import os\nos.path.join('a', 'b')", authorized_imports=["os"])[0] == "a/b"


def test_a_timeout_is_an_execution_timeout_error() -> None:
    with pytest.raises(ExecutionTimeoutError, match="Code execution exceeded the maximum execution time of 1"):
        evaluate_python_code("while True:\n    pass", timeout_seconds=1)


def test_fix_final_answer_code_renames_the_variable_not_the_call() -> None:
    assert fix_final_answer_code("final_answer = 3\nfinal_answer(final_answer)") == (
        "final_answer_variable = 3\nfinal_answer(final_answer_variable)"
    )
    assert fix_final_answer_code("final_answer = 3") == "final_answer = 3"  # no call: left as written
