"""@tool builds the schema from type hints and the Google-style docstring."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

import pytest
from PIL import Image

from nbagent.media.agent_types import AgentText
from nbagent.tools import (
    DocstringParsingException,
    FunctionTool,
    Tool,
    ToolDefinitionError,
    TypeHintParsingException,
    get_tool_json_schema,
    tool,
)


@tool
def search_books(
    query: str,
    limit: int = 5,
    tags: list[str] | None = None,
    filters: Optional[dict] = None,  # noqa: UP045 - the old spelling on purpose
    exact: bool = False,
) -> list[str]:
    """Searches the library catalogue.

    Long explanation that stays in the description.

    Args:
        query: Words to look for.
        limit: How many books to return,
            at most.
        tags (list[str]): Only books with these tags.
        filters: Field filters.
        exact: Match the query exactly.

    Returns:
        list[str]: The matching titles.
    """
    return [f"{query}:{limit}:{tags}:{filters}:{exact}"]


def test_schema_from_hints_and_docstring():
    assert isinstance(search_books, Tool) and isinstance(search_books, FunctionTool)
    assert search_books.name == "search_books"
    assert (
        search_books.description == "Searches the library catalogue.\n\nLong explanation that stays in the description."
    )
    assert search_books.inputs == {
        "query": {"type": "string", "description": "Words to look for."},
        "limit": {"type": "integer", "description": "How many books to return, at most.", "nullable": True},
        "tags": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Only books with these tags.",
            "nullable": True,
        },
        "filters": {"type": "object", "description": "Field filters.", "nullable": True},
        "exact": {"type": "boolean", "description": "Match the query exactly.", "nullable": True},
    }
    assert search_books.output_type == "array"
    assert search_books.output_description == "The matching titles."


def test_forward_is_the_function_and_calls_work_every_way():
    assert search_books.forward is search_books.__wrapped__
    assert search_books("dune") == ["dune:5:None:None:False"]
    assert search_books("dune", 2) == ["dune:2:None:None:False"]
    assert search_books(query="dune", exact=True) == ["dune:5:None:None:True"]
    assert search_books({"query": "dune", "limit": 1}) == ["dune:1:None:None:False"]


def test_code_prompt_is_smolagents_text():
    """smolagents' format exactly: tool type names, the description, an Args: section (prompts and users rely on it)."""
    prompt = search_books.to_code_prompt()
    assert prompt.splitlines()[0] == (
        "def search_books(query: string, limit: integer, tags: array, filters: object, exact: boolean) -> array:"
    )
    assert '    """Searches the library catalogue.\n\n    Long explanation that stays in the description.\n' in prompt
    assert "    Args:\n        query: Words to look for.\n        limit: How many books to return, at most.\n" in prompt
    assert prompt.endswith('        exact: Match the query exactly.\n    """')
    compile(prompt + "\n    pass\n", "<prompt>", "exec")  # still valid Python


def test_code_prompt_with_output_schema():
    class Weather(Tool):
        name = "weather"
        description = "Gets the weather."
        inputs = {"city": {"type": "string", "description": "The city."}}
        output_type = "object"
        output_schema = {"type": "object", "properties": {"celsius": {"type": "number"}}}

        def forward(self, city):
            return {"celsius": 20.0}

    prompt = Weather().to_code_prompt()
    assert prompt.startswith("def weather(city: string) -> dict:")
    assert "This tool returns structured output!" in prompt and '"celsius": {' in prompt


def test_more_hint_kinds():
    @tool
    def convert(
        value: Union[int, float],  # noqa: UP007
        unit: Literal["cm", "inch"],
        picture: Image.Image,
        anything: Any,
        maybe: int | None,
    ) -> float | None:
        """Converts.

        Args:
            value: A number.
            unit: The unit.
            picture: An image.
            anything: Whatever.
            maybe: Required but may be None.
        """
        return None

    assert convert.inputs["value"]["type"] == ["integer", "number"]
    assert convert.inputs["unit"] == {"type": "string", "enum": ["cm", "inch"], "description": "The unit."}
    assert convert.inputs["picture"]["type"] == "image"
    assert convert.inputs["anything"]["type"] == "any"
    assert convert.inputs["maybe"] == {"type": "integer", "description": "Required but may be None.", "nullable": True}
    assert convert.output_type == "number"
    assert "maybe: integer)" in convert.to_code_prompt()


def test_json_schema_openai_format():
    schema = get_tool_json_schema(search_books)
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "search_books"
    assert function["parameters"]["required"] == ["query"]
    props = function["parameters"]["properties"]
    assert props["query"] == {"type": "string", "description": "Words to look for."}
    assert props["tags"]["type"] == ["array", "null"] and props["tags"]["items"] == {"type": "string"}
    assert "nullable" not in props["tags"]


def test_sanitize_outputs_wraps_strings():
    @tool
    def shout(text: str) -> str:
        """Shouts.

        Args:
            text: What to shout.
        """
        return text.upper()

    out = shout("hi", sanitize_inputs_outputs=True)
    assert isinstance(out, AgentText) and out == "HI"
    assert shout(AgentText("yo"), sanitize_inputs_outputs=True) == "YO"


def test_missing_type_hint_names_function_and_parameter():
    with pytest.raises(ToolDefinitionError) as info:

        @tool
        def no_hint(city) -> str:
            """Does things.

            Args:
                city: The city.
            """
            return city

    message = str(info.value)
    assert "no_hint" in message and "parameter 'city' has no type hint" in message and "city: str" in message


def test_missing_arg_description_names_function_and_parameter():
    with pytest.raises(ToolDefinitionError, match=r"'undocumented'.*parameter 'b' has no description.*Args:"):

        @tool
        def undocumented(a: int, b: int) -> int:
            """Adds.

            Args:
                a: First.
            """
            return a + b


@pytest.mark.parametrize(
    ("source", "pattern"),
    [
        ("def f(a: int) -> int:\n    return a\n", "docstring has no description"),
        ('def f(a: int):\n    """Doc.\n\n    Args:\n        a: x.\n    """\n', "Tool return type not found.*-> str"),
        ('def f(*a: int) -> int:\n    """Doc.\n\n    Args:\n        a: x.\n    """\n', "parameter 'a' is variadic"),
        ('def f(a: int) -> int:\n    """Doc.\n\n    Args:\n        a: x.\n        b: y.\n    """\n', r"\['b'\]"),
        ('def f(a: "Unknown") -> int:\n    """Doc.\n\n    Args:\n        a: x.\n    """\n', "cannot be resolved"),
        ('def f(a: complex) -> int:\n    """Doc.\n\n    Args:\n        a: x.\n    """\n', "no tool type"),
    ],
)
def test_decorator_errors(source, pattern):
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(ToolDefinitionError, match=pattern) as info:
        tool(namespace["f"])
    assert "Fix:" in str(info.value) and "'f'" in str(info.value)


def test_decorator_rejects_non_functions():
    with pytest.raises(TypeError, match="decorates a function"):
        tool(len)


def test_setup_runs_once_lazily():
    calls = []

    class Counter(Tool):
        name = "counter"
        description = "Counts calls."
        inputs = {}
        output_type = "integer"

        def setup(self):
            calls.append("setup")

        def forward(self):
            return len(calls)

    counter = Counter()
    assert calls == []
    assert counter() == 1 and counter() == 1 and counter({}) == 1
    assert calls == ["setup"]


def test_tool_calling_prompt():
    text = search_books.to_tool_calling_prompt()
    assert text.startswith("search_books: Searches the library catalogue.")
    assert "    Takes inputs: {'query': {'type': 'string', 'description': 'Words to look for.'}, " in text
    assert text.endswith("\n    Returns an output of type: array")


def test_return_hint_may_be_left_out_only_without_parameters():
    """smolagents' rule: a function without parameters may omit `->` (output "null"); others need it."""

    @tool
    def ping():
        """Pings the server."""
        return None

    assert ping.output_type == "null" and ping.inputs == {} and ping() is None
    with pytest.raises(TypeHintParsingException, match="Tool return type not found.*Fix: annotate it") as info:

        @tool
        def add(a: int, b: int):
            """Adds.

            Args:
                a: First.
                b: Second.
            """
            return a + b

    assert isinstance(info.value, ToolDefinitionError) and isinstance(info.value, TypeError)


def test_missing_description_is_a_docstring_parsing_exception_and_a_type_error():
    with pytest.raises(DocstringParsingException, match="docstring has no description for the argument 'b'") as info:

        @tool
        def add(a: int, b: int) -> int:
            """Adds.

            Args:
                a: First.
            """
            return a + b

    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_other_decorators_warn_that_saving_drops_them():
    def logged(func):
        return func

    with pytest.warns(UserWarning, match=r"has decorators other than @tool \(logged\)"):

        @tool
        @logged
        def shout(text: str) -> str:
            """Shouts.

            Args:
                text: What to shout.
            """
            return text.upper()

    assert shout("a") == "A"


def test_nullable_literal_choices_and_container_schemas():
    @tool
    def pick(
        choice: Literal[1, 2, 3, None],
        color: str,
        scores: dict[str, float],
        point: tuple[int, str],
        anything: dict[str, Any],
    ) -> None:
        """Picks.

        Args:
            choice: A number.
            color: The color (choices: ["red", "green"])
            scores: Scores by name.
            point: A position.
            anything: Free-form.
        """

    assert pick.inputs["choice"] == {"type": "integer", "enum": [1, 2, 3], "description": "A number.", "nullable": True}
    assert pick.inputs["color"] == {"type": "string", "enum": ["red", "green"], "description": "The color"}
    assert pick.inputs["scores"]["additionalProperties"] == {"type": "number"}
    assert pick.inputs["point"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert "additionalProperties" not in pick.inputs["anything"]  # "any" is no JSON type: left out


def test_code_prompt_writes_any_as_Any():
    from nbagent.tools import FinalAnswerTool

    assert FinalAnswerTool().to_code_prompt().startswith("def final_answer(answer: Any) -> Any:\n")
