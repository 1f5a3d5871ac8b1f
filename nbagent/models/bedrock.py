"""`AmazonBedrockModel`: a model on Amazon Bedrock through boto3's Converse API (smolagents' class and options).

Bedrock is not a chat-completions API, so this is a `Model` of its own rather than an `ApiModel`: messages become
Converse messages (text and image blocks; the system prompt in `system`), the stop sequences and `inferenceConfig`
go together, and the answer's last text block is the reply. As in smolagents, no `toolConfig` is sent (the agent's
prompt carries the tools) and `response_format` is refused. botocore retries throttled calls itself
(`client_kwargs={"config": botocore.config.Config(retries=...)}`); every other failure is one `ModelError` saying
what to check. `client_kwargs` build the client (`region_name`, `endpoint_url`, `config`); credentials come from
boto3's usual chain or `AWS_BEARER_TOKEN_BEDROCK` (boto3 >= 1.39).
"""

from __future__ import annotations

import io
from typing import Any

from .base import (
    ChatMessage,
    MessageRole,
    Model,
    ModelError,
    TokenUsage,
    get_clean_message_list,
    remove_content_after_stop_sequences,
)

__all__ = ["AmazonBedrockModel", "AmazonBedrockServerModel"]

_INSTALL = "AmazonBedrockModel needs boto3: pip install 'jupyter-nbagent[bedrock]'"
_CREDENTIALS = (
    "AWS credentials (the usual chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a profile, a role) or a Bedrock "
    "API key in AWS_BEARER_TOKEN_BEDROCK, and a region (client_kwargs={'region_name': ...} or AWS_REGION)"
)
# Bedrock's roles are user and assistant; tool turns are spoken by them (the system prompt has its own field).
_ROLES = {
    MessageRole.TOOL_CALL: MessageRole.ASSISTANT,
    MessageRole.TOOL_RESPONSE: MessageRole.USER,
}


class AmazonBedrockModel(Model):
    """A Bedrock model (e.g. `"us.amazon.nova-pro-v1:0"`) through `bedrock-runtime`'s `converse`.

    Args:
        model_id: the Bedrock model or inference profile id.
        client: a ready `boto3.client("bedrock-runtime")`; else one is made from `client_kwargs`.
        client_kwargs: for `boto3.client` (`region_name`, `endpoint_url`, `config`, ...).
        custom_role_conversions: roles to rewrite before sending (smolagents' default rewrote every role to user;
            here the system prompt goes in Converse's `system` and the assistant keeps its role).
        **kwargs: sent with every call (`inferenceConfig`, `guardrailConfig`, `additionalModelRequestFields`).
    """

    def __init__(
        self,
        model_id: str,
        client: Any = None,
        client_kwargs: dict[str, Any] | None = None,
        custom_role_conversions: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model_id=model_id, **kwargs)
        self.client_kwargs = dict(client_kwargs or {})
        self.custom_role_conversions = {**_ROLES, **(custom_role_conversions or {})}
        self.client = client if client is not None else self.create_client()

    def create_client(self) -> Any:
        try:
            import boto3
        except ImportError:
            raise ImportError(_INSTALL) from None
        # a session of its own: boto3's default one keeps the credentials it first found for the whole process
        return boto3.session.Session().client("bedrock-runtime", **self.client_kwargs)

    def generate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        if response_format is not None:
            raise ValueError("Amazon Bedrock does not support response_format")
        request = self.converse_request(messages, stop_sequences, **kwargs)
        response = self._converse(request)
        return self._reply(response, stop_sequences)

    def converse_request(
        self, messages: list[ChatMessage | dict[str, Any]], stop_sequences: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """The `converse` call's arguments: the model, `system`, the user/assistant turns, the configs."""
        cleaned = get_clean_message_list(messages, role_conversions=self.custom_role_conversions)
        system = [block for m in cleaned if m["role"] == "system" for block in _blocks(m["content"])]
        turns = [{"role": m["role"], "content": _blocks(m["content"])} for m in cleaned if m["role"] != "system"]
        options = {**self.kwargs, **kwargs}
        inference = dict(options.pop("inferenceConfig", None) or {})
        if stop_sequences:
            inference["stopSequences"] = list(stop_sequences)
        for ours, theirs in (("max_tokens", "maxTokens"), ("temperature", "temperature"), ("top_p", "topP")):
            if ours in options:
                inference[theirs] = options.pop(ours)
        request: dict[str, Any] = {"modelId": self.model_id, "messages": turns, **options}
        if system:
            request["system"] = system
        if inference:
            request["inferenceConfig"] = inference
        return request

    def _converse(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.client.converse(**request)
        except Exception as failure:  # botocore's errors: ClientError (HTTP), NoCredentialsError, EndpointConnection
            raise ModelError(_explained(failure, self.model_id)) from failure

    def _reply(self, response: dict[str, Any], stop_sequences: list[str] | None) -> ChatMessage:
        try:
            message = response["output"]["message"]
            texts = [block["text"] for block in message["content"] if "text" in block]
            usage = response.get("usage") or {}
        except (KeyError, TypeError) as missing:
            raise ModelError(f"Bedrock answered without a message ({missing!r} missing): {response!r:.300}") from None
        if not texts:
            raise ModelError("Bedrock's answer holds no text block (only reasoning or tool use)")
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            content=remove_content_after_stop_sequences(texts[-1], stop_sequences),  # a reasoning block comes first
            raw=response,
            token_usage=TokenUsage(int(usage.get("inputTokens", 0)), int(usage.get("outputTokens", 0))),
        )

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["client_kwargs"] = {k: v for k, v in self.client_kwargs.items() if isinstance(v, (str, int, float))}
        return data


AmazonBedrockServerModel = AmazonBedrockModel


def _blocks(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Message parts as Converse content blocks: `{"text": ...}` and `{"image": {"format", "source"}}`."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") == "image":
            blocks.append({"image": {"format": "png", "source": {"bytes": _png(part["image"])}}})
        elif part.get("text"):
            blocks.append({"text": part["text"]})
    return blocks or [{"text": " "}]  # Converse refuses an empty content list


def _png(image: Any) -> bytes:
    if isinstance(image, (bytes, bytearray)):
        return bytes(image)
    buffer = io.BytesIO()
    (image.to_raw() if hasattr(image, "to_raw") else image).save(buffer, format="PNG")
    return buffer.getvalue()


def _explained(failure: Exception, model_id: str) -> str:
    name = type(failure).__name__
    if name in ("NoCredentialsError", "PartialCredentialsError", "NoRegionError"):
        return f"AmazonBedrockModel({model_id!r}) cannot call Bedrock: {failure}. It needs {_CREDENTIALS}."
    error = getattr(failure, "response", {}).get("Error", {}) if hasattr(failure, "response") else {}
    status = (getattr(failure, "response", {}) or {}).get("ResponseMetadata", {}).get("HTTPStatusCode")
    if error:
        return (
            f"Bedrock refused the call to {model_id!r} ({status} {error.get('Code', name)}: "
            f"{error.get('Message', failure)}). Check the model id, its access in your account and region, and "
            "the request's configs."
        )
    return f"The call to Bedrock for {model_id!r} failed ({name}: {failure}). Check the endpoint and the network."
