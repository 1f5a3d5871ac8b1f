"""smolagents' `_function_type_hints_utils` module (reached as `nbagent._function_type_hints_utils`).

`get_json_schema(func)` describes a typed, documented function as a JSON schema; `get_imports(code)` lists the
packages a piece of code imports. Both are nbagent's own (`nbagent.tools`).
"""

from __future__ import annotations

from nbagent.tools import DocstringParsingException, TypeHintParsingException, get_imports, get_json_schema

__all__ = ["DocstringParsingException", "TypeHintParsingException", "get_imports", "get_json_schema"]
