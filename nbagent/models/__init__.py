"""Models: one protocol (`Model.generate` / `generate_stream`), local runtimes and API clients.

Heavy runtimes (torch, llama.cpp, openai, huggingface_hub) are imported only when their class is used.

Modules:
    base           messages, deltas, the Model protocol, message cleaning, stop sequences, tool calls in text
    api            ApiModel: what every chat-completions API model shares (retries, pacing, streams)
    retry          RetryPolicy, RateLimiter, one ModelError per failed call
    cancel         CancelScope: one model call's cancellation (Stop), found by the model in a context variable
    cancellable_http  httpx connections a cancelled call shuts down (a blocked read ends at once)
    openai_server  OpenAIServerModel / OpenAIModel, AzureOpenAIServerModel / AzureOpenAIModel
    hf_inference   InferenceClientModel (+ deprecated HfApiModel)
    litellm_model  LiteLLMModel, LiteLLMRouterModel
    transformers   TransformersModel (local, prefix cache reused across steps)
    llamacpp       LlamaCppModel (local GGUF)
    default        default_model(): the offline default
    runtime        llama-cpp-python built for this CPU (AMX detection), kept as a wheel in the cache
    setup          `nbagent setup`: the default model's weights and runtime installed and checked
    scripted       ScriptedModel: answers written in advance
    spec           a model from a short text (CLI, magics); load_model (smolagents' CLI helper)
    bedrock        AmazonBedrockModel (boto3's Converse API)
    unavailable    VLLMModel, MLXModel: what they need, said at construction (a GPU, Apple silicon)
    _common        small shared helpers

`MODEL_REGISTRY` maps each model class name to its class (built on first use).
"""

from __future__ import annotations

import importlib
from typing import Any

from ._common import CODEAGENT_RESPONSE_FORMAT
from .base import (
    REMOVE_PARAMETER,
    TOOL_ROLE_CONVERSIONS,
    ChatMessage,
    ChatMessageStreamDelta,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    ChatMessageToolCallStreamDelta,
    MessageRole,
    Model,
    ModelError,
    TokenUsage,
    agglomerate_stream_deltas,
    encode_image_base64,
    get_clean_message_list,
    get_tool_call_from_text,
    make_image_url,
    parse_json_if_needed,
    parse_json_tool_call,
    remove_content_after_stop_sequences,
    supports_stop_parameter,
)

_LAZY = {
    "TransformersModel": "transformers",
    "LlamaCppModel": "llamacpp",
    "OpenAIServerModel": "openai_server",
    "OpenAIModel": "openai_server",
    "AzureOpenAIServerModel": "openai_server",
    "AzureOpenAIModel": "openai_server",
    "InferenceClientModel": "hf_inference",
    "HfApiModel": "hf_inference",
    "LiteLLMModel": "litellm_model",
    "LiteLLMRouterModel": "litellm_model",
    "ScriptedModel": "scripted",
    "ApiModel": "api",
    "default_model": "default",
    "RetryPolicy": "retry",
    "RateLimiter": "retry",
    "AmazonBedrockModel": "bedrock",
    "AmazonBedrockServerModel": "bedrock",
    "VLLMModel": "unavailable",
    "MLXModel": "unavailable",
    "load_model": "spec",
}
# Model classes by name (MODEL_REGISTRY), as saved agents name them.
_MODEL_CLASSES = (
    "TransformersModel",
    "LlamaCppModel",
    "OpenAIServerModel",
    "OpenAIModel",
    "AzureOpenAIServerModel",
    "AzureOpenAIModel",
    "InferenceClientModel",
    "HfApiModel",
    "LiteLLMModel",
    "LiteLLMRouterModel",
    "ScriptedModel",
    "AmazonBedrockModel",
    "VLLMModel",
    "MLXModel",
)

__all__ = [
    "CODEAGENT_RESPONSE_FORMAT",
    "ChatMessage",
    "ChatMessageStreamDelta",
    "ChatMessageToolCall",
    "ChatMessageToolCallFunction",
    "ChatMessageToolCallStreamDelta",
    "MODEL_REGISTRY",
    "MessageRole",
    "Model",
    "ModelError",
    "REMOVE_PARAMETER",
    "TOOL_ROLE_CONVERSIONS",
    "TokenUsage",
    "agglomerate_stream_deltas",
    "encode_image_base64",
    "get_clean_message_list",
    "get_tool_call_from_text",
    "get_tool_json_schema",
    "make_image_url",
    "parse_json_if_needed",
    "parse_json_tool_call",
    "remove_content_after_stop_sequences",
    "supports_stop_parameter",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name == "MODEL_REGISTRY":
        registry = {cls_name: __getattr__(cls_name) for cls_name in _MODEL_CLASSES}
        globals()[name] = registry
        return registry
    if name == "get_tool_json_schema":
        from nbagent.tools import get_tool_json_schema  # tools is a lower layer; imported when asked for

        globals()[name] = get_tool_json_schema
        return get_tool_json_schema
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
