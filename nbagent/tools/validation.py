"""Checks that a tool is well defined; each problem raises one `ToolDefinitionError`.

Used twice: when a `Tool` subclass is defined (class attributes) and when a tool is
instantiated (attributes set in `__init__`, `@tool` functions).
"""

from __future__ import annotations

import builtins
import inspect
import keyword
from collections.abc import Callable
from typing import Any

from .errors import ToolDefinitionError
from .types import AUTHORIZED_TYPES, PYTHON_TYPE_NAMES, admits_none

__all__ = ["REQUIRED_ATTRIBUTES", "validate_name", "validate_tool_attributes", "validate_forward_signature"]

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
        return f"write '{suggestion}' instead of '{kind}' (authorized types: {_AUTHORIZED})"
    return f"use one of {_AUTHORIZED}, or a list of them"


def _validate_type(kind: Any, label: str, field: str) -> None:
    kinds = kind if isinstance(kind, list) else [kind]
    if isinstance(kind, list) and not kind:
        raise ToolDefinitionError(label, field, "is an empty list", f"use one of {_AUTHORIZED}, or a list of them")
    for k in kinds:
        if not isinstance(k, str) or k not in AUTHORIZED_TYPES:
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
    for p in params:
        nullable = inputs[p.name].get("nullable", False)
        has_default = p.default is not inspect.Parameter.empty
        if has_default and not nullable:
            raise ToolDefinitionError(
                label,
                f"inputs[{p.name!r}]",
                f"is not nullable but forward's parameter has a default ({p.default!r})",
                f'add "nullable": True to inputs[{p.name!r}], or remove the default',
            )
        if nullable and not has_default and not admits_none(p.annotation):
            raise ToolDefinitionError(
                label,
                f"inputs[{p.name!r}]",
                "is nullable but forward's parameter has no default",
                f'give it a default ({p.name}=None), or remove "nullable"',
            )
