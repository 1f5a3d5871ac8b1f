"""Turn a tool into one standalone Python file, and read such files back.

A tool's source rarely stands alone: it uses modules imported at the top of its
file, constants, helper functions written in the same notebook. We find the
global names the source reads, then write for each one an import (when the value
lives in an importable module), an assignment (for literals) or the helper's own
source (for functions and classes defined in a notebook or in loaded tool code).
Anything else cannot be recreated from code and is a clear error.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import inspect
import linecache
import sys
import textwrap
import types
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from .errors import ToolSerializationError

__all__ = [
    "DYNAMIC_MODULE_PREFIX",
    "object_source",
    "function_body_source",
    "free_names",
    "names_read_at_runtime",
    "get_imports",
    "StandaloneCode",
    "requirements_of",
    "exec_tool_code",
]

DYNAMIC_MODULE_PREFIX = "nbagent_tool_code_"


def _class_source_from_methods(cls: type) -> str | None:
    """Find a class in the cached source of its methods' file (works for notebook cells)."""
    for member in vars(cls).values():
        func = getattr(member, "__func__", member)
        code = getattr(inspect.unwrap(func), "__code__", None) if callable(func) else None
        if code is None:
            continue
        lines = linecache.getlines(code.co_filename)
        if not lines:
            continue
        try:
            tree = ast.parse("".join(lines))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ClassDef)
                and node.name == cls.__name__
                and node.lineno <= code.co_firstlineno <= (node.end_lineno or 0)
            ):
                start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                return "".join(lines[start - 1 : node.end_lineno])
    return None


def object_source(obj: Any) -> str | None:
    """Dedented source of a function or class, or None when Python kept none."""
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        pass
    if inspect.isclass(obj):
        found = _class_source_from_methods(obj)
        return textwrap.dedent(found) if found else None
    return None


def function_body_source(func: Callable) -> str | None:
    """A function's source from its `def` line on (decorators removed), or None."""
    source = object_source(func)
    if source is None:
        return None
    tree = ast.parse(source)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    lines = source.splitlines(keepends=True)
    return "".join(lines[node.lineno - 1 : node.end_lineno])


def free_names(source: str) -> list[str]:
    """Names the code reads but never binds, in a stable order.

    Scope-insensitive on purpose (a name bound anywhere counts as bound): tool
    sources are small and this errs toward emitting fewer imports, never wrong ones.
    """
    tree = ast.parse(source)
    loaded: dict[str, None] = {}
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loaded.setdefault(node.id)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return [name for name in loaded if name not in bound]


def names_read_at_runtime(source: str) -> set[str]:
    """Names loaded outside annotations: a saved tool file (with postponed annotations) needs these to run."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
        for field, value in ast.iter_fields(node):
            if field in ("annotation", "returns"):
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    visit(child)

    visit(ast.parse(source))
    return found


def _is_dynamic(module_name: str) -> bool:
    """Modules that cannot be imported by name: the notebook/script and loaded tool code."""
    module = sys.modules.get(module_name)
    return (
        module_name == "__main__"
        or module_name.startswith(DYNAMIC_MODULE_PREFIX)
        or module is None
        or getattr(module, "__spec__", None) is None
    )


def _is_local_module(module_name: str) -> bool:
    """A module of the user's own project (not stdlib, not installed): its helpers are inlined, not imported."""
    top = module_name.split(".")[0]
    return not (
        top in sys.stdlib_module_names or top in sys.builtin_module_names or top == "nbagent" or top in _distributions()
    )


def _public_module(module_name: str, attr: str, value: Any) -> str:
    """Prefer `nbagent.tools` / `nbagent` over private submodules when they export the same object."""
    if module_name.startswith("nbagent."):
        for public in ("nbagent.tools", "nbagent"):
            module = sys.modules.get(public)
            if module is not None and getattr(module, attr, None) is value:
                return public
    return module_name


def _import_line(name: str, value: Any) -> str | None:
    if inspect.ismodule(value):
        if _is_dynamic(value.__name__):
            return None
        return f"import {value.__name__}" if name == value.__name__ else f"import {value.__name__} as {name}"
    module_name = getattr(value, "__module__", None)
    if not isinstance(module_name, str) or _is_dynamic(module_name):
        return None
    if (inspect.isfunction(value) or inspect.isclass(value)) and _is_local_module(module_name):
        return None  # inline its source so that the file stands alone
    module = sys.modules[module_name]
    for attr in dict.fromkeys([name, getattr(value, "__name__", None), getattr(value, "_name", None)]):
        if isinstance(attr, str) and getattr(module, attr, None) is value:
            source_module = _public_module(module_name, attr, value)
            return f"from {source_module} import {attr}" + ("" if attr == name else f" as {name}")
    return None


def _is_literal(value: Any) -> bool:
    if isinstance(value, type) or callable(value):
        return False
    try:
        return type(value) is type(ast.literal_eval(repr(value))) and ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


class StandaloneCode:
    """Collects imports, constants and helper definitions for one tool file."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.imports: dict[str, None] = {"from __future__ import annotations": None}
        self.constants: list[str] = []
        self.definitions: list[str] = []
        self._bound: set[str] = set()

    def bind_import(self, name: str, line: str) -> None:
        self._bound.add(name)
        self.imports.setdefault(line)

    def add_dependencies(self, source: str, namespace: dict[str, Any]) -> None:
        runtime = None
        for name in free_names(source):
            if name in self._bound or hasattr(builtins, name) and name not in namespace:
                continue
            if name not in namespace:
                runtime = names_read_at_runtime(source) if runtime is None else runtime
                if name in runtime:
                    raise ToolSerializationError(
                        f"Tool {self.label} cannot be saved: Name {name!r} is undefined in the saved code: it is "
                        f"not a builtin, an import or a global of the module defining the tool (a variable of an "
                        f"enclosing function?). Fix: import or define {name} inside the method that uses it, or "
                        f"at module level."
                    )
                continue  # only in annotations: postponed in the saved file, harmless
            self._bound.add(name)
            self._add(name, namespace[name])

    def _add(self, name: str, value: Any) -> None:
        line = _import_line(name, value)
        if line:
            self.imports.setdefault(line)
        elif _is_literal(value):
            self.constants.append(f"{name} = {value!r}")
        elif inspect.isfunction(value) or inspect.isclass(value):
            self._add_definition(name, value)
        else:
            raise ToolSerializationError(
                f"Tool {self.label} uses the global name {name!r} (a {type(value).__name__}) that cannot be "
                f"written as code. Fix: create it inside the tool (in forward() or setup()), or make it a "
                f"constant, an import, or a function defined in a module."
            )

    def _add_definition(self, name: str, value: Any) -> None:
        source = object_source(value)
        if source is None:
            raise ToolSerializationError(
                f"Tool {self.label} uses {name!r}, defined where Python kept no source. "
                f"Fix: define {value.__name__} in a notebook cell or a module file."
            )
        globals_ = vars(sys.modules[value.__module__]) if value.__module__ in sys.modules else {}
        if inspect.isfunction(value):
            globals_ = value.__globals__
        self._bound.add(value.__name__)
        self.add_dependencies(source, globals_)
        self.definitions.append(source.rstrip() + "\n")
        if name != value.__name__:
            self.definitions.append(f"{name} = {value.__name__}\n")

    def render(self, main_source: str, header: str) -> str:
        future = [line for line in self.imports if line.startswith("from __future__")]
        others = sorted(line for line in self.imports if not line.startswith("from __future__"))
        parts = [f'"""{header}"""\n', "\n".join(future + others) + "\n"]
        if self.constants:
            parts.append("\n".join(self.constants) + "\n")
        parts.extend(self.definitions)
        parts.append(main_source.rstrip() + "\n")
        return "\n\n".join(part.rstrip("\n") for part in parts) + "\n"


@lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    from importlib.metadata import packages_distributions

    return packages_distributions()


def requirements_of(code: str) -> list[str]:
    """Distribution names of the third-party modules the code imports (stdlib and nbagent left out)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module.split(".")[0])
    third_party = sorted(m for m in modules if m not in sys.stdlib_module_names and m not in ("__future__", "nbagent"))
    requirements: dict[str, None] = {}
    for module in third_party:
        for dist in _distributions().get(module, [module]):
            requirements.setdefault(dist)
    return sorted(requirements)


# Import names whose distribution is named differently (smolagents' mapping, for get_imports).
_PACKAGE_NAMES = {"wikipediaapi": "wikipedia-api"}


def _skipped_blocks(node: ast.AST) -> bool:
    """`try:` bodies (optional imports) and `if is_..._available():` blocks are not requirements."""
    if isinstance(node, ast.Try):
        return True
    if isinstance(node, ast.If) and isinstance(node.test, ast.Call):
        func = node.test.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name.startswith("is_") and name.endswith("_available")
    return False


def get_imports(code: str) -> list[str]:
    """The top-level packages a piece of code imports (smolagents' `get_imports`).

    Relative imports, imports inside `try:` blocks and inside `if is_xxx_available():` blocks are left out.
    """
    tree = ast.parse(textwrap.dedent(code))
    found: dict[str, None] = {}

    def visit(node: ast.AST) -> None:
        if _skipped_blocks(node):
            handlers = [s for h in getattr(node, "handlers", []) for s in h.body]
            for child in handlers + getattr(node, "orelse", []) + getattr(node, "finalbody", []):
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.setdefault(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [_PACKAGE_NAMES.get(name, name) for name in found]


def exec_tool_code(code: str) -> types.ModuleType:
    """Run tool code as a fresh module whose source stays available to `inspect` (for saving again)."""
    digest = hashlib.sha1(code.encode()).hexdigest()[:12]
    name = f"{DYNAMIC_MODULE_PREFIX}{digest}"
    filename = f"<nbagent tool code {digest}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module  # dataclasses and pickle look classes up by module name
    try:
        compiled = compile(code, filename, "exec")
    except SyntaxError as err:
        del sys.modules[name]
        raise ToolSerializationError(f"Tool code is not valid Python: {err.msg} (line {err.lineno})") from None
    exec(compiled, module.__dict__)
    return module
