"""The code's own mistakes: a name never defined, a `SyntaxError` in long code, final_answer given several values.

An unknown name gets its import (pd, np, plt), or the news that the earlier code that assigns it did not
run, or the variables the task describes; long code that fails to parse usually types data out.
"""

from __future__ import annotations

import ast
import re

from ..data_card import split_task
from .failure import Failure

__all__ = ["undefined_name", "long_code", "final_answer_arguments", "UNDEFINED"]


UNDEFINED = re.compile(r"name '(\w+)' is not defined")


_MODULE_ALIASES = {"pd": "import pandas as pd", "np": "import numpy as np", "plt": "import matplotlib.pyplot as plt"}


_LONG_CODE_LINES = 40


def undefined_name(found: Failure) -> str:
    if found.cause != "NameError":
        return ""
    unknown = UNDEFINED.search(found.message)
    if unknown and unknown.group(1) in _MODULE_ALIASES:
        return f"Hint: import it first: {_MODULE_ALIASES[unknown.group(1)]}"
    if unknown and re.search(rf"^\s*{re.escape(unknown.group(1))}\s*=[^=]", found.earlier_code, re.MULTILINE):
        return (
            f"Hint: `{unknown.group(1)}` was never defined: the earlier code that assigns it did not run "
            "(it stopped before that line). Assign it again in this code."
        )
    names = split_task(found.task)[1]
    if names:
        listed = ", ".join(f"`{name}`" for name in names)
        return f"Hint: the variables of the task are {listed}; use them by name (and define any other name first)."
    return "Hint: define a variable before you use it; variables of earlier steps are still defined."


def long_code(found: Failure) -> str:
    if found.cause == "SyntaxError" and found.code.count("\n") >= _LONG_CODE_LINES:
        return "Hint: write shorter code; use the variables by name instead of typing out their data."
    return ""


_TOO_MANY = re.compile(r"takes \d+ positional arguments? but \d+ were given|unexpected keyword argument")


def final_answer_arguments(found: Failure) -> str:
    """`final_answer(segment, count)`: the answer is one value; the names the code passed, put in one."""
    call = next((node for node in ast.walk(_parsed(found.statement)) if _is_final_answer(node)), None)
    if call is None or not _TOO_MANY.search(found.message) or len(call.args) + len(call.keywords) < 2:
        return ""
    parts = [ast.unparse(node) for node in [*call.args, *(keyword.value for keyword in call.keywords)]]
    return (
        f"Hint: final_answer takes one value, and the code gave it {len(parts)}. Put them in one: a tuple "
        f"final_answer(({', '.join(parts)})), or a dict from names to values."
    )


def _is_final_answer(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "final_answer"


def _parsed(text: str) -> ast.AST:
    try:
        return ast.parse(text.strip())
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])
