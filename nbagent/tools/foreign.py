"""A tool defined elsewhere (a LangChain tool, a Gradio app) as the parts `Tool.from_*` wraps.

The adapters (`langchain`, `spaces`) read the other library's description of a tool into a `ForeignTool`; `base`
turns it into a `Tool`. Kept below `base`, so the adapters never import `Tool` (no import cycle in the package).
`json_schema_inputs` reads a JSON schema's properties as tool inputs, which is how both libraries describe them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .types import AUTHORIZED_TYPES

__all__ = ["ForeignTool", "json_schema_inputs", "schema_type", "tool_name"]

_KEPT_KEYS = ("enum", "items")  # what the model is shown of a property beyond its type and description


@dataclass
class ForeignTool:
    """What a `Tool` needs of a tool defined elsewhere: `call` takes the inputs by keyword (and may return an
    awaitable: the tool call awaits it); `attributes` are set on the tool (smolagents' `langchain_tool`, `client`)."""

    name: str
    description: str
    inputs: dict[str, dict[str, Any]]
    output_type: str
    call: Callable[..., Any]
    attributes: dict[str, Any] = field(default_factory=dict)


def tool_name(name: str) -> str:
    """A name the agent's code can call: lower case (as smolagents does), each character a name cannot hold an
    underscore (`"Web-Search"` -> `"web_search"`)."""
    cleaned = re.sub(r"\W", "_", str(name).strip().lower())
    return f"_{cleaned}" if cleaned[:1].isdigit() else cleaned


def schema_type(schema: dict[str, Any]) -> tuple[str | list[str], bool]:
    """A JSON schema's tool type and whether it admits null: `anyOf`/`oneOf` of types is their list (null apart),
    an object or a reference is "object", anything unknown "any"."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        kinds = [schema_type(option)[0] for option in options if option.get("type") != "null"]
        flat = list(dict.fromkeys(k for kind in kinds for k in (kind if isinstance(kind, list) else [kind])))
        nullable = len(kinds) < len(options)
        return (flat[0] if len(flat) == 1 else flat or "any"), nullable
    kind = schema.get("type")
    if isinstance(kind, list):
        known = [k for k in kind if k != "null"]
        return schema_type({"anyOf": [{"type": k} for k in kind]}) if known else ("any", True)
    if kind is None:
        return ("object" if "$ref" in schema or "properties" in schema else "any"), False
    return (kind if kind in AUTHORIZED_TYPES else "any"), kind == "null"


def json_schema_inputs(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tool inputs from an object schema's `properties`: a property not `required` (or admitting null) is
    nullable; one without a description is described by its title, else by its name (the model reads each)."""
    required = set(schema.get("required") or ())
    inputs: dict[str, dict[str, Any]] = {}
    for name, prop in (schema.get("properties") or {}).items():
        kind, admits_null = schema_type(prop)
        text = prop.get("description") or prop.get("title") or name.replace("_", " ")
        spec: dict[str, Any] = {"type": kind, "description": str(text)}
        spec.update({key: prop[key] for key in _KEPT_KEYS if key in prop})
        if admits_null or name not in required:
            spec["nullable"] = True
        inputs[name] = spec
    return inputs
