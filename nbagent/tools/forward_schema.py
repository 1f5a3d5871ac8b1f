"""A `Tool` subclass may leave out `inputs` and `output_type`: they are read from `forward`.

smolagents' documentation shows such a tool (a `WeatherTool` with only `name`,
`description` and a typed, documented `forward`). When `forward` is fully
annotated, its type hints and `Args:` docstring give the same schema `@tool`
would build; otherwise nothing is inferred and the usual checks apply.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

from .docstring import parse_google_docstring
from .errors import ToolDefinitionError
from .function_schema import input_schema, return_type

__all__ = ["infer_io_from_forward"]


def _annotated_params(forward: Any) -> list[inspect.Parameter] | None:
    """The parameters after `self` if forward is fully annotated and named, else None."""
    try:
        params = list(inspect.signature(forward).parameters.values())[1:]
        hints = typing.get_type_hints(forward)
    except Exception:  # an unresolvable annotation: leave the class to the usual checks
        return None
    if "return" not in hints or any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        return None
    return params if all(p.name in hints for p in params) else None


def infer_io_from_forward(cls: type, defines: typing.Callable[[type, str], bool], label: str) -> None:
    """Set `cls.inputs` / `cls.output_type` from `cls.forward` when the class defines neither itself."""
    if not defines(cls, "forward") or (defines(cls, "inputs") and defines(cls, "output_type")):
        return
    params = _annotated_params(cls.forward)
    if params is None:
        return
    hints = typing.get_type_hints(cls.forward)
    if not defines(cls, "inputs"):
        parsed = parse_google_docstring(inspect.getdoc(cls.forward))
        try:
            cls.inputs = {p.name: input_schema(p, hints, parsed.args.get(p.name), label) for p in params}
        except ToolDefinitionError:
            return  # e.g. an undocumented argument: the class may set inputs in __init__
    if not defines(cls, "output_type"):
        cls.output_type = return_type(hints["return"])
