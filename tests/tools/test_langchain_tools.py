"""`Tool.from_langchain`: real `langchain-core` tools (sync and async) with their name, description and argument
schema, called directly, from a CodeAgent's code (in the isolated worker, through its tool stubs) and as a
ToolCallingAgent's tool call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from nbagent import CodeAgent, ScriptedModel, Tool, ToolCallingAgent

langchain_tools = pytest.importorskip("langchain_core.tools")
pydantic = pytest.importorskip("pydantic")


@langchain_tools.tool(parse_docstring=True)
def multiply(a: int, b: int = 2) -> int:
    """Multiply two whole numbers.

    Args:
        a: the first factor
        b: the second factor
    """
    return a * b


@langchain_tools.tool
async def shout(text: str) -> str:
    """Say the text loudly."""
    await asyncio.sleep(0.01)
    return text.upper() + "!"


class SearchArgs(pydantic.BaseModel):
    query: str = pydantic.Field(description="what to look for")
    limit: int | None = pydantic.Field(default=None, description="at most this many hits")


def _search(query: str, limit: int | None = None) -> list[str]:
    hits = [f"{query} {n}" for n in range(1, 4)]
    return hits[:limit] if limit else hits


search = langchain_tools.StructuredTool.from_function(
    func=_search, name="Web-Search", description="Search the notes.", args_schema=SearchArgs
)


def code(body: str) -> str:
    return f"Thought: use the tool.\n```python\n{body}\n```"


def test_name_description_and_argument_schema_come_from_langchain() -> None:
    product = Tool.from_langchain(multiply)
    assert (product.name, product.description) == ("multiply", "Multiply two whole numbers.")
    assert product.inputs == {
        "a": {"type": "integer", "description": "the first factor"},
        "b": {"type": "integer", "description": "the second factor", "nullable": True},
    }
    assert product.output_type == "integer" and product.langchain_tool is multiply
    finder = Tool.from_langchain(search)
    assert finder.name == "web_search"  # a name the agent's code can call
    assert finder.inputs["query"] == {"type": "string", "description": "what to look for"}
    assert finder.inputs["limit"] == {"type": "integer", "description": "at most this many hits", "nullable": True}
    assert "def web_search(query: string, limit: integer) -> array:" in finder.to_code_prompt()


def test_a_sync_tool_is_invoked_with_positional_or_keyword_arguments() -> None:
    product = Tool.from_langchain(multiply)
    assert product(3) == 6 and product(3, 4) == 12 and product(a=5, b=5) == 25
    assert Tool.from_langchain(search)("cats", limit=2) == ["cats 1", "cats 2"]
    with pytest.raises(TypeError, match="takes 2 arguments"):
        product(1, 2, 3)
    with pytest.raises(TypeError, match="has no argument c"):
        product(a=1, c=2)


def test_langchain_validates_the_arguments() -> None:
    with pytest.raises(pydantic.ValidationError):
        Tool.from_langchain(multiply)(a="not a number")


def test_an_async_only_tool_is_awaited() -> None:
    loud = Tool.from_langchain(shout)
    assert loud.inputs == {"text": {"type": "string", "description": "Text"}} and loud.output_type == "string"
    assert loud("hi") == "HI!"

    async def in_a_running_loop() -> Any:  # as in a notebook cell: no nested event loop needed
        return loud(text="ok")

    assert asyncio.run(in_a_running_loop()) == "OK!"


def test_a_one_string_langchain_tool_takes_its_input() -> None:
    echo = langchain_tools.Tool(name="Echo", func=lambda text: text * 2, description="Repeat the text twice.")
    wrapped = Tool.from_langchain(echo)
    assert list(wrapped.inputs) == ["tool_input"] and wrapped("ab") == "abab"


def test_anything_else_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="takes a LangChain tool .* got function"):
        Tool.from_langchain(lambda x: x)


def test_the_agents_code_calls_langchain_tools_in_the_isolated_worker() -> None:
    agent = CodeAgent(
        tools=[Tool.from_langchain(multiply), Tool.from_langchain(shout), Tool.from_langchain(search)],
        model=ScriptedModel([code("final_answer([multiply(a=6, b=7), shout('go'), web_search('x', limit=1)])")]),
        verbosity_level=-1,
        show_widget=False,
    )
    assert agent.executor_type == "isolated"
    assert agent.run("use them") == [42, "GO!", ["x 1"]]


def test_a_tool_calling_agent_calls_a_langchain_tool() -> None:
    def call(name: str, **arguments: Any) -> dict[str, Any]:
        return {"content": "", "tool_calls": [{"function": {"name": name, "arguments": arguments}}]}

    model = ScriptedModel([call("multiply", a=6, b=7), call("final_answer", answer="done")])
    agent = ToolCallingAgent(tools=[Tool.from_langchain(multiply)], model=model, verbosity_level=-1, show_widget=False)
    assert agent.run("multiply") == "done"
    step = agent.memory.action_steps()[0]
    assert step.tool_calls[0].name == "multiply" and step.observations.endswith("42")
