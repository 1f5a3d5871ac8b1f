"""No hint, error message or prompt template carries code a model can paste as its answer.

A 1.5B model shown the format hint's example (`result = 2 ** 10` then `final_answer(result)`) answered
`final_answer(1024)`. Every message template the loop holds (each string of nbagent/loop, docstrings left
out), the parsing error as the model reads it, the hints of real failures, and the prompt templates (the
small model's whole; the others' all but their system prompts, whose few-shot examples are about other
data) are scanned for `final_answer(` with a literal argument, and for a literal assigned in code that
ends with `final_answer`.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pandas as pd
import pytest
import yaml

import nbagent
from nbagent.errors import AgentParsingError
from nbagent.loop.aids.hints import execution_hint
from nbagent.loop.parsing import FORMAT_HINT, parse_code_blobs
from nbagent.sandbox import ExecutionError, LocalPythonExecutor

PACKAGE = Path(nbagent.__file__).parent


def pasteable_answers(text: str) -> list[str]:
    """The answers in `text` a model could paste and run: `final_answer(<a literal>)`, or a literal assigned
    (`result = 2 ** 10`) in text that also calls final_answer. Placeholders (`<the answer>`, `...`) are none."""
    found = []
    start = text.find("final_answer(")
    while start >= 0:
        argument = _argument(text, start + len("final_answer("))
        if argument is not None and _is_literal(argument):
            found.append(f"final_answer({argument})")
        start = text.find("final_answer(", start + 1)
    if "final_answer(" in text:
        for line in text.splitlines():
            target, equals, value = line.partition("=")
            if equals and target.strip().isidentifier() and not value.startswith("=") and _is_literal(value):
                found.append(line.strip())
    return found


def _argument(text: str, start: int) -> str | None:
    """The text up to the parenthesis that closes the one before `start`; None when the text ends first."""
    depth = 1
    for position in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[position], 0)
        if depth == 0:
            return text[start:position]
    return None


def _is_literal(code: str) -> bool:
    """Code that is a value by itself: constants and operators, no name, no call, no placeholder."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return False
    nodes = list(ast.walk(tree.body))
    constants = [node for node in nodes if isinstance(node, ast.Constant)]
    names = [node for node in nodes if isinstance(node, (ast.Name, ast.Call, ast.Attribute, ast.Subscript))]
    return bool(constants) and not names and not any(node.value is Ellipsis for node in constants)


def test_the_scan_finds_what_a_model_pasted():
    assert pasteable_answers("final_answer(1024)") == ["final_answer(1024)"]
    assert pasteable_answers("```python\nresult = 2 ** 10\nfinal_answer(result)\n```") == ["result = 2 ** 10"]
    assert pasteable_answers('final_answer("Lyon") or final_answer([1, 2])') == [
        'final_answer("Lyon")',
        "final_answer([1, 2])",
    ]
    for placeholder in ("final_answer(<the answer>)", "final_answer(...)", "final_answer(result)", "final_answer({"):
        assert pasteable_answers(placeholder) == [], placeholder


def loop_strings() -> list[tuple[str, str]]:
    """Every string literal of nbagent/loop (the parts of f-strings too), docstrings left out."""
    found = []
    for path in sorted((PACKAGE / "loop").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                found.append((f"{path.relative_to(PACKAGE)}:{node.lineno}", node.value))
    return found


def test_no_message_of_the_loop_holds_an_answer_to_paste():
    pasted = {where: pasteable_answers(text) for where, text in loop_strings()}
    assert {where: found for where, found in pasted.items() if found} == {}


def test_the_parsing_error_describes_the_format_with_placeholders():
    with pytest.raises(AgentParsingError) as error:
        parse_code_blobs("The answer is 1024.")
    message = str(error.value)
    assert FORMAT_HINT in message and "final_answer(<" in message
    assert pasteable_answers(message) == []
    for line in FORMAT_HINT.split("```python\n", 1)[1].splitlines()[:-1]:  # the block's lines cannot run
        with pytest.raises(SyntaxError):
            ast.parse(line)


def templates(name: str) -> list[tuple[str, str]]:
    def walk(value, path):
        if isinstance(value, dict):
            for key, inner in value.items():
                yield from walk(inner, f"{path}/{key}")
        elif isinstance(value, str):
            yield path, value

    return list(walk(yaml.safe_load((PACKAGE / "prompts" / f"{name}.yaml").read_text()), name))


@pytest.mark.parametrize("name", ["code_agent", "code_agent_small", "toolcalling_agent"])
def test_no_prompt_template_holds_an_answer_to_paste(name):
    scanned = [
        (path, text) for path, text in templates(name) if name == "code_agent_small" or path != f"{name}/system_prompt"
    ]
    assert {path: pasteable_answers(text) for path, text in scanned if pasteable_answers(text)} == {}


FAILING = [
    'x = daily.loc["2024-04-21", "units"]',
    "x = sales.summ()",
    'x = sales["units"].groupby("product").sum()',
    'x = sales.merge(reps, on="rep")',
    'x = stores.merge(sales, left_on="store_id", right_on="units")',
    'x = stores[stores["store_id"] > 17]',
    'x = sales["revenue"]',
    "x = undefined_name + 1",
    'x = sales.groupby("product")["units"] * 2',
]


def test_no_hint_of_a_real_failure_holds_an_answer_to_paste():
    namespace = {
        "daily": pd.DataFrame({"units": [1, 2]}, index=pd.to_datetime(["2024-04-18", "2024-04-19"])),
        "sales": pd.DataFrame({"product": ["a", "b", "a"], "units": [1, 2, 3]}),
        "reps": pd.DataFrame({"rep_id": [1, 2, 3]}),
        "stores": pd.DataFrame({"store_id": ["017", "018", "019"]}),
        "pd": pd,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the local executor's notice
        executor = LocalPythonExecutor(additional_authorized_imports=["pandas"], namespace=namespace)
    executor.send_tools({})
    for code in FAILING:
        with pytest.raises(ExecutionError) as failure:
            executor(code)
        hint = execution_hint(failure.value, code, namespace, "How many?\n- `sales`: pandas DataFrame")
        assert hint.startswith("Hint: "), code
        assert pasteable_answers(hint) == [], hint


@pytest.mark.parametrize("reply", ["", "  \n"])
def test_an_empty_reply_is_told_to_go_on_without_a_form_to_send_back(reply):
    with pytest.raises(AgentParsingError) as error:
        parse_code_blobs(reply)
    message = str(error.value)
    assert message.startswith("Your reply was empty, so there is nothing to run. Go on with the task")
    assert "<" not in message and FORMAT_HINT not in message


def test_a_reply_that_writes_the_task_out_again_is_told_so():
    from nbagent import CodeAgent, ScriptedModel
    from nbagent.loop.parsing import ECHOED_TASK

    task = "What is our net revenue: the total amount of `orders` minus the refunds? Round to 2 decimals."
    echoes = [
        f"Task: {task}\n- `orders`: pandas DataFrame",
        f"Well.\n{task}",
        "Thought: done\n```python\nfinal_answer(3)\n```",
    ]
    agent = CodeAgent(tools=[], model=ScriptedModel(echoes), verbosity_level=-1, show_widget=False, max_steps=3)
    assert agent.run(task) == 3
    assert [str(step.error) for step in agent.memory.action_steps()[:2]] == [ECHOED_TASK, ECHOED_TASK]
    assert "<" not in ECHOED_TASK
