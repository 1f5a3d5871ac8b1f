"""smolagents' `local_python_executor` module, on nbagent's sandbox: `from nbagent.local_python_executor import ...`.

`PythonExecutor`, `LocalPythonExecutor`, `CodeOutput`, `InterpreterError` and `ExecutionTimeoutError` are the
sandbox's own classes.
`evaluate_python_code` runs the code the way the sandbox runs an agent's code: as real Python, with nbagent's
guards (imports, attributes, limits), in the `state` dict. It is not smolagents' tree-walking interpreter, so its
internals (`evaluate_ast`, `evaluate_subscript`, `evaluate_condition`, ... and the `_operations_count` it keeps
in the state) do not exist here: see docs/smolagents-compat.md.
"""

from __future__ import annotations

import ast
import builtins
import math
import re
import threading
from collections.abc import Callable, Iterable
from functools import wraps
from types import ModuleType
from typing import Any

from nbagent.sandbox import (
    BASE_BUILTIN_MODULES,
    CodeOutput,
    ExecutionError,
    ExecutionTimeoutError,
    FinalAnswerException,
    InterpreterError,
    LocalPythonExecutor,
    PythonExecutor,
)
from nbagent.sandbox.errors import timeout_message
from nbagent.sandbox.guards import policy
from nbagent.sandbox.guards.statement_value import readable_again, with_last_statement_value

__all__ = [
    "BASE_BUILTIN_MODULES",
    "BASE_PYTHON_TOOLS",
    "DANGEROUS_FUNCTIONS",
    "DANGEROUS_MODULES",
    "DEFAULT_MAX_LEN_OUTPUT",
    "MAX_EXECUTION_TIME_SECONDS",
    "MAX_OPERATIONS",
    "CodeOutput",
    "ExecutionTimeoutError",
    "FinalAnswerException",
    "InterpreterError",
    "LocalPythonExecutor",
    "PrintContainer",
    "PythonExecutor",
    "check_import_authorized",
    "evaluate_python_code",
    "fix_final_answer_code",
    "get_safe_module",
    "timeout",
]

DEFAULT_MAX_LEN_OUTPUT = policy.DEFAULT_MAX_PRINT_OUTPUTS_LENGTH
MAX_EXECUTION_TIME_SECONDS = policy.DEFAULT_TIMEOUT_SECONDS
MAX_OPERATIONS = policy.DEFAULT_MAX_OPERATIONS

#: The functions smolagents' interpreter offers without an import. In nbagent they are Python's own builtins (and
#: `math`'s functions under their short names); passing this dict as `static_tools` adds only the `math` ones.
BASE_PYTHON_TOOLS: dict[str, Callable] = {
    **{
        name: getattr(builtins, name)
        for name in (
            "print isinstance range float int bool str set list dict tuple round pow len sum max min abs enumerate "
            "zip reversed sorted all any map filter ord chr next iter divmod callable getattr hasattr setattr "
            "issubclass type complex"
        ).split()
    },
    **{
        name: getattr(math, name)
        for name in "ceil floor log exp sin cos tan asin acos atan atan2 degrees radians sqrt".split()
    },
}

#: Modules agent code may not import unless authorized, and some never (see `nbagent.sandbox.guards.policy`).
DANGEROUS_MODULES: list[str] = [
    "builtins",
    "io",
    "multiprocessing",
    "os",
    "pathlib",
    "pty",
    "shutil",
    "socket",
    "subprocess",
    "sys",
]
#: Functions agent code cannot reach, even through an authorized module (smolagents' list; nbagent's is longer:
#: `nbagent.sandbox.guards.policy.DANGEROUS_CALLABLES`).
DANGEROUS_FUNCTIONS: list[str] = [
    "builtins.compile",
    "builtins.eval",
    "builtins.exec",
    "builtins.globals",
    "builtins.locals",
    "builtins.__import__",
    "os.popen",
    "os.system",
    "posix.system",
]


class PrintContainer:
    """The printed text of a call, as `state["_print_outputs"]` holds it (`str()` gives the text)."""

    def __init__(self, value: str = "") -> None:
        self.value = value

    def append(self, text: str) -> PrintContainer:
        self.value += text
        return self

    def __iadd__(self, other: Any) -> PrintContainer:
        self.value += str(other)
        return self

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"PrintContainer({self.value})"

    def __len__(self) -> int:
        return len(self.value)


def check_import_authorized(import_to_check: str, authorized_imports: Iterable[str]) -> bool:
    """True if agent code may import `import_to_check` with `authorized_imports` granted ("pkg", "pkg.*", "*")."""
    return policy.is_import_authorized(import_to_check, authorized_imports)


def get_safe_module(raw_module: Any, authorized_imports: Iterable[str], visited: set[int] | None = None) -> Any:
    """A copy of `raw_module` holding what agent code may read of it (not a module: returned as is).

    Attributes whose lazy import fails are left out; submodules are copied the same way when authorized and left
    out otherwise; attributes the sandbox refuses (`os.system`, ...) are left out.
    """
    if not isinstance(raw_module, ModuleType):
        return raw_module
    visited = set() if visited is None else visited
    if id(raw_module) in visited:
        return raw_module
    visited.add(id(raw_module))
    authorized = list(authorized_imports)
    safe = ModuleType(raw_module.__name__, getattr(raw_module, "__doc__", None))
    for name in dir(raw_module):
        if policy.module_attribute_refusal(raw_module.__name__, name):
            continue
        try:
            value = getattr(raw_module, name)
        except (ImportError, AttributeError):
            continue
        if isinstance(value, ModuleType):
            if not policy.is_import_authorized(value.__name__, authorized):
                continue
            value = get_safe_module(value, authorized, visited)
        setattr(safe, name, value)
    return safe


_FINAL_ANSWER_BINDING = re.compile(r"(?<![.\w])final_answer\s*=(?!=)")
_FINAL_ANSWER_NAME = re.compile(r"(?<![.\w])final_answer\b(?!\s*\()")


def fix_final_answer_code(code: str) -> str:
    """Rename a variable called `final_answer` to `final_answer_variable` when the code also calls `final_answer(...)`.

    Code that does not call the tool is returned unchanged (renaming there would make the model's later steps
    read a name it never wrote).
    """
    if "final_answer(" not in code or not _FINAL_ANSWER_BINDING.search(code):
        return code
    return _FINAL_ANSWER_NAME.sub("final_answer_variable", code)


def timeout(timeout_seconds: float) -> Callable[[Callable], Callable]:
    """Decorator: the call raises ExecutionTimeoutError after `timeout_seconds` (it runs on a daemon thread and
    cannot be killed: it finishes in the background). nbagent's executors stop the code itself instead."""

    def decorator(func: Callable) -> Callable:
        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            outcome: dict[str, Any] = {}

            def run() -> None:
                try:
                    outcome["value"] = func(*args, **kwargs)
                except BaseException as error:  # handed to the caller's thread
                    outcome["error"] = error

            worker = threading.Thread(target=run, daemon=True, name=f"timeout({func.__name__})")
            worker.start()
            worker.join(timeout_seconds)
            if worker.is_alive():
                raise ExecutionTimeoutError(timeout_message(timeout_seconds))
            if "error" in outcome:
                raise outcome["error"]
            return outcome.get("value")

        return wrapper

    return decorator


def evaluate_python_code(
    code: str,
    static_tools: dict[str, Callable] | None = None,
    custom_tools: dict[str, Callable] | None = None,
    state: dict[str, Any] | None = None,
    authorized_imports: Iterable[str] = BASE_BUILTIN_MODULES,
    max_print_outputs_length: int = DEFAULT_MAX_LEN_OUTPUT,
    timeout_seconds: float | None = MAX_EXECUTION_TIME_SECONDS,
) -> tuple[Any, bool]:
    """Run `code` in nbagent's sandbox with `state` as its namespace; return `(value, is_final_answer)`.

    The value is the last statement's: an expression's, an assignment's (`x = 3` gives 3), for code ending in
    if/for/while/with/try the last one run inside it; or the argument of `final_answer(...)`. `static_tools` and `custom_tools` are callable and protected (assigning to
    their names is refused; smolagents lets code rebind a custom tool). `state` is updated in place, with the printed
    text in `state["_print_outputs"]` (a PrintContainer). A failure raises InterpreterError (a ValueError) whose
    message names the line and the exception; a timeout raises ExecutionTimeoutError.
    """
    state = {} if state is None else state
    executor = _executor_for(state, authorized_imports, max_print_outputs_length, timeout_seconds)
    executor.send_tools(_protected_tools({**(custom_tools or {}), **(static_tools or {})}))
    printed = PrintContainer()
    state["_print_outputs"] = printed
    state[_VALUE] = None
    try:
        result = executor(_with_compound_value(with_last_statement_value(code)))
    except ExecutionError as error:
        printed.value = error.logs
        raise
    finally:
        state.pop(_VALUE, None)
    printed.value = result.logs
    return result.output, result.is_final_answer


# Code ending in if/for/while/with/try: smolagents' value is the last statement run inside. The statements
# that can end it (an expression, an assignment) also store their value here, which the code then ends with.
_VALUE = "_smolagents_value_"
_COMPOUND = (ast.If, ast.For, ast.While, ast.With, ast.Try)


def _with_compound_value(code: str) -> str:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    if not tree.body or not isinstance(tree.body[-1], _COMPOUND):
        return code
    lines = code.splitlines(keepends=True)
    # splice from the end so that earlier positions stay valid (ast offsets count UTF-8 bytes)
    for tail in sorted(_tails(tree.body[-1]), key=lambda node: (node.lineno, node.col_offset), reverse=True):
        _record_value(lines, tail)
    return "".join(lines).rstrip() + f"\n{_VALUE}\n"


def _tails(statement: ast.stmt) -> list[ast.stmt]:
    """The simple statements that can be the last one run by `statement`."""
    if not isinstance(statement, _COMPOUND):
        return [statement] if isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)) else []
    bodies = [statement.body, getattr(statement, "orelse", [])]
    bodies += [handler.body for handler in getattr(statement, "handlers", [])]
    return [tail for body in bodies if body for tail in _tails(body[-1])]


def _record_value(lines: list[str], statement: ast.stmt) -> None:
    if statement.end_lineno is None or statement.end_col_offset is None:
        return
    if isinstance(statement, ast.Expr):
        start, end = (statement.lineno, statement.col_offset), (statement.end_lineno, statement.end_col_offset)
        _insert(lines, end, ")")
        _insert(lines, start, f"{_VALUE} = (")
        return
    target = statement.targets[-1] if isinstance(statement, ast.Assign) else statement.target
    if getattr(statement, "value", None) is not None and readable_again(target):
        _insert(lines, (statement.end_lineno, statement.end_col_offset), f"; {_VALUE} = {ast.unparse(target)}")


def _insert(lines: list[str], position: tuple[int, int], text: str) -> None:
    line_number, byte_offset = position
    encoded = lines[line_number - 1].encode("utf-8")
    lines[line_number - 1] = (encoded[:byte_offset] + text.encode("utf-8") + encoded[byte_offset:]).decode("utf-8")


class _StateExecutor(LocalPythonExecutor):
    """The executor of one `state` dict, kept in it so that functions an earlier call defined keep working."""

    KEY = "_nbagent.executor"


def _executor_for(
    state: dict[str, Any], authorized_imports: Iterable[str], max_print: int, timeout_seconds: float | None
) -> LocalPythonExecutor:
    granted = sorted(set(authorized_imports) - set(BASE_BUILTIN_MODULES))
    executor = state.get(_StateExecutor.KEY)
    if not isinstance(executor, _StateExecutor) or executor.additional_authorized_imports != granted:
        executor = _StateExecutor(granted, max_print_outputs_length=max_print, namespace=state)
        state[_StateExecutor.KEY] = executor
    executor.max_print_outputs_length = max_print
    executor.timeout_seconds = timeout_seconds
    executor.max_operations = MAX_OPERATIONS  # read at each call: patching this module's constant works
    return executor


def _protected_tools(static_tools: dict[str, Callable]) -> dict[str, Callable]:
    """The static tools that are not Python's own builtins (those stay the sandbox's guarded builtins)."""
    return {name: tool for name, tool in static_tools.items() if getattr(builtins, name, None) is not tool}
