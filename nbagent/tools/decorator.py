"""`@tool`: a Tool made from a typed function with a Google-style docstring."""

from __future__ import annotations

import ast
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from .base import Tool
from .docstring import parse_google_docstring
from .errors import DocstringParsingException, ToolDefinitionError, ToolSerializationError, TypeHintParsingException
from .function_schema import input_schema, resolve_hints, return_type
from .source import StandaloneCode, function_body_source, object_source

__all__ = ["tool", "FunctionTool"]


class FunctionTool(Tool):
    """A tool whose `forward` is a plain function; made by `@tool`."""

    _saved_as_function = True  # saved as the @tool function itself, not as this class

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
        code = StandaloneCode(f"'{self.name}'")
        code.bind_import("tool", "from nbagent.tools import tool")
        code.add_dependencies(self._source, self.forward.__globals__)
        return code.render("@tool\n" + self._source, f"Tool {self.name!r}, saved by nbagent.")


def _warn_about_other_decorators(func: Callable, name: str) -> None:
    """`save()` writes the function under `@tool` alone: other decorators would be lost, so say so now."""
    source = object_source(func)
    if source is None:
        return
    try:
        node = ast.parse(source).body[0]
    except (SyntaxError, IndexError):
        return
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    others = [d for d in node.decorator_list if not (isinstance(d, ast.Name) and d.id == "tool")]
    if others:
        warnings.warn(
            f"Function '{name}' has decorators other than @tool ({', '.join(ast.unparse(d) for d in others)}): the "
            "tool runs the decorated function, but save()/to_dict() write it without them.",
            UserWarning,
            stacklevel=3,
        )


def tool(tool_function: Callable) -> Tool:
    """Make a Tool from a function with type hints and a Google-style docstring.

    The docstring's text before `Args:` becomes the description; each parameter
    needs a type hint and an `Args:` line (ending it with `(choices: ["a", "b"])` gives
    an `enum`). A parameter with a default (or `Optional[...]`) is `nullable`. The return
    needs a type hint too, except on a function without parameters (then the output type
    is "null"), as in smolagents. The tool keeps the function's source for `save()`.
    """
    if not inspect.isfunction(tool_function):
        raise TypeError(f"@tool decorates a function (def ...), got {type(tool_function).__name__}")
    name = tool_function.__name__
    label = f"'{name}' (function {name})"
    parsed = parse_google_docstring(inspect.getdoc(tool_function))
    if not parsed.description:
        raise DocstringParsingException(
            label, "docstring", "has no description", "start the docstring with a sentence saying what the tool does"
        )
    hints = resolve_hints(tool_function, label)
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
        inputs[param.name] = input_schema(param, hints, parsed.args.get(param.name), label)
    unknown = [arg for arg in parsed.args if arg not in inputs]
    if unknown:
        raise DocstringParsingException(
            label,
            "docstring",
            f"describes {unknown}, which are not parameters",
            "remove them from 'Args:' or fix their spelling",
        )
    if "return" in hints:
        output_type = return_type(hints["return"])
    elif not inputs:
        output_type = "null"  # smolagents' rule: a function without parameters may omit the return hint
    else:
        raise TypeHintParsingException(
            label,
            "return type",
            "is missing (Tool return type not found: make sure your function has a return type hint)",
            "annotate it, e.g. '-> str' (or '-> None')",
        )
    _warn_about_other_decorators(tool_function, name)
    return FunctionTool(tool_function, name, parsed.description, inputs, output_type, parsed.returns)
