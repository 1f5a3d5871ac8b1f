"""Models: one protocol (`Model.generate` / `generate_stream`), local runtimes and API clients.

Heavy runtimes (torch, llama.cpp, openai, huggingface_hub) are imported only when their class is used.
"""

from __future__ import annotations

import importlib
from typing import Any

from .base import (
    ChatMessage,
    ChatMessageStreamDelta,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
    ModelError,
    TokenUsage,
    agglomerate_stream_deltas,
    get_clean_message_list,
    parse_json_tool_call,
)

_LAZY = {
    "TransformersModel": "transformers",
    "LlamaCppModel": "llamacpp",
    "OpenAIServerModel": "openai_server",
    "AzureOpenAIServerModel": "openai_server",
    "InferenceClientModel": "hf_inference",
    "HfApiModel": "hf_inference",
    "LiteLLMModel": "litellm_model",
    "ScriptedModel": "scripted",
    "default_model": "default",
    "RetryPolicy": "retry",
}

__all__ = [
    "ChatMessage",
    "ChatMessageStreamDelta",
    "ChatMessageToolCall",
    "ChatMessageToolCallFunction",
    "MessageRole",
    "Model",
    "ModelError",
    "TokenUsage",
    "agglomerate_stream_deltas",
    "get_clean_message_list",
    "parse_json_tool_call",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
