"""The model-side names and behaviours code written for smolagents 1.26 relies on."""

from __future__ import annotations

import json

import pytest
from PIL import Image

import nbagent.models as models
from nbagent.models import (
    REMOVE_PARAMETER,
    ChatMessage,
    ChatMessageToolCall,
    MessageRole,
    Model,
    get_clean_message_list,
    get_tool_call_from_text,
    remove_content_after_stop_sequences,
    supports_stop_parameter,
)
from nbagent.tools import tool


@tool
def lookup(key: str) -> str:
    """Looks a key up.

    Args:
        key: The key.
    """
    return key


class Opaque:
    """A provider response object that JSON cannot hold."""


def test_chat_message_dict_keeps_raw_json_safe_and_model_dump_json_leaves_it_out():
    from openai.types.completion_usage import CompletionUsage

    message = ChatMessage(role="assistant", content="Hi", raw=Opaque())
    data = message.dict()
    assert set(data) == {"role", "content", "tool_calls", "raw", "token_usage"}
    assert "Opaque" in json.dumps(data)  # named, serialisable
    assert ChatMessage("user", "x", raw={"completion_kwargs": {"max_new_tokens": 100}}).dict()["raw"] == {
        "completion_kwargs": {"max_new_tokens": 100}
    }
    pydantic_raw = ChatMessage(
        "assistant", "x", raw=CompletionUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3)
    )
    assert pydantic_raw.dict()["raw"]["total_tokens"] == 3
    assert "raw" not in json.loads(message.model_dump_json())
    assert message["raw"] is message.raw
    again = ChatMessage.from_dict(data)
    assert again.raw == data["raw"] and ChatMessage.from_dict(data, raw="mine").raw == "mine"


def test_tool_calls_given_as_dicts_or_provider_objects_become_dataclasses():
    from openai.types.chat.chat_completion_message_tool_call import ChatCompletionMessageToolCall, Function

    provider = ChatCompletionMessageToolCall(
        id="call_9", type="function", function=Function(name="lookup", arguments='{"key": "a"}')
    )
    as_dict = {"id": "call_8", "type": "function", "function": {"name": "lookup", "arguments": {"key": "b"}}}
    message = ChatMessage(role=MessageRole.ASSISTANT, content=None, tool_calls=[provider, as_dict])
    assert all(isinstance(tc, ChatMessageToolCall) for tc in message.tool_calls)
    assert [tc.id for tc in message.tool_calls] == ["call_9", "call_8"]
    json.dumps(message.dict())  # serialisable
    assert message.render_as_markdown() == (
        '{"tool": "lookup", "arguments": "{\\"key\\": \\"a\\"}"}\n{"tool": "lookup", "arguments": {"key": "b"}}'
    )


@pytest.mark.parametrize(
    ("model_id", "supported"),
    [
        ("o3", False),
        ("openai/o3", False),
        ("o3-2025-04-16", False),
        ("o3-mini", True),
        ("o3_mini", True),
        ("o4-mini", False),
        ("gpt-5", False),
        ("gpt-5.2-mini", False),
        ("gpt-50", False),
        ("gpt-4o", True),
        ("grok-4", False),
        ("oci/xai.grok-3-mini", False),
        ("prefix-o3", True),
        ("o3x", True),
        ("", True),
        ("anthropic/claude-opus-4-5", True),
    ],
)
def test_supports_stop_parameter(model_id, supported):
    assert supports_stop_parameter(model_id) is supported
    assert Model(model_id=model_id).supports_stop_parameter is supported


def test_api_models_leave_stop_out_for_reasoning_models():
    from nbagent.models.api import ApiModel

    assert "stop" not in ApiModel("openai/o3").prepare_params([{"role": "user", "content": "hi"}], ["x"])
    assert ApiModel("gpt-4o").prepare_params([{"role": "user", "content": "hi"}], ["x"])["stop"] == ["x"]


def test_prepare_completion_kwargs_precedence_and_remove_parameter():
    messages = [ChatMessage(role="user", content="Hello")]
    model = Model(model_id="m", max_tokens=100, temperature=0.5)
    params = model._prepare_completion_kwargs(messages, stop_sequences=["END"], max_tokens=200, top_p=0.9)
    assert params["max_tokens"] == 100 and params["temperature"] == 0.5 and params["top_p"] == 0.9  # model wins
    assert params["stop"] == ["END"] and params["messages"][0]["role"] == "user"
    removed = Model(max_tokens=REMOVE_PARAMETER)._prepare_completion_kwargs(messages, max_tokens=5)
    assert "max_tokens" not in removed
    with_tools = Model()._prepare_completion_kwargs(messages, tools_to_call_from=[lookup])
    assert with_tools["tool_choice"] == "required" and with_tools["tools"][0]["function"]["name"] == "lookup"
    assert "tool_choice" not in Model()._prepare_completion_kwargs(
        messages, tools_to_call_from=[lookup], tool_choice=None
    )
    assert "tool_choice" not in Model()._prepare_completion_kwargs(messages, tool_choice="auto")  # no tools


def test_get_tool_call_from_text():
    call = get_tool_call_from_text(
        'Action: {"name": "lookup", "arguments": "{\\"key\\": \\"a\\"}"} done', "name", "arguments"
    )
    assert call.function.name == "lookup" and call.function.arguments == {"key": "a"} and call.type == "function"
    assert get_tool_call_from_text('{"tool": "t", "params": 42}', "tool", "params").function.arguments == 42
    assert get_tool_call_from_text('{"name": "t"}', "name", "arguments").function.arguments is None
    with pytest.raises(ValueError, match=r"Tool call needs to have a key 'name'.*\['action', 'arguments'\]"):
        get_tool_call_from_text('{"action": "t", "arguments": 1}', "name", "arguments")


def test_remove_content_after_stop_sequences():
    assert remove_content_after_stop_sequences("abc<end>def", ["<end>"]) == "abc"
    assert remove_content_after_stop_sequences(None, ["<end>"]) is None
    assert remove_content_after_stop_sequences("abc", None) == "abc"


def test_images_as_image_urls():
    image = Image.new("RGB", (2, 2))
    message = ChatMessage(role="user", content=[{"type": "image", "image": image}, {"type": "text", "text": "?"}])
    plain = get_clean_message_list([message])
    assert plain[0]["content"][0]["image"] is not None and plain[0]["content"][0]["type"] == "image"
    urls = get_clean_message_list([message], convert_images_to_image_urls=True)
    part = urls[0]["content"][0]
    assert part["type"] == "image_url" and part["image_url"]["url"].startswith("data:image/png;base64,")


def test_names_and_registry():
    assert models.OpenAIModel is models.OpenAIServerModel
    assert models.AzureOpenAIModel is models.AzureOpenAIServerModel
    assert models.MODEL_REGISTRY["OpenAIModel"] is models.OpenAIServerModel
    assert models.MODEL_REGISTRY["LiteLLMRouterModel"] is models.LiteLLMRouterModel
    assert models.get_tool_json_schema(lookup)["function"]["name"] == "lookup"
    assert models.ChatMessageToolCallStreamDelta is not None


def test_a_model_subclass_says_whether_it_streams():
    class OnlyGenerate(Model):
        def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
            return ChatMessage(role="assistant", content="ok")

    assert OnlyGenerate().supports_streaming is False
    assert models.ScriptedModel(["x"]).supports_streaming is True


def test_openai_client_kwargs_may_set_max_retries():
    model = models.OpenAIModel("gpt-4o", api_key="sk-test", client_kwargs={"max_retries": 5, "timeout": 7})
    assert model.client.max_retries == 5 and model.client.timeout == 7
    assert models.OpenAIModel("gpt-4o", api_key="sk-test").client.max_retries == 0  # ours retry by default


def test_inference_client_model_refuses_two_keys():
    with pytest.raises(ValueError, match="Received both `token` and `api_key` arguments."):
        models.InferenceClientModel(model_id="m", token="a", api_key="b")
    assert models.InferenceClientModel(model_id="m", api_key="abc").client.token == "abc"


def test_azure_model_without_endpoint_or_key_says_what_to_set(monkeypatch):
    for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY and OPENAI_API_VERSION"):
        models.AzureOpenAIModel("deployment")
    model = models.AzureOpenAIModel(
        "deployment", azure_endpoint="https://r.openai.azure.com", api_key="k", api_version="2024-10-21"
    )
    assert "/openai/" in str(model.client.base_url)


def test_a_smolagents_style_model_is_called_by_keyword_with_what_is_set():
    """smolagents calls `generate(messages, stop_sequences=...)` by keyword: a subclass may declare no more."""
    seen = []

    class Minimal(Model):
        def generate(self, messages, stop_sequences=None):
            seen.append(stop_sequences)
            return ChatMessage(role="assistant", content="ok")

    deltas = list(Minimal().generate_stream([{"role": "user", "content": "hi"}], stop_sequences=["END"]))
    assert [d.content for d in deltas] == ["ok"] and seen == [["END"]]
    assert [d.content for d in Minimal().generate_stream([{"role": "user", "content": "hi"}])] == ["ok"]
