"""Checks that a tool is well defined; each problem raises one `ToolDefinitionError`.

They run when a tool is instantiated (as in smolagents: a module defining a slightly-off
`Tool` subclass still imports), on the attributes the instance ends up with.
"""

from __future__ import annotations

import builtins
import inspect
import keyword
import typing
from collections.abc import Callable
from typing import Any

from .errors import ToolDefinitionError, ToolSerializationError
from .source import StandaloneCode, object_source
from .types import AUTHORIZED_TYPES, PYTHON_TYPE_NAMES, admits_none

__all__ = [
    "REQUIRED_ATTRIBUTES",
    "validate_name",
    "validate_tool_attributes",
    "validate_forward_signature",
    "required_init_parameters",
    "validate_tool_class",
]

REQUIRED_ATTRIBUTES = ("name", "description", "inputs", "output_type")
_AUTHORIZED = ", ".join(AUTHORIZED_TYPES)
_BUILTIN_NAMES = frozenset(dir(builtins))


def validate_name(name: Any, label: str) -> None:
    """A tool name becomes a Python function name in the agent's namespace."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ToolDefinitionError(
            label, "'name'", f"= {name!r} is not a Python identifier", "use letters, digits and _, e.g. 'get_weather'"
        )
    if keyword.iskeyword(name):
        raise ToolDefinitionError(
            label, "'name'", f"= {name!r} is a Python keyword", f"choose another name, e.g. '{name}_tool'"
        )
    if name in _BUILTIN_NAMES:
        raise ToolDefinitionError(
            label,
            "'name'",
            f"= {name!r} would shadow the Python builtin {name}() in the agent's code",
            f"choose another name, e.g. '{name}_tool'",
        )


def _type_fix(kind: Any) -> str:
    suggestion = PYTHON_TYPE_NAMES.get(kind) if isinstance(kind, str) else None
    if suggestion:
        return f"write '{suggestion}' instead of '{kind}' (a type must be one of {_AUTHORIZED})"
    return f"a type must be one of {_AUTHORIZED}, or a list of them"


def _validate_type(kind: Any, label: str, field: str) -> None:
    if not isinstance(kind, (str, list)):
        raise ToolDefinitionError(
            label, field, f"= {kind!r} is a {type(kind).__name__}", "type must be a string or list of strings"
        )
    if isinstance(kind, list) and not kind:
        raise ToolDefinitionError(label, field, "is an empty list", f"use one of {_AUTHORIZED}, or a list of them")
    if isinstance(kind, list) and not all(isinstance(k, str) for k in kind):
        raise ToolDefinitionError(
            label, field, f"= {kind!r} holds non-strings", "when type is a list, all elements must be strings"
        )
    for k in kind if isinstance(kind, list) else [kind]:
        if k not in AUTHORIZED_TYPES:
            raise ToolDefinitionError(label, field, f"= {kind!r} is not an authorized type", _type_fix(k))


def _validate_input(arg: Any, spec: Any, label: str) -> None:
    field = f"inputs[{arg!r}]"
    if not isinstance(arg, str) or not arg.isidentifier():
        raise ToolDefinitionError(
            label,
            "'inputs'",
            f"has key {arg!r}, which is not a Python identifier",
            "name each input like a function parameter",
        )
    if not isinstance(spec, dict):
        raise ToolDefinitionError(
            label,
            field,
            f"is a {type(spec).__name__}, not a dict",
            f'write {{"type": "string", "description": "what {arg} is"}}',
        )
    if "type" not in spec:
        raise ToolDefinitionError(label, field, "has no 'type'", f'add "type": one of {_AUTHORIZED}')
    _validate_type(spec["type"], label, f"{field}['type']")
    description = spec.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ToolDefinitionError(
            label,
            field,
            "has no 'description' (a non-empty string)",
            f'add "description": "what {arg} is"; the model reads it',
        )
    if "nullable" in spec and not isinstance(spec["nullable"], bool):
        raise ToolDefinitionError(
            label,
            f"{field}['nullable']",
            f"= {spec['nullable']!r} is not a bool",
            'write "nullable": True or remove it',
        )


def validate_tool_attributes(values: dict[str, Any], label: str) -> None:
    """Validate the attributes present in `values` (a subset of REQUIRED_ATTRIBUTES may be given)."""
    if "name" in values:
        validate_name(values["name"], label)
    if "description" in values:
        description = values["description"]
        if not isinstance(description, str) or not description.strip():
            raise ToolDefinitionError(
                label,
                "'description'",
                f"= {description!r} is not a non-empty string",
                "describe what the tool does in a sentence; the model reads it",
            )
    if "inputs" in values:
        inputs = values["inputs"]
        if not isinstance(inputs, dict):
            raise ToolDefinitionError(
                label,
                "'inputs'",
                f"is a {type(inputs).__name__}, not a dict",
                'write {"arg": {"type": "string", "description": "..."}}, or {} for no inputs',
            )
        for arg, spec in inputs.items():
            _validate_input(arg, spec, label)
    if "output_type" in values:
        output_type = values["output_type"]
        if not isinstance(output_type, str) or output_type not in AUTHORIZED_TYPES:
            raise ToolDefinitionError(
                label, "'output_type'", f"= {output_type!r} is not an authorized type", _type_fix(output_type)
            )


def _forward_parameters(forward: Callable, drop_first: bool) -> list[inspect.Parameter]:
    params = list(inspect.signature(forward).parameters.values())
    return params[1:] if drop_first and params else params


def validate_forward_signature(forward: Callable, inputs: dict[str, Any], label: str, *, drop_first: bool) -> None:
    """`forward`'s parameters must be exactly `inputs`; a default requires `nullable: True` and back.

    `drop_first` drops `self` when `forward` is taken from the class rather than an instance.
    """
    params = _forward_parameters(forward, drop_first)
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ToolDefinitionError(
                label,
                "'forward'",
                f"takes {'*' if p.kind is p.VAR_POSITIONAL else '**'}{p.name}",
                "list the parameters named in 'inputs' explicitly, or set skip_forward_signature_validation = True "
                "on the class if it forwards them on purpose",
            )
    names = [p.name for p in params]
    missing = [k for k in inputs if k not in names]
    extra = [n for n in names if n not in inputs]
    if missing or extra:
        details = []
        if missing:
            details.append(f"lacks {missing} declared in 'inputs'")
        if extra:
            details.append(f"has {extra} not declared in 'inputs'")
        raise ToolDefinitionError(
            label,
            "'forward'",
            f"parameters {names} do not match inputs {list(inputs)}: it " + " and ".join(details),
            "make forward(self, ...) take exactly the keys of 'inputs'",
        )
    try:
        hints = typing.get_type_hints(forward)
    except Exception:  # unresolvable annotations: judge their text
        hints = {}
    for p in params:
        nullable = inputs[p.name].get("nullable", False)
        has_default = p.default is not inspect.Parameter.empty
        if has_default and not nullable:
            raise ToolDefinitionError(
                label,
                f"inputs[{p.name!r}]",
                f"is not nullable but forward's parameter has a default ({p.default!r})",
                f'Nullable inputs and defaults go together: add "nullable": True to inputs[{p.name!r}], '
                "or remove the default",
            )
        if nullable and not has_default and not admits_none(hints.get(p.name, p.annotation)):
            raise ToolDefinitionError(
                label,
                f"inputs[{p.name!r}]",
                "is nullable but forward's parameter has no default",
                f'Nullable inputs need a default: give it one ({p.name}=None), or remove "nullable"',
            )


def required_init_parameters(cls: type) -> list[str]:
    """Parameters of the class's own `__init__` (not `Tool`'s) that have no default (none for `@tool` functions)."""
    if getattr(cls, "_saved_as_function", False):
        return []
    owner = next((klass for klass in cls.__mro__ if "__init__" in vars(klass)), object)
    if owner is object or (owner.__name__ == "Tool" and owner.__module__ == __name__.rsplit(".", 1)[0] + ".base"):
        return []
    try:
        params = list(inspect.signature(owner.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in params
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def validate_tool_class(cls: type, check_imports: bool = True) -> None:
    """Check that a Tool subclass can be saved and rebuilt: smolagents' `validate_tool_attributes(cls)`.

    Collects every problem, then raises one `ToolSerializationError` (a `ValueError`) listing them:
    the class attribute `name` must be a Python identifier; `__init__` parameters need defaults (a
    saved tool is rebuilt without arguments); with `check_imports`, every name the class reads must be
    a builtin, an import or a global nbagent can write into the saved file. Unlike smolagents, globals
    (constants, helper functions, imports) are fine: `save()` writes them along. `@tool` functions pass.
    """
    if getattr(cls, "_saved_as_function", False):
        return
    problems = []
    name = cls.__dict__.get("name", getattr(cls, "name", None))
    if name is not None and (not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name)):
        problems.append(
            f"Class attribute 'name' must be a valid Python identifier and not a reserved keyword, found '{name}'"
        )
    required = required_init_parameters(cls)
    if required:
        problems.append(f"Parameters in __init__ must have default values, found required parameters {required}")
    if check_imports:
        source = object_source(cls)
        if source is None:
            problems.append(f"Python kept no source for class {cls.__name__}: define it in a cell or a .py file")
        else:
            import sys

            module = sys.modules.get(cls.__module__)
            try:
                StandaloneCode(f"class {cls.__name__}").add_dependencies(source, vars(module) if module else {})
            except ToolSerializationError as err:
                problems.append(str(err))
    if problems:
        raise ToolSerializationError(f"Tool validation failed for {cls.__name__}:\n" + "\n".join(problems))
