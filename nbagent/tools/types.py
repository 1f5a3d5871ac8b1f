"""The tool type vocabulary: JSON-schema-like type names and how Python hints map to them."""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

__all__ = ["AUTHORIZED_TYPES", "PYTHON_TYPE_NAMES", "hint_to_schema", "admits_none", "python_type_name"]

AUTHORIZED_TYPES: tuple[str, ...] = (
    "string",
    "boolean",
    "integer",
    "number",
    "image",
    "audio",
    "array",
    "object",
    "any",
    "null",
)

# What people write by habit instead of the schema names; used to suggest the fix.
PYTHON_TYPE_NAMES: dict[str, str] = {
    "str": "string",
    "bool": "boolean",
    "int": "integer",
    "float": "number",
    "list": "array",
    "tuple": "array",
    "dict": "object",
    "None": "null",
    "NoneType": "null",
    "Any": "any",
}

# Schema type -> the Python spelling shown to code-writing models.
_SCHEMA_TO_PYTHON = {
    "string": "str",
    "boolean": "bool",
    "integer": "int",
    "number": "float",
    "image": "Image",
    "audio": "Audio",
    "array": "list",
    "object": "dict",
    "any": "Any",
    "null": "None",
}

_SCALARS: dict[Any, str] = {str: "string", bool: "boolean", int: "integer", float: "number", bytes: "string"}
_ARRAYS = (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Iterable, collections.abc.Set)
_OBJECTS = (dict, collections.abc.Mapping)


def python_type_name(schema: dict[str, Any]) -> str:
    """`{"type": "array", "items": {"type": "string"}}` -> `list[str]`; type lists become `A | B`."""
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " | ".join(_SCHEMA_TO_PYTHON.get(k, k) for k in kind)
    name = _SCHEMA_TO_PYTHON.get(kind, kind)
    items = schema.get("items")
    if kind == "array" and isinstance(items, dict) and "type" in items:
        return f"list[{python_type_name(items)}]"
    return name


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) is typing.Union or isinstance(hint, types.UnionType)


def admits_none(hint: Any) -> bool:
    """True for `Optional[X]`, `X | None`, `None` and their string spellings."""
    if isinstance(hint, str):
        compact = hint.replace(" ", "")
        literal_none = "Literal[" in compact and ("[None," in compact or ",None]" in compact or ",None," in compact)
        return (
            compact.startswith("Optional[") or "|None" in compact or "None|" in compact or compact == "None"
        ) or literal_none
    if hint is None or hint is type(None):
        return True
    if typing.get_origin(hint) is typing.Annotated:
        return admits_none(typing.get_args(hint)[0])
    if typing.get_origin(hint) is typing.Literal:
        return None in typing.get_args(hint)
    return _is_union(hint) and any(admits_none(arg) for arg in typing.get_args(hint))


def _media_type(hint: Any) -> str | None:
    """'image'/'audio' for PIL images and agent media types, matched by name to avoid importing PIL."""
    if not isinstance(hint, type):
        return None
    for klass in hint.__mro__:
        qualified = f"{klass.__module__}.{klass.__qualname__}"
        if qualified == "PIL.Image.Image" or klass.__name__ == "AgentImage":
            return "image"
        if klass.__name__ == "AgentAudio":
            return "audio"
    return None


def hint_to_schema(hint: Any) -> dict[str, Any]:
    """Map a resolved Python type hint to `{"type": ...}` (plus `items`/`enum` when known).

    `Optional[X]` maps to X's schema: nullability is recorded separately by the caller.
    Raises TypeError for hints that have no schema type.
    """
    if hint is Any or hint is object:
        return {"type": "any"}
    if hint is None or hint is type(None):
        return {"type": "null"}
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return hint_to_schema(typing.get_args(hint)[0])
    if _is_union(hint):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(members) == 1:
            return hint_to_schema(members[0])
        kinds: list[str] = []
        for member in members:
            kind = hint_to_schema(member)["type"]
            for k in kind if isinstance(kind, list) else [kind]:
                if k not in kinds:
                    kinds.append(k)
        return {"type": kinds}
    if origin is typing.Literal:
        # Literal[1, 2, None]: type "integer", enum [1, 2]; the None makes the input nullable (admits_none).
        values = [v for v in typing.get_args(hint) if v is not None]
        if not values:
            return {"type": "null"}
        kinds = []
        for value in values:
            kind = _SCALARS.get(type(value), "any")
            if kind not in kinds:
                kinds.append(kind)
        return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": values}
    base = origin or hint
    if base in _SCALARS:
        return {"type": _SCALARS[base]}
    if isinstance(base, type) and issubclass(base, _OBJECTS):
        schema = {"type": "object"}
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is not Any:
            try:
                schema["additionalProperties"] = hint_to_schema(args[1])  # dict[str, float]: the values' type
            except TypeError:
                pass
        return schema
    if isinstance(base, type) and issubclass(base, str):
        return {"type": "string"}
    if isinstance(base, type) and issubclass(base, _ARRAYS):
        schema: dict[str, Any] = {"type": "array"}
        args = typing.get_args(hint)
        if base is tuple and args and Ellipsis not in args and args != ((),):
            try:  # tuple[int, str]: one schema per position (JSON Schema's prefixItems)
                schema["prefixItems"] = [hint_to_schema(arg) for arg in args]
                return schema
            except TypeError:
                pass
        if args and args[0] is not Any and args[0] is not Ellipsis:
            try:
                schema["items"] = hint_to_schema(args[0])
            except TypeError:
                pass  # an exotic element type still leaves a valid array schema
        return schema
    media = _media_type(base)
    if media:
        return {"type": media}
    raise TypeError(f"type hint {hint!r} has no tool type")
