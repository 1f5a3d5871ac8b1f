"""A LangChain tool read as a `ForeignTool` (`Tool.from_langchain`).

LangChain describes a tool's arguments as a JSON schema (`tool_call_schema`, which leaves out the arguments
LangChain injects itself); that schema gives the inputs' types, descriptions and which are optional, instead of
smolagents' empty descriptions. A tool with only a coroutine (`@tool async def`) cannot be invoked synchronously,
so it is awaited through `ainvoke`; the tool call awaits it where the agent runs (see `awaiting`).
"""

from __future__ import annotations

import typing
from typing import Any

from .foreign import ForeignTool, json_schema_inputs, tool_name
from .types import hint_to_schema

__all__ = ["langchain_parts"]


def langchain_parts(lc_tool: Any) -> ForeignTool:
    """The parts of a `langchain_core.tools.BaseTool`; a `TypeError` for anything else."""
    if not (hasattr(lc_tool, "invoke") and hasattr(lc_tool, "name") and hasattr(lc_tool, "args")):
        raise TypeError(
            f"Tool.from_langchain takes a LangChain tool (langchain_core.tools.BaseTool: @tool, StructuredTool, a "
            f"community tool), got {type(lc_tool).__name__}"
        )
    async_only = getattr(lc_tool, "func", True) is None and getattr(lc_tool, "coroutine", None) is not None

    def call(**arguments: Any) -> Any:
        return lc_tool.invoke(arguments)

    async def acall(**arguments: Any) -> Any:
        return await lc_tool.ainvoke(arguments)

    description = (getattr(lc_tool, "description", "") or "").strip() or f"The LangChain tool {lc_tool.name}."
    return ForeignTool(
        name=tool_name(lc_tool.name),
        description=description,
        inputs=json_schema_inputs(_argument_schema(lc_tool)),
        output_type=_output_type(lc_tool),
        call=acall if async_only else call,
        attributes={"langchain_tool": lc_tool},
    )


def _argument_schema(lc_tool: Any) -> dict[str, Any]:
    """The tool's arguments as a JSON object schema: the call schema LangChain gives a model, else its `args`
    (every argument then taken as required: `args` does not say). A tool without an argument schema (LangChain's
    one-string `Tool`) is described by `args` alone: its call schema would be read from the function's own
    signature, which LangChain does not call it with."""
    schema = getattr(lc_tool, "tool_call_schema", None) if getattr(lc_tool, "args_schema", None) is not None else None
    if isinstance(schema, dict):
        return schema
    if hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    properties = dict(lc_tool.args)
    return {"type": "object", "properties": properties, "required": list(properties)}


def _output_type(lc_tool: Any) -> str:
    """The function's return annotation as a tool type; "any" when there is none or it has no tool type
    (smolagents says "string", though a LangChain tool returns whatever its function does)."""
    function = getattr(lc_tool, "func", None) or getattr(lc_tool, "coroutine", None)
    try:
        hint = typing.get_type_hints(function).get("return") if function is not None else None
        kind = hint_to_schema(hint)["type"] if hint is not None else "any"
    except (TypeError, NameError):
        return "any"
    return kind if isinstance(kind, str) and kind != "null" else "any"
