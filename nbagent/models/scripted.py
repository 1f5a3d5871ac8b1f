"""`ScriptedModel`: a model whose answers are written in advance.

For tests, demos and teaching: the loop, the widget and the controls behave
exactly as with a real model, deterministically and instantly (or with a
simulated latency and token-by-token streaming).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from nbagent.models.base import (
    ChatMessage,
    ChatMessageStreamDelta,
    ChatMessageToolCall,
    MessageRole,
    Model,
    ModelError,
    TokenUsage,
    message_as_delta,
    remove_stop_sequences,
)
from nbagent.models.cancel import current_scope

__all__ = ["ScriptedModel"]

Response = str | ChatMessage | dict[str, Any]
_TOKEN = re.compile(r"\s*\S+|\s+")


class ScriptedModel(Model):
    """Answers from a list (one per call, in order) or from a callable.

    Args:
        responses: a list of answers, or `f(messages, **kwargs) -> answer`.
            An answer is the assistant text, a `ChatMessage` (e.g. with
            `tool_calls`), or a dict with `content` and optional `tool_calls`.
        latency: seconds to wait before answering (time to first token).
        token_delay: seconds between streamed tokens.
        model_id: shown in views and saved with agents.
    """

    def __init__(
        self,
        responses: Sequence[Response] | Callable[..., Response],
        latency: float = 0.0,
        token_delay: float = 0.0,
        model_id: str = "scripted",
    ) -> None:
        super().__init__(model_id=model_id)
        if not callable(responses) and isinstance(responses, (str, bytes)):
            raise TypeError("ScriptedModel(responses=...) takes a list of answers or a callable, not a single string")
        self.responses = responses if callable(responses) else list(responses)
        self.latency = latency
        self.token_delay = token_delay
        self.calls: list[list[Any]] = []  # the messages of every call, for inspection in tests and lessons

    def _next_response(self, messages: list[Any], **kwargs: Any) -> ChatMessage:
        self.calls.append(list(messages))
        if callable(self.responses):
            answer = self.responses(messages, **kwargs)
        else:
            index = len(self.calls) - 1
            if index >= len(self.responses):
                raise ModelError(
                    f"ScriptedModel ran out of responses: call {index + 1} but only {len(self.responses)} scripted. "
                    f"The last message it was sent ends: {_tail(messages)!r}. Add more responses or lower max_steps."
                )
            answer = self.responses[index]
        return _as_message(answer)

    def generate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        message = self._next_response(messages, **kwargs)
        if self.latency:
            current_scope().sleep(self.latency)  # a Stop ends the wait (CallCancelled), like a real model's call
        message.content = remove_stop_sequences(message.text, stop_sequences)
        message.token_usage = TokenUsage(_count_tokens(messages), _count(message.content))
        return message

    def generate_stream(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatMessageStreamDelta]:
        message = self.generate(messages, stop_sequences, response_format, tools_to_call_from, **kwargs)
        if message.tool_calls:  # tool calls arrive whole, as one delta
            yield message_as_delta(message)
            return
        for token in _TOKEN.findall(message.text):
            if self.token_delay:
                current_scope().sleep(self.token_delay)
            yield ChatMessageStreamDelta(content=token)
        yield ChatMessageStreamDelta(token_usage=message.token_usage)

    def to_dict(self) -> dict[str, Any]:
        data = {"class": "ScriptedModel", "model_id": self.model_id, "latency": self.latency}
        if not callable(self.responses):
            data["responses"] = [r if isinstance(r, str) else _as_message(r).dict() for r in self.responses]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScriptedModel:
        responses = [r if isinstance(r, str) else ChatMessage.from_dict(r) for r in data.get("responses", [])]
        return cls(responses, latency=data.get("latency", 0.0), model_id=data.get("model_id", "scripted"))


def _as_message(answer: Response) -> ChatMessage:
    if isinstance(answer, ChatMessage):
        return ChatMessage(role=MessageRole.ASSISTANT, content=answer.content, tool_calls=answer.tool_calls)
    if isinstance(answer, dict):
        calls = [
            c if isinstance(c, ChatMessageToolCall) else ChatMessageToolCall.from_dict(c)
            for c in answer.get("tool_calls") or []
        ]
        return ChatMessage(role=MessageRole.ASSISTANT, content=answer.get("content"), tool_calls=calls or None)
    if isinstance(answer, str):
        return ChatMessage(role=MessageRole.ASSISTANT, content=answer)
    raise TypeError(f"A scripted answer must be a str, ChatMessage or dict, got {type(answer).__name__}")


def _count(text: str | None) -> int:
    return len(_TOKEN.findall(text or ""))


def _texts(message: Any) -> list[str]:
    content = message.content if isinstance(message, ChatMessage) else message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [part.get("text") or "" for part in content if isinstance(part, dict)]
    return []


def _count_tokens(messages: list[Any]) -> int:
    return sum(_count(text) for message in messages for text in _texts(message))


def _tail(messages: list[Any], size: int = 400) -> str:
    """The end of the last message: what the scripted run had come to when its script ran out (an error, mostly)."""
    return "".join(_texts(messages[-1]))[-size:] if messages else ""
