"""What the program reads from outside itself: notebook variables, modules (import lines), tools.

A name the kept statements read before they bind it is a tool (the agent's tools and managed agents: their calls
stay, their results come from outside the program), a builtin, a module or library object (it becomes an import
line), or an input: a notebook variable the run read, with its value as it was before the run where the executor
kept a snapshot (the isolated executor never changes a notebook object in place, so that object is the value as
the run first read it), else as it is now. A name found nowhere is `missing`: the program cannot run without it.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import types
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Inputs", "resolve_inputs", "describe_value", "import_line"]

_BUILTINS = frozenset(dir(builtins))


@dataclass
class Inputs:
    """The program's outside: `variables` (name -> value), `imports` (name -> import line), `tools`, `missing`,
    and `scratch` (inputs found only in the agent's scope, `agent.scratch`)."""

    variables: dict[str, Any] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)
    libraries: dict[str, Any] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    scratch: list[str] = field(default_factory=list)


def resolve_inputs(free: list[str], agent: Any) -> Inputs:
    """Sort the names read from outside (`free`, in order) into variables, imports, tools and missing."""
    executor = getattr(agent, "python_executor", None)
    namespace = getattr(executor, "state", None) or {}
    scratch = dict(getattr(getattr(agent, "scope", None), "names", None) or {})
    tools = {*getattr(agent, "tools", {}), *getattr(agent, "managed_agents", {})}
    before = _values_before_run(executor)
    inputs = Inputs()
    for name in free:
        if name in tools:
            inputs.tools.append(name)
            continue
        found = name in before or name in namespace or name in scratch
        value = before[name] if name in before else namespace.get(name, scratch.get(name))
        line = import_line(name, value) if found else None
        if line:
            inputs.imports[name], inputs.libraries[name] = line, value
        elif found:
            inputs.variables[name] = value
            if name not in before and name not in namespace:
                inputs.scratch.append(name)
        elif name not in _BUILTINS:
            inputs.missing.append(name)
    return inputs


def _values_before_run(executor: Any) -> dict[str, Any]:
    """The bindings of the earliest step snapshot the executor keeps (time travel), or {}."""
    snapshots = list(getattr(getattr(executor, "timeline", None), "snapshots", None) or [])
    if not snapshots:
        return {}
    first = min(snapshots, key=lambda s: s.step)
    return dict(first.bindings)


def import_line(name: str, value: Any) -> str | None:
    """`import numpy as np` for a module bound to `np`; `from datetime import datetime` for a library's class or
    function bound to its own name; None for anything else (a variable, the notebook's own function)."""
    if isinstance(value, types.ModuleType):
        module = value.__name__
        if module == name:
            return f"import {module}"
        head, _, tail = module.rpartition(".")
        return f"from {head} import {tail}" if head and tail == name else f"import {module} as {name}"
    if not (inspect.isclass(value) or inspect.isfunction(value) or inspect.isbuiltin(value)):
        return None
    module = getattr(value, "__module__", None)
    if not module or module in ("__main__", "builtins") or getattr(value, "__name__", None) != name:
        return None
    try:
        same = getattr(importlib.import_module(module), name, None) is value
    except Exception:  # a module that cannot be imported by name here
        return None
    return f"from {module} import {name}" if same else None


def describe_value(value: Any) -> str:
    """A short kind for the inputs comment: "DataFrame 50×7", "Series 50", "list of 3", "float"."""
    kind = type(value).__name__
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and shape and all(isinstance(n, int) for n in shape):
        return f"{kind} {'×'.join(str(n) for n in shape)}"
    if isinstance(value, (list, tuple, dict, set)):
        return f"{kind} of {len(value)}"
    return kind
