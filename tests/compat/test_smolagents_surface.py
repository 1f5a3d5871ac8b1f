"""The rest of smolagents 1.26's public surface (issue 30 item 5), each name used: under `nbagent` and smolagents'
module paths; the streaming helpers on a real run's stream; `load_model` against a loopback server; the names that
cannot run here (a GPU, Apple silicon, hosted sandboxes) say at construction what they need."""

from __future__ import annotations

import importlib

import pytest
from loopback import LoopbackAPI, Request
from PIL import Image

import nbagent
from nbagent import (
    ActionStep,
    AgentImage,
    AgentText,
    BaseTool,
    ChatMessageStreamDelta,
    CodeAgent,
    MemoryStep,
    Model,
    PythonExecutor,
    ScriptedModel,
    StreamEvent,
    Tool,
    agglomerate_stream_deltas,
    handle_agent_output_types,
    load_model,
    tool,
)
from nbagent.models import ChatMessageToolCallFunction, ChatMessageToolCallStreamDelta, TokenUsage

# smolagents' module of each name (its import path), as a person moving over writes it with `nbagent`
MODULE_PATHS = {
    "PythonExecutor": "local_python_executor",
    "AmazonBedrockModel": "models",
    "VLLMModel": "models",
    "MLXModel": "models",
    "agglomerate_stream_deltas": "models",
    "DockerExecutor": "remote_executors",
    "E2BExecutor": "remote_executors",
    "ModalExecutor": "remote_executors",
    "BlaxelExecutor": "remote_executors",
    "handle_agent_output_types": "agent_types",
    "MemoryStep": "memory",
    "BaseTool": "tools",
    "ApiWebSearchTool": "default_tools",
}


@pytest.mark.parametrize("name", sorted(MODULE_PATHS))
def test_the_name_is_the_same_object_at_the_top_and_under_smolagents_path(name: str) -> None:
    module = importlib.import_module(f"nbagent.{MODULE_PATHS[name]}")
    assert getattr(module, name) is getattr(nbagent, name)


NEEDS = {
    "VLLMModel": ("NVIDIA GPU with CUDA", "vllm serve"),
    "MLXModel": ("Apple silicon", "mlx_lm.server"),
}
REMOTE_NEEDS = {
    "E2BExecutor": "E2B_API_KEY",
    "DockerExecutor": "Docker daemon",
    "ModalExecutor": "Modal token",
    "BlaxelExecutor": "Blaxel workspace",
}


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_a_model_that_cannot_run_here_says_what_it_needs(name: str) -> None:
    cls = getattr(nbagent, name)
    assert issubclass(cls, Model) and cls is nbagent.models.MODEL_REGISTRY[name]
    need, instead = NEEDS[name]
    with pytest.raises(RuntimeError, match="not available in nbagent") as raised:
        cls("Qwen/Qwen2.5-Coder-1.5B-Instruct")
    assert need in str(raised.value) and instead in str(raised.value) and "OpenAIServerModel" in str(raised.value)


@pytest.mark.parametrize("name", sorted(REMOTE_NEEDS))
def test_a_remote_executor_says_what_it_needs(name: str) -> None:
    cls = getattr(nbagent, name)
    assert issubclass(cls, PythonExecutor)
    with pytest.raises(RuntimeError, match=f"{name} is not available in nbagent") as raised:
        cls(["numpy"], None)
    assert REMOTE_NEEDS[name] in str(raised.value) and "CodeAgent(executor=...)" in str(raised.value)


def test_a_streamed_run_yields_only_stream_events() -> None:
    answer = "Thought: add.\n```python\nfinal_answer(1 + 2)\n```"
    agent = CodeAgent(tools=[], model=ScriptedModel([answer]), stream_outputs=True, verbosity_level=-1)
    events = list(agent.run("add", stream=True))
    assert events and all(isinstance(event, StreamEvent) for event in events)
    deltas = [event for event in events if isinstance(event, ChatMessageStreamDelta)]
    assert agglomerate_stream_deltas(deltas).content == answer


def test_agglomerate_stream_deltas_joins_text_tool_calls_and_usage() -> None:
    def call_part(index: int, name: str = "", arguments: str = "", id: str | None = None) -> ChatMessageStreamDelta:
        function = ChatMessageToolCallFunction(name=name, arguments=arguments)
        return ChatMessageStreamDelta(
            tool_calls=[ChatMessageToolCallStreamDelta(index=index, id=id, function=function)]
        )

    deltas = [
        ChatMessageStreamDelta(content="Looking "),
        ChatMessageStreamDelta(content="it up.", token_usage=TokenUsage(10, 2)),
        call_part(0, "web_search", '{"query": ', id="call_a"),
        call_part(1, "visit", '{"url": "x"}', id="call_b"),
        call_part(0, arguments='"nbagent"}'),
        ChatMessageStreamDelta(token_usage=TokenUsage(0, 7)),
    ]
    message = agglomerate_stream_deltas(deltas)
    assert message.content == "Looking it up." and message.role == "assistant"
    calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls]
    assert calls == [("call_a", "web_search", '{"query": "nbagent"}'), ("call_b", "visit", '{"url": "x"}')]
    assert (message.token_usage.input_tokens, message.token_usage.output_tokens) == (10, 9)


def test_load_model_makes_a_model_that_answers() -> None:
    def chat(request: Request) -> dict:
        text = request.body["messages"][-1]["content"]
        return {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": request.body["model"],
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": f"echo: {text}"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        }

    with LoopbackAPI(chat) as api:
        model = load_model("OpenAIServerModel", "tiny", api_base=f"{api.url}/v1", api_key="k")
        reply = model.generate([{"role": "user", "content": "hi"}])
    assert type(model).__name__ == "OpenAIServerModel" and model.model_id == "tiny"
    assert reply.content == "echo: hi" and api.requests[0].path == "/v1/chat/completions"
    with pytest.raises(ValueError, match="Unknown --model-type 'NoSuchModel'"):
        load_model("NoSuchModel", "x")


def test_handle_agent_output_types_wraps_by_the_declared_type() -> None:
    assert isinstance(handle_agent_output_types("hello", "string"), AgentText)
    image = handle_agent_output_types(Image.new("RGB", (2, 2)), "image")
    assert isinstance(image, AgentImage) and image.size == (2, 2)
    assert handle_agent_output_types(3, "integer") == 3


def test_memory_step_is_the_base_of_every_step() -> None:
    step = ActionStep(step_number=1)
    assert isinstance(step, MemoryStep) and isinstance(step.dict(), dict)


def test_base_tool_is_what_every_tool_is() -> None:
    @tool
    def double(x: int) -> int:
        """Double it.

        Args:
            x: a number
        """
        return 2 * x

    assert isinstance(double, BaseTool) and issubclass(Tool, BaseTool) and double(x=2) == 4

    class Named(BaseTool):
        name = "named"

    with pytest.raises(TypeError, match="abstract"):
        Named()
