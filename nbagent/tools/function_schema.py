"""A typed, documented function as tool schemas: the `inputs` of `@tool` and smolagents' `get_json_schema`.

One reading of a function serves both: its type hints give the types (`types.hint_to_schema`), its
Google-style docstring the descriptions. An argument description may end with `(choices: [...])`
(a JSON list), which becomes the input's `enum`, as in smolagents and transformers.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable
from typing import Any

from .docstring import parse_google_docstring
from .errors import DocstringParsingException, TypeHintParsingException
from .types import admits_none, hint_to_schema

__all__ = ["resolve_hints", "input_schema", "return_type", "get_json_schema"]

_CHOICES = re.compile(r"\(choices:\s*(.*?)\)\s*$", re.IGNORECASE)


def resolve_hints(func: Callable, label: str) -> dict[str, Any]:
    """`typing.get_type_hints`, with an error that names the tool when an annotation cannot be resolved."""
    try:
        return typing.get_type_hints(func)
    except Exception as err:  # NameError for an unknown name in a string annotation, TypeError for bad ones
        raise TypeHintParsingException(
            label,
            "type hints",
            f"cannot be resolved ({type(err).__name__}: {err})",
            "import every name used in the annotations at module level",
        ) from err


def _with_choices(schema: dict[str, Any], description: str) -> dict[str, Any]:
    match = _CHOICES.search(description)
    if match:
        try:
            choices = json.loads(match.group(1))
        except json.JSONDecodeError:
            choices = None
        if isinstance(choices, list):
            schema["enum"] = [c.strip() if isinstance(c, str) else c for c in choices]
            description = description[: match.start()].strip()
    schema["description"] = description
    return schema


def input_schema(param: inspect.Parameter, hints: dict[str, Any], doc: str | None, label: str) -> dict[str, Any]:
    """The tool input for one parameter: its type, its docstring line, `nullable` if it has a default or admits None."""
    field = f"parameter '{param.name}'"
    if param.name not in hints:
        raise TypeHintParsingException(label, field, "has no type hint", f"annotate it, e.g. '{param.name}: str'")
    hint = hints[param.name]
    try:
        schema = hint_to_schema(hint)
    except TypeError:
        raise TypeHintParsingException(
            label,
            field,
            f"has type hint {hint!r}, which has no tool type",
            "use str, int, float, bool, list, dict, Any, a PIL image, or Optional/unions of them",
        ) from None
    if not doc:
        raise DocstringParsingException(
            label,
            field,
            f"has no description: the docstring has no description for the argument '{param.name}'",
            f"add an 'Args:' section with the line '    {param.name}: <what it is>'",
        )
    _with_choices(schema, doc)
    if param.default is not inspect.Parameter.empty or admits_none(hint):
        schema["nullable"] = True
    return schema


def return_type(hint: Any) -> str:
    """The tool output type of a return hint; unions and exotic types are "any"."""
    try:
        kind = hint_to_schema(hint)["type"]
    except TypeError:
        return "any"
    return kind if isinstance(kind, str) else "any"


def get_json_schema(func: Callable) -> dict[str, Any]:
    """smolagents' (and transformers') function schema: `{"type": "function", "function": {...}}`.

    `function` holds `name`, `description`, `parameters` (`{"type": "object", "properties", "required"}`)
    and, when the function has a return annotation, `return` (`{"type", "description"?}`). Raises
    `DocstringParsingException` without a docstring or an argument description, and
    `TypeHintParsingException` for a parameter without a usable type hint.
    """
    name = getattr(func, "__name__", type(func).__name__)
    label = f"'{name}' (function {name})"
    doc = inspect.getdoc(func)
    if not doc:
        raise DocstringParsingException(
            label,
            "docstring",
            f"is missing: Cannot generate JSON schema for {name} because it has no docstring!",
            "write a docstring: a sentence saying what it does, then an 'Args:' section",
        )
    parsed = parse_google_docstring(doc)
    hints = resolve_hints(func, label)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        properties[param.name] = input_schema(param, hints, parsed.args.get(param.name), label)
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    function: dict[str, Any] = {"name": name, "description": parsed.description, "parameters": parameters}
    if "return" in hints:
        returned: dict[str, Any] = {"type": return_type(hints["return"])}
        if parsed.returns:
            returned["description"] = parsed.returns
        function["return"] = returned
    return {"type": "function", "function": function}
