"""The program as text: a cell (statements at the top level) or a function of its inputs.

Both start with comments naming the inputs (the notebook variables the run read, and their kinds) and the tools it
calls, then the import lines it needs, then the kept statements as the run's code wrote them (only a statement
nbagent changed — `final_answer(x)` made `answer = x`, a `print` taken out of a loop — is re-written from its AST).
"""

from __future__ import annotations

import ast
import keyword
import textwrap

from .derive import Derivation
from .inputs import Inputs, describe_value
from .slicing import ANSWER

__all__ = ["cell_text", "function_text", "check_name"]

_INDENT = "    "


def _header(inputs: Inputs, outputs: list[str]) -> list[str]:
    lines = []
    if inputs.variables:
        shown = ", ".join(f"{name} ({describe_value(value)})" for name, value in inputs.variables.items())
        lines.append(f"# inputs: {shown} — notebook variables the run read")
    if inputs.scratch:
        lines.append(f"# from the agent's scope: {', '.join(inputs.scratch)} (agent.keep() brings them in)")
    if inputs.tools:
        lines.append(
            f"# tools: {', '.join(inputs.tools)} — called as in the run; their results come from outside the program"
        )
    if inputs.missing:
        lines.append(f"# needs: {', '.join(inputs.missing)} — defined neither by the run's code nor in the notebook")
    if outputs:
        lines.append(f"# outputs: {ANSWER}, {', '.join(outputs)}")
    return lines


def cell_text(derivation: Derivation, inputs: Inputs) -> str:
    """The program as a notebook cell."""
    lines = _header(inputs, derivation.outputs) + list(dict.fromkeys(inputs.imports.values()))
    lines += [statement.text for statement in derivation.statements]
    return "\n".join(lines) + "\n"


def function_text(name: str, derivation: Derivation, inputs: Inputs) -> str:
    """The program as `def name(<inputs>): ... return answer`."""
    header = [line for line in _header(inputs, []) if not line.startswith("# inputs:")]
    imports = list(dict.fromkeys(inputs.imports.values()))
    body = [_indented(statement.node, statement.text) for statement in derivation.statements]
    signature = f"def {name}({', '.join(inputs.variables)}):"
    parts = [*header, *imports, *([""] if imports else []), signature, *body, f"{_INDENT}return {ANSWER}"]
    return "\n".join(parts) + "\n"


def check_name(name: str) -> str:
    """`name` if it can name a function; else a ValueError that says why."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"to_function needs a Python name for the function (like 'revenue_of'), got {name!r}")
    return name


def _indented(node: ast.stmt, text: str) -> str:
    """`text` one level in; a statement holding a multi-line string is re-written, so the string stays the same."""
    multiline = any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and "\n" in n.value for n in ast.walk(node)
    )
    return textwrap.indent(ast.unparse(node) if multiline else text, _INDENT)
