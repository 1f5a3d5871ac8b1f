"""API models against a loopback server that misbehaves: each case ends in retry-then-success or one
clear ModelError, never a hang."""

from __future__ import annotations

import time

import pytest
from fault_server import ANSWER

from nbagent.models import ModelError
from nbagent.models.base import agglomerate_stream_deltas
from nbagent.models.hf_inference import HfApiModel, InferenceClientModel
from nbagent.models.openai_server import AzureOpenAIServerModel, OpenAIServerModel
from nbagent.models.retry import RetryPolicy

SECRET = "sk-test-SECRET-0123456789"
MESSAGES = [{"role": "user", "content": "Say hello."}]
FAST = RetryPolicy(max_retries=2, initial_delay=0.01, max_delay=0.05)


def openai_model(server, timeout=5, **kwargs):
    return OpenAIServerModel("fake", api_base=server.url, api_key=SECRET, retry=FAST, timeout=timeout, **kwargs)


def hf_model(server, timeout=5, **kwargs):
    return InferenceClientModel("fake", base_url=server.url, token=SECRET, retry=FAST, timeout=timeout, **kwargs)


MAKERS = [pytest.param(openai_model, id="openai"), pytest.param(hf_model, id="hf")]


@pytest.mark.parametrize("make", MAKERS)
def test_429_then_success(fault_server, make):
    fault_server.script = [("status", 429, "slow down"), ("status", 503, "overloaded"), "ok"]
    message = make(fault_server).generate(MESSAGES)
    assert message.content == ANSWER
    assert message.token_usage.input_tokens == 11 and message.token_usage.output_tokens == 7
    assert len(fault_server.requests) == 3


@pytest.mark.parametrize("make", MAKERS)
def test_persistent_500_is_one_clear_error(fault_server, make):
    fault_server.script = [("status", 500, "the GPU caught fire")]
    with pytest.raises(ModelError) as info:
        make(fault_server).generate(MESSAGES)
    text = str(info.value)
    assert "HTTP 500" in text and "the GPU caught fire" in text and "after 3 attempts" in text
    assert "127.0.0.1" in text and "Check" in text
    assert SECRET not in text
    assert len(fault_server.requests) == 3


@pytest.mark.parametrize("make", MAKERS)
def test_401_is_not_retried_and_names_the_key(fault_server, make):
    fault_server.script = [("status", 401, f"Incorrect API key provided: {SECRET}")]
    with pytest.raises(ModelError) as info:
        make(fault_server).generate(MESSAGES)
    text = str(info.value)
    assert "HTTP 401" in text and "API key" in text
    assert SECRET not in text  # the provider echoed it; we scrub it
    assert len(fault_server.requests) == 1


@pytest.mark.parametrize("make", MAKERS)
def test_malformed_body_is_one_clear_error(fault_server, make):
    fault_server.script = ["malformed"]
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        make(fault_server).generate(MESSAGES)
    assert time.monotonic() - started < 5
    assert "chat-completions protocol" in str(info.value) or "JSON" in str(info.value)


@pytest.mark.parametrize("make", MAKERS)
def test_hang_times_out_then_one_error(fault_server, make):
    fault_server.script = ["hang"]
    model = make(fault_server, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        model.generate(MESSAGES)
    elapsed = time.monotonic() - started
    assert elapsed < 10, elapsed
    assert "timeout" in str(info.value).lower()
    assert len(fault_server.requests) == 3


@pytest.mark.parametrize("make", MAKERS)
def test_stream_ok(fault_server, make):
    fault_server.script = ["ok_stream"]
    deltas = list(make(fault_server).generate_stream(MESSAGES))
    message = agglomerate_stream_deltas(deltas)
    assert message.content == ANSWER
    assert message.token_usage.input_tokens == 11 and message.token_usage.output_tokens == 7
    assert len(deltas) > 3  # really streamed, not one block


@pytest.mark.parametrize("make", MAKERS)
def test_stream_cut_before_output_is_retried(fault_server, make):
    fault_server.script = ["truncated_early", ("status", 502, "bad gateway"), "ok_stream"]
    deltas = list(make(fault_server).generate_stream(MESSAGES))
    assert agglomerate_stream_deltas(deltas).content == ANSWER
    assert len(fault_server.requests) == 3


@pytest.mark.parametrize("make", MAKERS)
def test_stream_cut_after_output_is_one_clear_error(fault_server, make):
    fault_server.script = ["truncated"]
    received = []
    with pytest.raises(ModelError) as info:
        for delta in make(fault_server).generate_stream(MESSAGES):
            received.append(delta.content)
    assert "".join(c for c in received if c) == "Hello from"
    assert "broke off after partial output" in str(info.value)
    assert len(fault_server.requests) == 1  # output was already delivered: not silently retried


def test_stop_sequences_are_cut_client_side_too(fault_server):
    fault_server.script = ["ok"]
    message = openai_model(fault_server).generate(MESSAGES, stop_sequences=[" the fault"])
    assert message.content == "Hello from"
    assert fault_server.requests[0]["body"]["stop"] == [" the fault"]
    fault_server.script = ["ok_stream"]
    deltas = list(openai_model(fault_server).generate_stream(MESSAGES, stop_sequences=[" the fault"]))
    assert agglomerate_stream_deltas(deltas).content == "Hello from"


def test_tools_are_sent_as_json_schema_and_tool_calls_parsed(fault_server):
    from fault_server import completion

    schema = {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
        },
    }
    call = {"name": "add", "arguments": '{"a": 1, "b": 2}'}

    fault_server.script = ["ok"]
    # Patch the canned answer for this one request: a tool call.
    import fault_server as fs

    original = fs.completion
    fs.completion = lambda *a, **k: original(None, tool_call=call)
    try:
        message = openai_model(fault_server).generate(MESSAGES, tools_to_call_from=[schema])
    finally:
        fs.completion = original
    body = fault_server.requests[0]["body"]
    assert body["tools"] == [schema] and body["tool_choice"] == "required"
    assert message.tool_calls[0].function.name == "add"
    assert message.tool_calls[0].function.arguments == '{"a": 1, "b": 2}'
    assert completion()["choices"][0]["message"]["content"] == ANSWER


def test_azure_uses_deployment_path_version_and_key_header(fault_server):
    model = AzureOpenAIServerModel(
        "my-deployment",
        azure_endpoint=fault_server.url.removesuffix("/v1"),
        api_key=SECRET,
        api_version="2024-10-21",
        retry=FAST,
        timeout=5,
    )
    fault_server.script = [("status", 429, "busy"), "ok"]
    assert model.generate(MESSAGES).content == ANSWER
    request = fault_server.requests[-1]
    assert request["path"].startswith("/openai/deployments/my-deployment/chat/completions")
    assert "api-version=2024-10-21" in request["path"]
    assert request["headers"].get("api-key") == SECRET
    assert SECRET not in repr(model) and SECRET not in str(model.to_dict())


def test_keys_never_in_repr_or_to_dict(fault_server):
    for model in (openai_model(fault_server), hf_model(fault_server)):
        assert SECRET not in repr(model)
        data = model.to_dict()
        assert SECRET not in str(data)
        assert data["model_id"] == "fake"
        assert "api_key" not in data and "token" not in data
        rebuilt = type(model).from_dict({**data, **({"api_key": "x"} if "api_base" in data else {})})
        assert rebuilt.to_dict() == data


def test_hfapimodel_is_a_deprecated_alias(fault_server):
    with pytest.warns(DeprecationWarning, match="InferenceClientModel"):
        model = HfApiModel("fake", base_url=fault_server.url, retry=FAST)
    assert isinstance(model, InferenceClientModel)
    assert model.generate(MESSAGES).content == ANSWER


def test_connection_refused_is_retried_then_one_error(unused_port):
    url = f"http://127.0.0.1:{unused_port}/v1"  # nothing listens there
    model = OpenAIServerModel("fake", api_base=url, api_key=SECRET, retry=FAST, timeout=2)
    with pytest.raises(ModelError) as info:
        model.generate(MESSAGES)
    text = str(info.value)
    assert "after 3 attempts" in text and "running and reachable" in text


def test_images_are_sent_as_data_urls_and_text_as_strings(fault_server):
    from PIL import Image

    fault_server.script = ["ok"]
    image = Image.new("RGB", (4, 4), "red")
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "What color?"}, {"type": "image", "image": image}]},
        {"role": "tool-response", "content": [{"type": "text", "text": "Observation: 3"}]},
    ]
    openai_model(fault_server).generate(messages)
    sent = fault_server.requests[0]["body"]["messages"]
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert sent[1]["content"][0] == {"type": "text", "text": "What color?"}
    assert sent[1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    # The tool response became a user turn, merged with its user neighbour.
    assert len(sent) == 2 and sent[1]["content"][2] == {"type": "text", "text": "Observation: 3"}
