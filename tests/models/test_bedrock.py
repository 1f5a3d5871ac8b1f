"""`AmazonBedrockModel` through boto3's real `bedrock-runtime` client, pointed at a loopback server that speaks the
Converse API (`client_kwargs={"endpoint_url": ...}`): the request botocore signs and sends, the reply read back,
Bedrock's errors and missing credentials as one clear `ModelError`, and a CodeAgent run on it."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from typing import Any

import pytest
from loopback import LoopbackAPI, Reply, Request
from PIL import Image

from nbagent import AmazonBedrockModel, ChatMessage, CodeAgent, MessageRole, ModelError

pytest.importorskip("boto3")

MODEL_ID = "us.amazon.nova-pro-v1:0"


def converse_reply(text: str, input_tokens: int = 12, output_tokens: int = 5) -> dict[str, Any]:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [{"reasoningContent": {"reasoningText": {"text": "Let me think."}}}, {"text": text}],
            }
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + 5},
        "metrics": {"latencyMs": 3},
    }


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Test credentials and no way to reach AWS's own credential services (the instance metadata endpoint)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDLOOPBACK")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "loopback-secret")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")


@pytest.fixture
def bedrock(aws_env: None) -> Iterator[LoopbackAPI]:
    replies = iter(
        ["Hello from Bedrock.\nObservation: cut here", "Thought: done.\n```python\nfinal_answer(6 * 7)\n```"]
    )

    def answer(request: Request) -> Any:
        if not request.path.endswith("/converse"):
            return Reply({"message": f"no route {request.path}"}, 404)
        return converse_reply(next(replies))

    with LoopbackAPI(answer) as api:
        yield api


def model_for(api: LoopbackAPI, **kwargs: Any) -> AmazonBedrockModel:
    return AmazonBedrockModel(MODEL_ID, client_kwargs={"endpoint_url": api.url, "region_name": "us-east-1"}, **kwargs)


def test_a_converse_call_goes_out_signed_and_comes_back_as_a_message(bedrock: LoopbackAPI) -> None:
    model = model_for(bedrock, inferenceConfig={"maxTokens": 300})
    messages = [
        ChatMessage(role=MessageRole.SYSTEM, content="You are terse."),
        ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": "Say hello."}]),
    ]
    reply = model.generate(messages, stop_sequences=["Observation:"], temperature=0.2)
    assert reply.content == "Hello from Bedrock.\n" and reply.role == MessageRole.ASSISTANT
    assert (reply.token_usage.input_tokens, reply.token_usage.output_tokens) == (12, 5)
    [request] = bedrock.requests
    assert request.path == "/model/us.amazon.nova-pro-v1%3A0/converse"  # botocore quotes the id
    assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDLOOPBACK/")
    assert request.body["system"] == [{"text": "You are terse."}]
    assert request.body["messages"] == [{"role": "user", "content": [{"text": "Say hello."}]}]
    assert request.body["inferenceConfig"] == {"maxTokens": 300, "stopSequences": ["Observation:"], "temperature": 0.2}
    assert "toolConfig" not in request.body


def test_an_image_goes_as_png_bytes_and_roles_alternate(bedrock: LoopbackAPI) -> None:
    picture = Image.new("RGB", (3, 2), "red")
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image", "image": picture}]},
        {"role": "tool-call", "content": [{"type": "text", "text": "calling look()"}]},
        {"role": "tool-response", "content": [{"type": "text", "text": "red"}]},
    ]
    model_for(bedrock).generate(messages)
    sent = bedrock.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    image = sent[0]["content"][1]["image"]
    assert image["format"] == "png"
    assert Image.open(io.BytesIO(base64.b64decode(image["source"]["bytes"]))).getpixel((0, 0)) == (255, 0, 0)


def test_a_code_agent_runs_on_bedrock(bedrock: LoopbackAPI) -> None:
    agent = CodeAgent(tools=[], model=model_for(bedrock), max_steps=3, verbosity_level=-1, show_widget=False)
    assert agent.run("What is 6 times 7?") == 42
    assert len(bedrock.requests) == 2


def test_bedrock_s_refusal_is_one_clear_model_error(aws_env: None) -> None:
    def refuse(request: Request) -> Reply:
        return Reply(
            {"message": "The provided model identifier is invalid."},
            400,
            {"x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"},
        )

    with LoopbackAPI(refuse) as api, pytest.raises(ModelError) as raised:
        model_for(api).generate([{"role": "user", "content": "hi"}])
    assert "Bedrock refused the call to 'us.amazon.nova-pro-v1:0' (400 ValidationException" in str(raised.value)
    assert "The provided model identifier is invalid." in str(raised.value)


def test_missing_credentials_say_what_is_needed(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    with LoopbackAPI(lambda request: converse_reply("never")) as api, pytest.raises(ModelError) as raised:
        model_for(api).generate([{"role": "user", "content": "hi"}])
    assert "needs AWS credentials" in str(raised.value) and "AWS_BEARER_TOKEN_BEDROCK" in str(raised.value)
    assert api.requests == []


def test_response_format_is_refused_as_in_smolagents(bedrock: LoopbackAPI) -> None:
    with pytest.raises(ValueError, match="does not support response_format"):
        model_for(bedrock).generate([{"role": "user", "content": "hi"}], response_format={"type": "json_object"})
