"""validate_tool_arguments and the JSON schema of tools and tool-like objects (managed agents)."""

from __future__ import annotations

import pytest

from nbagent.tools import FinalAnswerTool, ToolArgumentError, get_tool_json_schema, tool, validate_tool_arguments


@tool
def book(city: str, nights: int, budget: float | None = None, rooms: list[str] | None = None) -> str:
    """Books a hotel.

    Args:
        city: Where.
        nights: How many nights.
        budget: Max price per night.
        rooms: Room kinds.
    """
    return city


def test_valid_arguments_pass():
    validate_tool_arguments(book, {"city": "Oslo", "nights": 2})
    validate_tool_arguments(book, {"city": "Oslo", "nights": 2, "budget": 100, "rooms": ["single"]})
    validate_tool_arguments(book, {"city": "Oslo", "nights": 2, "budget": None})
    validate_tool_arguments(FinalAnswerTool(), {"answer": object()})
    validate_tool_arguments(FinalAnswerTool(), 42)  # one-input tools take a bare value


@pytest.mark.parametrize(
    ("arguments", "pattern"),
    [
        ({"city": "Oslo"}, r"Argument nights is required: tool 'book' is missing required argument\(s\) \['nights'\]"),
        ({"city": "Oslo", "nights": "two"}, r"Argument nights has type 'string' but should be 'integer' \(tool 'book'"),
        ({"city": "Oslo", "nights": 2, "pets": True}, r"'book' has no argument 'pets'; its arguments are \['city'"),
        ({"city": None, "nights": 2}, r"Argument city has type 'null' but should be 'string'"),
        ("Oslo", r"'book' takes arguments \['city', 'nights', 'budget', 'rooms'\]: pass them as a dict"),
    ],
)
def test_invalid_arguments_name_tool_and_argument(arguments, pattern):
    with pytest.raises(ToolArgumentError, match=pattern):
        validate_tool_arguments(book, arguments)


def test_json_schema_of_any_and_duck_typed_agent():
    schema = get_tool_json_schema(FinalAnswerTool())["function"]
    assert schema["parameters"] == {
        "type": "object",
        "properties": {"answer": {"description": "The final answer to the problem"}},  # any: no JSON type
        "required": ["answer"],
    }

    class ManagedAgent:
        name = "researcher"
        description = "Researches things."
        inputs = {
            "task": {"type": "string", "description": "The task."},
            "additional_args": {"type": "object", "description": "Extras.", "nullable": True},
        }
        output_type = "string"

    schema = get_tool_json_schema(ManagedAgent())["function"]
    assert schema["name"] == "researcher" and schema["parameters"]["required"] == ["task"]
    assert schema["parameters"]["properties"]["additional_args"]["type"] == ["object", "null"]
    assert ManagedAgent.inputs["additional_args"]["nullable"] is True  # the source is not mutated
