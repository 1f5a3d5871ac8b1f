"""Tools as JSON schemas for API tool calling, and checks of the arguments a model sends."""

from __future__ import annotations

import copy
from typing import Any

from .base import Tool
from .errors import ToolArgumentError

__all__ = ["get_tool_json_schema", "validate_tool_arguments"]

# Media go through APIs as strings (a path or URL); "any" has no JSON type, so it gets none.
_JSON_TYPES = {"image": "string", "audio": "string"}


def _json_property(spec: dict[str, Any]) -> dict[str, Any]:
    prop = {k: copy.deepcopy(v) for k, v in spec.items() if k != "nullable"}
    kind = spec.get("type")
    if isinstance(kind, list):
        kinds = [_JSON_TYPES.get(k, k) for k in kind if k != "any"]
        prop["type"] = list(dict.fromkeys(kinds)) if len(kinds) == len(kind) else None
    elif kind == "any":
        prop["type"] = None
    else:
        prop["type"] = _JSON_TYPES.get(kind, kind)
    if spec.get("nullable") and prop["type"] is not None:
        kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        prop["type"] = list(dict.fromkeys([*kinds, "null"]))
    if prop["type"] is None:
        del prop["type"]
    return prop


def get_tool_json_schema(tool: Tool) -> dict[str, Any]:
    """The OpenAI "function" tool format: `{"type": "function", "function": {name, description, parameters}}`.

    Nullable inputs are optional and accept null; `any` inputs carry no JSON type.
    """
    properties = {arg: _json_property(spec) for arg, spec in tool.inputs.items()}
    required = [arg for arg, spec in tool.inputs.items() if not spec.get("nullable")]
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def _value_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    name = type(value).__name__
    if name == "AgentImage" or type(value).__module__.startswith("PIL."):
        return "image"
    if name == "AgentAudio":
        return "audio"
    return "any"


def _accepts(spec: dict[str, Any], value: Any) -> bool:
    kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    actual = _value_type(value)
    if "any" in kinds or actual in kinds or actual == "any":  # unknown Python objects cannot be judged
        return True
    if actual == "null":
        return bool(spec.get("nullable"))
    if actual == "integer" and "number" in kinds:
        return True
    # A path or URL stands for an image or audio file.
    return actual == "string" and ("image" in kinds or "audio" in kinds)


def validate_tool_arguments(tool: Tool, arguments: Any) -> None:
    """Check a model's arguments against `tool.inputs`; raise `ToolArgumentError` naming the tool and argument.

    `arguments` is a dict of keyword arguments, or a single value for a one-input tool. The messages
    start as smolagents' do ("Argument x has type 'null' but should be 'string'").
    """
    if not isinstance(arguments, dict) or (len(tool.inputs) == 1 and not set(arguments) <= set(tool.inputs)):
        if len(tool.inputs) != 1:
            raise ToolArgumentError(
                f"Tool {tool.name!r} takes arguments {list(tool.inputs)}: pass them as a dict, got {arguments!r:.200}"
            )
        arguments = {next(iter(tool.inputs)): arguments}
    for key, value in arguments.items():
        if key not in tool.inputs:
            raise ToolArgumentError(
                f"Argument {key} is not in the tool's input schema: tool {tool.name!r} has no argument {key!r}; "
                f"its arguments are {list(tool.inputs)}"
            )
        spec = tool.inputs[key]
        if not _accepts(spec, value):
            raise ToolArgumentError(
                f"Argument {key} has type {_value_type(value)!r} but should be {spec['type']!r} "
                f"(tool {tool.name!r}, value {value!r:.100})"
            )
    missing = [k for k, spec in tool.inputs.items() if k not in arguments and not spec.get("nullable")]
    if missing:
        raise ToolArgumentError(
            f"Argument {missing[0]} is required: tool {tool.name!r} is missing required argument(s) {missing}"
        )
