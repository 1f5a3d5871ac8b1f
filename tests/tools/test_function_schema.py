"""get_json_schema (smolagents' `_function_type_hints_utils.get_json_schema`) and get_imports."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.tools import DocstringParsingException, TypeHintParsingException, get_imports, get_json_schema, tool


def multiply(x: int, y: tuple[str, float] | None = None) -> float:
    """Multiplies.

    Args:
        x (int): The first number.
        y: A pair
            on two lines.

    Returns:
        float: The product.
    """
    return 0.0


def test_schema_of_a_documented_function():
    assert get_json_schema(multiply) == {
        "type": "function",
        "function": {
            "name": "multiply",
            "description": "Multiplies.",
            "parameters": {
                "type": "object",
                "properties": {
                    "x": {"type": "integer", "description": "The first number."},
                    "y": {
                        "type": "array",
                        "prefixItems": [{"type": "string"}, {"type": "number"}],
                        "description": "A pair on two lines.",
                        "nullable": True,
                    },
                },
                "required": ["x"],
            },
            "return": {"type": "number", "description": "The product."},
        },
    }


def test_return_is_absent_without_hint_and_any_for_unions():
    def no_return(text: str):
        """Does.

        Args:
            text: Some text.
        """

    def union_return(value: int | str) -> bool | str:
        """Does.

        Args:
            value: A value.
        """
        return True

    assert "return" not in get_json_schema(no_return)["function"]
    schema = get_json_schema(union_return)["function"]
    assert schema["return"] == {"type": "any"}
    assert schema["parameters"]["properties"]["value"]["type"] == ["integer", "string"]


def test_the_same_reading_as_tool():
    @tool
    def lookup(key: str, default: Any = None) -> str:
        """Looks a key up.

        Args:
            key: The key (choices: ["a", "b"])
            default: Returned when missing.
        """
        return key

    properties = get_json_schema(lookup.forward)["function"]["parameters"]["properties"]
    assert properties == lookup.inputs


@pytest.mark.parametrize(
    ("source", "error", "pattern"),
    [
        ("def f(x: int):\n    return x\n", DocstringParsingException, "because it has no docstring"),
        (
            'def f(x: int, y: int):\n    """Adds.\n\n    Args:\n        x: X.\n    """\n',
            DocstringParsingException,
            "docstring has no description for the argument 'y'",
        ),
        ('def f(x):\n    """Adds.\n\n    Args:\n        x: X.\n    """\n', TypeHintParsingException, "no type hint"),
    ],
)
def test_errors(source, error, pattern):
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(error, match=pattern):
        get_json_schema(namespace["f"])


def test_get_imports():
    code = """
        import numpy as np
        import os.path
        from torch.nn import Linear
        from .local import helper
        try:
            import optional_thing
        except ImportError:
            import fallback_thing
        if is_flash_attn_2_available():
            from flash_attn import f
        import wikipediaapi
    """
    assert sorted(get_imports(code)) == ["fallback_thing", "numpy", "os", "torch", "wikipedia-api"]
