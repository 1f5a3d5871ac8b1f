"""Small helpers shared by the model classes."""

from __future__ import annotations

import json
from typing import Any

SECRET_KEYS = ("api_key", "token", "azure_ad_token", "azure_ad_token_provider", "password")

# The response format of `CodeAgent(use_structured_outputs_internally=True)`: a thought and the code, as JSON
# (smolagents' schema, so providers that support structured outputs see the same request).
CODEAGENT_RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "schema": {
            "additionalProperties": False,
            "properties": {
                "thought": {
                    "description": "A free form text description of the thought process.",
                    "title": "Thought",
                    "type": "string",
                },
                "code": {
                    "description": "Valid Python code snippet implementing the thought.",
                    "title": "Code",
                    "type": "string",
                },
            },
            "required": ["thought", "code"],
            "title": "ThoughtAndCodeAnswer",
            "type": "object",
        },
        "name": "ThoughtAndCodeAnswer",
        "strict": True,
    },
}


def tool_schemas(tools: list[Any] | None) -> list[dict[str, Any]] | None:
    """OpenAI-style `{"type": "function", ...}` schemas for `tools_to_call_from`.

    Dicts pass through; tool objects go through `nbagent.tools.get_tool_json_schema`
    (imported lazily: the tools package must not be needed to use a model).
    """
    if not tools:
        return None
    schemas = []
    for tool in tools:
        if isinstance(tool, dict):
            schemas.append(tool)
            continue
        from nbagent.tools import get_tool_json_schema  # lazy: tools is a sibling package

        schemas.append(get_tool_json_schema(tool))
    return schemas


def public_dict(cls_name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Constructor arguments without secrets or values JSON cannot hold (clients, callables)."""
    data: dict[str, Any] = {"class": cls_name}
    for key, value in args.items():
        if key in SECRET_KEYS or key.endswith("_key") or key.endswith("token"):
            continue
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in SECRET_KEYS and not k.endswith("_key")}
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        data[key] = value
    return data


def secret_repr(value: str | None) -> str:
    """How a secret shows in a repr: never its text."""
    return "None" if value is None else "'***'"


class StopCutter:
    """Cuts streamed text at the first stop sequence, holding back a tail that may begin one.

    `feed(text)` returns what is safe to show now; once a stop sequence is seen, `done` is True
    and everything after it is dropped. `flush()` returns the held-back tail at the end.
    """

    def __init__(self, stop_sequences: list[str] | None) -> None:
        self.stops = [s for s in stop_sequences or [] if s]
        self.buffer = ""
        self.done = False

    def feed(self, text: str) -> str:
        if self.done or not text:
            return ""
        if not self.stops:
            return text
        self.buffer += text
        hits = [at for at in (self.buffer.find(s) for s in self.stops) if at != -1]
        if hits:
            out, self.buffer, self.done = self.buffer[: min(hits)], "", True
            return out
        hold = max((k for s in self.stops for k in range(1, len(s)) if self.buffer.endswith(s[:k])), default=0)
        cut = len(self.buffer) - hold
        out, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return out

    def flush(self) -> str:
        out, self.buffer = ("" if self.done else self.buffer), ""
        return out
