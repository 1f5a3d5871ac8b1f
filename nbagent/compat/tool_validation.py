"""smolagents' `tool_validation` module: `from nbagent.tool_validation import validate_tool_attributes`.

`validate_tool_attributes(cls, check_imports=True)` is nbagent's `validate_tool_class` (same checks and
phrases, but module constants, helpers and imports a tool uses are accepted: `save()` writes them along).
smolagents' `MethodChecker` (its AST walker behind those checks) is not provided.
"""

from __future__ import annotations

from nbagent.tools.validation import validate_tool_class

__all__ = ["validate_tool_attributes"]

validate_tool_attributes = validate_tool_class
