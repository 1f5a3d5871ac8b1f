"""`ApiModel`: what every chat-completions API model shares.

Subclasses provide `_create(**params)` (one provider call, `stream=True` returning an iterator of
chunks) and `_describe_error(err)` (is this failure worth a retry, and what did the provider say).
Everything else is here: message conversion, tool schemas, stop sequences, usage, retries with
backoff, and stream handling (a stream that broke before any output is retried; one that broke
after is one clear `ModelError`).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from ._common import StopCutter, public_dict, tool_schemas
from .base import (
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
    encode_image_base64,
    get_clean_message_list,
    make_image_url,
    remove_stop_sequences,
    supports_stop_parameter,
)
from .cancel import CallCancelled, current_scope
from .cancellable_http import shutdown_stream
from .retry import ErrorInfo, RateLimiter, RetryPolicy, acall_with_retries, call_with_retries, final_error

__all__ = ["ApiModel", "MalformedResponse", "StreamTruncated"]


class MalformedResponse(Exception):
    """The provider answered 200 with something that is not a chat completion."""


class StreamTruncated(Exception):
    """The stream ended before the provider said the answer was finished."""


def _as_retry_policy(retry: RetryPolicy | dict[str, Any] | int | None) -> RetryPolicy:
    if isinstance(retry, RetryPolicy):
        return retry
    if isinstance(retry, dict):
        return RetryPolicy(**retry)
    if isinstance(retry, int):
        return RetryPolicy(max_retries=retry)
    return RetryPolicy()


def _image_url(image: Any) -> str:
    if isinstance(image, str):
        return image  # already a URL or a data URL
    return make_image_url(encode_image_base64(image))


def _api_content(content: Any) -> Any:
    """Text-only content as one string (some servers, e.g. llama.cpp's, accept nothing else for system
    messages); a list of parts only when there are images."""
    if not isinstance(content, list):
        return content
    if all(part.get("type") == "text" for part in content):
        return "\n".join(part.get("text", "") for part in content)
    parts = []
    for part in content:
        if part.get("type") == "image":
            parts.append({"type": "image_url", "image_url": {"url": _image_url(part["image"])}})
        else:
            parts.append(part)
    return parts


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key access: providers return objects, dicts or pydantic models."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _usage(raw: Any) -> TokenUsage | None:
    if raw is None:
        return None
    return TokenUsage(int(_get(raw, "prompt_tokens", 0) or 0), int(_get(raw, "completion_tokens", 0) or 0))


class _StreamReader:
    """Turns a provider's stream chunks into deltas: stop sequences cut, usage kept, the finish noted."""

    def __init__(self, cutter: StopCutter) -> None:
        self.cutter = cutter
        self.finished = False
        self.usage: TokenUsage | None = None
        self.pieces = 0  # content chunks: the output token count when the server streams no usage

    def read(self, chunk: Any) -> ChatMessageStreamDelta | None:
        self.usage = _usage(_get(chunk, "usage")) or self.usage
        choices = _get(chunk, "choices") or []
        if not choices:
            return None
        choice = choices[0]
        self.finished = self.finished or bool(_get(choice, "finish_reason"))
        delta = _get(choice, "delta")
        if delta is None:
            return None
        raw_text = _get(delta, "content") or ""
        self.pieces += bool(raw_text)
        text = self.cutter.feed(raw_text)
        calls = [
            ChatMessageToolCallStreamDelta(
                index=_get(tc, "index"),
                id=_get(tc, "id"),
                type=_get(tc, "type"),
                function=ChatMessageToolCallFunction(
                    name=_get(_get(tc, "function"), "name"),
                    arguments=_get(_get(tc, "function"), "arguments"),
                )
                if _get(tc, "function") is not None
                else None,
            )
            for tc in _get(delta, "tool_calls") or []
        ]
        return ChatMessageStreamDelta(content=text or None, tool_calls=calls or None) if text or calls else None

    def end(self) -> ChatMessageStreamDelta:
        if not self.finished:
            raise StreamTruncated("the stream ended before the model finished (no finish_reason was sent)")
        tail = self.cutter.flush()
        # Servers that ignore stream_options (llama.cpp's) send no usage: count one token per chunk,
        # and leave the prompt size unknown (0) rather than guess it.
        return ChatMessageStreamDelta(content=tail or None, token_usage=self.usage or TokenUsage(0, self.pieces))


async def _chunks(stream: Any) -> AsyncIterator[Any]:
    """The chunks of an async stream, or of a sync one read on a worker thread (the loop stays free)."""
    if hasattr(stream, "__aiter__"):
        async for chunk in stream:
            yield chunk
        return
    iterator, done = iter(stream), object()
    while (chunk := await asyncio.to_thread(next, iterator, done)) is not done:
        yield chunk


def _sleep_unless_cancelled(seconds: float) -> None:
    """Wait between retries and for a rate-limit slot, but not past a Stop (raises `CallCancelled`)."""
    current_scope().sleep(seconds)


class ApiModel(Model):
    """Base of the chat-completions API models (OpenAI, Azure, HF Inference, LiteLLM).

    Args:
        model_id: the model name the provider knows.
        timeout: seconds to wait for an answer (per attempt; for streams, between chunks).
        retry: a `RetryPolicy`, its dict, or a number of retries (default: 4 retries, 1 s doubling).
        custom_role_conversions: role mapping applied before sending (default: tool roles to user/assistant).
        flatten_messages_as_text: send content as one string instead of a list of parts.
        requests_per_minute: pace calls to at most this many a minute (each attempt counts; None: no limit).
        **kwargs: more completion parameters sent on every call (temperature, max_tokens, ...).
    """

    provider_name = "API"

    def __init__(
        self,
        model_id: str | None = None,
        timeout: float | None = 120,
        retry: RetryPolicy | dict[str, Any] | int | None = None,
        custom_role_conversions: dict[str, str] | None = None,
        flatten_messages_as_text: bool = False,
        requests_per_minute: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(flatten_messages_as_text=flatten_messages_as_text, model_id=model_id, **kwargs)
        self.timeout = timeout
        self.retry = _as_retry_policy(retry)
        self.custom_role_conversions = custom_role_conversions
        self._secrets: list[str] = []
        self.sleep = _sleep_unless_cancelled  # tests may replace it
        self.rate_limiter = RateLimiter(requests_per_minute, sleep=lambda seconds: self.sleep(seconds))

    @property
    def requests_per_minute(self) -> float | None:
        return self.rate_limiter.requests_per_minute

    def _request(self, **params: Any) -> Any:
        """One provider request, after waiting for its rate-limit slot."""
        self.rate_limiter.throttle()
        return self._create(**params)

    # -- hooks for subclasses -----------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        return "the provider's default endpoint"

    def _create(self, **params: Any) -> Any:
        raise NotImplementedError

    def _describe_error(self, err: BaseException) -> ErrorInfo:
        if isinstance(err, MalformedResponse):
            return ErrorInfo(
                False, str(err), status=200, hint="that the server speaks the OpenAI chat-completions protocol"
            )
        if isinstance(err, StreamTruncated):
            return ErrorInfo(True, str(err))
        if isinstance(err, json.JSONDecodeError):
            return ErrorInfo(
                False,
                f"the response body is not valid JSON ({err.msg})",
                status=200,
                hint="that the server speaks the OpenAI chat-completions protocol",
            )
        return ErrorInfo(False, f"{type(err).__name__}: {err}")

    def _init_args(self) -> dict[str, Any]:
        return {}

    # -- shared machinery ---------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def _describe(self, err: BaseException) -> ErrorInfo:
        info = self._describe_error(err)
        info.message = self._scrub(info.message)
        return info

    def to_dict(self) -> dict[str, Any]:
        args = {
            "model_id": self.model_id,
            **self._init_args(),
            "timeout": self.timeout,
            "retry": self.retry.dict(),
            "custom_role_conversions": self.custom_role_conversions,
            "flatten_messages_as_text": self.flatten_messages_as_text,
            "requests_per_minute": self.requests_per_minute,
            **self.kwargs,
        }
        return public_dict(type(self).__name__, args)

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.to_dict().items() if k in ("model_id", "api_base", "base_url", "provider")}
        keys = " ".join(f"{k}={v!r}" for k, v in shown.items())
        return f"{type(self).__name__}({keys})"

    def prepare_params(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """The provider call's parameters (messages converted, tools as JSON schemas)."""
        clean = get_clean_message_list(
            messages,
            role_conversions=self.custom_role_conversions or TOOL_ROLE_CONVERSIONS,
            flatten_messages_as_text=self.flatten_messages_as_text,
        )
        params: dict[str, Any] = {
            "model": self.model_id,
            "messages": [{"role": m["role"], "content": _api_content(m["content"])} for m in clean],
            **self.kwargs,
            **kwargs,
        }
        if stop_sequences and supports_stop_parameter(self.model_id or ""):
            params["stop"] = list(stop_sequences)
        if response_format is not None:
            params["response_format"] = response_format
        tools = tool_schemas(tools_to_call_from)
        if tools:
            params["tools"] = tools
            params.setdefault("tool_choice", "required")
        return params

    def _message(self, response: Any, stop_sequences: list[str] | None) -> ChatMessage:
        choices = _get(response, "choices")
        if not choices:
            raise MalformedResponse(f"the response has no choices: {str(response)[:300]!r}")
        message = _get(choices[0], "message")
        if message is None:
            raise MalformedResponse(f"the response's first choice has no message: {str(choices[0])[:300]!r}")
        calls = [
            ChatMessageToolCall(
                function=ChatMessageToolCallFunction(
                    name=_get(_get(tc, "function"), "name"), arguments=_get(_get(tc, "function"), "arguments")
                ),
                id=_get(tc, "id") or f"call_{i}",
            )
            for i, tc in enumerate(_get(message, "tool_calls") or [])
        ]
        content = _get(message, "content")
        if isinstance(content, str) and stop_sequences:
            content = remove_stop_sequences(content, stop_sequences)
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            content=content,
            tool_calls=calls or None,
            raw=response,
            token_usage=_usage(_get(response, "usage")) or TokenUsage(),
        )

    def generate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        params = self.prepare_params(messages, stop_sequences, response_format, tools_to_call_from, **kwargs)
        return call_with_retries(
            lambda: self._message(self._request(**params), stop_sequences),
            self.retry,
            self._describe,
            self.provider_name,
            self.endpoint,
            self.timeout,
            sleep=self.sleep,
        )

    async def agenerate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        """`generate` through the provider's async client (`_acreate`): same parameters, retries and errors."""
        params = self.prepare_params(messages, stop_sequences, response_format, tools_to_call_from, **kwargs)

        async def attempt() -> ChatMessage:
            await self.rate_limiter.athrottle()
            return self._message(await self._acreate(**params), stop_sequences)

        return await acall_with_retries(
            attempt, self.retry, self._describe, self.provider_name, self.endpoint, self.timeout
        )

    async def _acreate(self, **params: Any) -> Any:
        """One async provider call; subclasses with an async client override it (here: `_create` on a thread)."""
        return await asyncio.to_thread(functools.partial(self._create, **params))

    def _async_client_for_this_loop(self, make: Callable[[], Any]) -> Any:
        """The async client made by `make`, one per event loop: its connections belong to the loop they opened on."""
        loop = asyncio.get_running_loop()
        cached = self.__dict__.get("_async_client_cache")
        if cached is None or cached[0] is not loop:
            cached = self.__dict__["_async_client_cache"] = (loop, make())
        return cached[1]

    def _stream_once(self, params: dict[str, Any], cutter: StopCutter) -> Iterator[ChatMessageStreamDelta]:
        stream = self._request(stream=True, **params)
        reader = _StreamReader(cutter)
        scope = current_scope()
        try:
            with scope.while_running(lambda: shutdown_stream(stream)):  # a Stop ends a read waiting for a chunk
                for chunk in stream:
                    scope.check()
                    delta = reader.read(chunk)
                    if delta is not None:
                        yield delta
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()
        yield reader.end()

    async def _astream_once(self, params: dict[str, Any], cutter: StopCutter) -> AsyncIterator[ChatMessageStreamDelta]:
        await self.rate_limiter.athrottle()
        stream = await self._acreate(stream=True, **params)
        reader = _StreamReader(cutter)
        try:
            async for chunk in _chunks(stream):
                delta = reader.read(chunk)
                if delta is not None:
                    yield delta
        finally:
            close = getattr(stream, "aclose", None) or getattr(stream, "close", None)
            if callable(close):
                closed = close()
                if inspect.isawaitable(closed):
                    await closed
        yield reader.end()

    def generate_stream(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatMessageStreamDelta]:
        params = self.prepare_params(messages, stop_sequences, response_format, tools_to_call_from, **kwargs)
        params.update(self._stream_params())
        delays = self.retry.delays()
        attempts = 0
        while True:
            attempts += 1
            emitted = False
            try:
                for delta in self._stream_once(params, StopCutter(stop_sequences)):
                    emitted = emitted or bool(delta.content or delta.tool_calls)
                    yield delta
                return
            except ModelError:
                raise
            except Exception as err:
                self.sleep(self._stream_retry_wait(err, emitted, delays, attempts))

    async def agenerate_stream(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatMessageStreamDelta]:
        """`generate_stream` through the provider's async client: the same deltas, retries and errors."""
        params = self.prepare_params(messages, stop_sequences, response_format, tools_to_call_from, **kwargs)
        params.update(self._stream_params())
        delays = self.retry.delays()
        attempts = 0
        while True:
            attempts += 1
            emitted = False
            try:
                async for delta in self._astream_once(params, StopCutter(stop_sequences)):
                    emitted = emitted or bool(delta.content or delta.tool_calls)
                    yield delta
                return
            except ModelError:
                raise
            except Exception as err:
                await asyncio.sleep(self._stream_retry_wait(err, emitted, delays, attempts))

    def _stream_retry_wait(self, err: Exception, emitted: bool, delays: Iterator[float], attempts: int) -> float:
        """Seconds to wait before retrying a failed stream, or the final error (raised from `err`).

        A stream that already gave output is not retried: the caller has shown part of an answer.
        A stopped call is not retried either: its failure (a cut connection) is `CallCancelled`.
        """
        scope = current_scope()
        if scope.cancelled:
            raise CallCancelled(f"{self.provider_name} stream stopped: {scope.reason}") from err
        info = self._describe(err)
        if emitted:
            info.message = f"the stream broke off after partial output ({info.message})"
            info.status = info.status or 200
            raise final_error(self.provider_name, self.endpoint, info, attempts, self.timeout) from err
        delay = next(delays, None) if info.retryable else None
        if delay is None:
            raise final_error(self.provider_name, self.endpoint, info, attempts, self.timeout) from err
        return self.retry.wait(delay, info.retry_after)

    def _stream_params(self) -> dict[str, Any]:
        return {"stream_options": {"include_usage": True}}
