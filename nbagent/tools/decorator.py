"""`@tool`: a Tool made from a typed function with a Google-style docstring."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from .base import Tool
from .docstring import parse_google_docstring
from .errors import ToolDefinitionError, ToolSerializationError
from .source import function_body_source
from .types import admits_none, hint_to_schema

__all__ = ["tool", "FunctionTool"]


class FunctionTool(Tool):
    """A tool whose `forward` is a plain function; made by `@tool`."""

    def __init__(
        self,
        function: Callable,
        name: str,
        description: str,
        inputs: dict[str, dict[str, Any]],
        output_type: str,
        output_description: str | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.description = description
        self.inputs = inputs
        self.output_type = output_type
        self.output_description = output_description
        self.forward = function
        self.__wrapped__ = function
        self.__doc__ = function.__doc__
        self._source = function_body_source(function)

    def to_code(self) -> str:
        if self._source is None:
            raise ToolSerializationError(
                f"Tool '{self.name}': Python kept no source for function {self.forward.__name__}. "
                f"Fix: define it with def in a notebook cell or a .py file (not exec or a lambda)."
            )
        from .source import StandaloneCode

        code = StandaloneCode(f"'{self.name}'")
        code.bind_import("tool", "from nbagent.tools import tool")
        code.add_dependencies(self._source, self.forward.__globals__)
        return code.render("@tool\n" + self._source, f"Tool {self.name!r}, saved by nbagent.")


def _resolve_hints(func: Callable, label: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func)
    except Exception as err:  # NameError for an unknown name in a string annotation, TypeError for bad ones
        raise ToolDefinitionError(
            label,
            "type hints",
            f"cannot be resolved ({type(err).__name__}: {err})",
            "import every name used in the annotations at module level",
        ) from err


def _input_schema(param: inspect.Parameter, hints: dict[str, Any], doc: str | None, label: str) -> dict[str, Any]:
    field = f"parameter '{param.name}'"
    hint = hints.get(param.name)
    if param.name not in hints:
        raise ToolDefinitionError(label, field, "has no type hint", f"annotate it, e.g. '{param.name}: str'")
    try:
        schema = hint_to_schema(hint)
    except TypeError:
        raise ToolDefinitionError(
            label,
            field,
            f"has type hint {hint!r}, which has no tool type",
            "use str, int, float, bool, list, dict, Any, a PIL image, or Optional/unions of them",
        ) from None
    if not doc:
        raise ToolDefinitionError(
            label,
            field,
            "has no description in the docstring",
            f"add an 'Args:' section with the line '    {param.name}: <what it is>'",
        )
    schema["description"] = doc
    if param.default is not inspect.Parameter.empty or admits_none(hint):
        schema["nullable"] = True
    return schema


def tool(tool_function: Callable) -> Tool:
    """Make a Tool from a function with type hints and a Google-style docstring.

    The docstring's text before `Args:` becomes the description; each parameter
    needs a type hint and an `Args:` line. A parameter with a default (or
    `Optional[...]`) is `nullable`. The tool keeps the function's source for `save()`.
    """
    if not inspect.isfunction(tool_function):
        raise TypeError(f"@tool decorates a function (def ...), got {type(tool_function).__name__}")
    name = tool_function.__name__
    label = f"'{name}' (function {name})"
    parsed = parse_google_docstring(inspect.getdoc(tool_function))
    if not parsed.description:
        raise ToolDefinitionError(
            label, "docstring", "has no description", "start the docstring with a sentence saying what the tool does"
        )
    hints = _resolve_hints(tool_function, label)
    signature = inspect.signature(tool_function)
    inputs: dict[str, dict[str, Any]] = {}
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolDefinitionError(
                label,
                f"parameter '{param.name}'",
                f"is {param.kind.description}",
                "use ordinary named parameters: the model calls tools by keyword",
            )
        inputs[param.name] = _input_schema(param, hints, parsed.args.get(param.name), label)
    unknown = [arg for arg in parsed.args if arg not in inputs]
    if unknown:
        raise ToolDefinitionError(
            label,
            "docstring",
            f"describes {unknown}, which are not parameters",
            "remove them from 'Args:' or fix their spelling",
        )
    if "return" not in hints:
        raise ToolDefinitionError(label, "return type", "is missing", "annotate it, e.g. '-> str' (or '-> None')")
    try:
        output_type = hint_to_schema(hints["return"])["type"]
    except TypeError:
        output_type = None
    if not isinstance(output_type, str):
        output_type = "any"  # unions and exotic return types: the model is told "Any"
    return FunctionTool(tool_function, name, parsed.description, inputs, output_type, parsed.returns)
