"""Message types and the `Model` protocol shared by every model.

Field names follow smolagents so that code written for it keeps working:
messages are `ChatMessage` objects (or plain dicts of the same shape) whose
`content` is either a string or a list of `{"type": "text" | "image", ...}`
parts.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import functools
import io
import json
import re
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

__all__ = [
    "MessageRole",
    "TokenUsage",
    "ChatMessageToolCallFunction",
    "ChatMessageToolCall",
    "ChatMessageToolCallStreamDelta",
    "ChatMessage",
    "ChatMessageStreamDelta",
    "Model",
    "ModelError",
    "REMOVE_PARAMETER",
    "agglomerate_stream_deltas",
    "encode_image_base64",
    "get_clean_message_list",
    "get_tool_call_from_text",
    "jsonable",
    "make_image_url",
    "message_as_delta",
    "parse_json_if_needed",
    "parse_json_tool_call",
    "remove_content_after_stop_sequences",
    "remove_stop_sequences",
    "supports_stop_parameter",
]


class MessageRole(str, Enum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL_CALL = "tool-call"
    TOOL_RESPONSE = "tool-response"

    @classmethod
    def roles(cls) -> list[str]:
        return [r.value for r in cls]


# Roles that APIs without tool-call roles understand.
TOOL_ROLE_CONVERSIONS = {
    MessageRole.TOOL_CALL: MessageRole.ASSISTANT,
    MessageRole.TOOL_RESPONSE: MessageRole.USER,
}


class ModelError(RuntimeError):
    """A model call failed; the message says what happened and what to check."""


@dataclass
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage | None) -> TokenUsage:
        if other is None:
            return TokenUsage(self.input_tokens, self.output_tokens)
        return TokenUsage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)

    def dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass
class ChatMessageToolCallFunction:
    name: str
    arguments: Any = None
    description: str | None = None


@dataclass
class ChatMessageToolCall:
    function: ChatMessageToolCallFunction
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")
    type: str = "function"

    def dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "function": asdict(self.function)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatMessageToolCall:
        fn = data.get("function", data)
        return cls(
            function=ChatMessageToolCallFunction(
                name=fn["name"], arguments=fn.get("arguments"), description=fn.get("description")
            ),
            id=data.get("id") or f"call_{uuid.uuid4().hex[:12]}",
            type=data.get("type", "function"),
        )


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-safe view of a provider's raw response: plain data kept, pydantic models and dataclasses
    turned into dicts, anything else named by its class (never a repr of tensors or caches)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth > 20:
        return f"<{type(value).__qualname__}>"
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return jsonable(dump(), depth + 1)
        except Exception:  # a mock or a half-built model: fall back to its name
            pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    return f"<{type(value).__module__}.{type(value).__qualname__}>"


def _as_tool_call(call: Any) -> ChatMessageToolCall:
    """Tool calls given as dicts or provider objects (pydantic) become `ChatMessageToolCall`s."""
    if isinstance(call, ChatMessageToolCall):
        return call
    if not isinstance(call, Mapping):
        dump = getattr(call, "model_dump", None)
        call = dump() if callable(dump) else {"id": getattr(call, "id", None), "function": call.function}
    function = call.get("function", call)
    if not isinstance(function, Mapping):
        function = {"name": getattr(function, "name", None), "arguments": getattr(function, "arguments", None)}
    return ChatMessageToolCall.from_dict({**call, "function": function})


@dataclass
class ChatMessage:
    role: MessageRole | str
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[ChatMessageToolCall] | None = None
    raw: Any | None = None  # the provider's own response; dict() gives a JSON-safe view of it
    token_usage: TokenUsage | None = None

    def __post_init__(self) -> None:
        if isinstance(self.role, str) and not isinstance(self.role, MessageRole):
            try:
                self.role = MessageRole(self.role)
            except ValueError:
                raise ValueError(f"Unknown message role {self.role!r}; expected one of {MessageRole.roles()}") from None
        if self.tool_calls is not None:
            self.tool_calls = [_as_tool_call(call) for call in self.tool_calls]

    @property
    def text(self) -> str:
        """The message's text, joining text parts of a multi-part content."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.get("text", "") for part in self.content if part.get("type") == "text")

    def dict(self) -> dict[str, Any]:
        """Plain data (smolagents' keys, `raw` included as a JSON-safe view); images show as "<image>"."""
        return {
            "role": self.role.value if isinstance(self.role, MessageRole) else self.role,
            "content": _jsonable_content(self.content),
            "tool_calls": [tc.dict() for tc in self.tool_calls] if self.tool_calls else None,
            "raw": jsonable(self.raw),
            "token_usage": self.token_usage.dict() if self.token_usage else None,
        }

    def model_dump_json(self) -> str:
        """JSON of `dict()` without `raw` (as smolagents)."""
        return json.dumps({k: v for k, v in self.dict().items() if k != "raw"})

    def render_as_markdown(self) -> str:
        """The text, then one JSON line per tool call."""
        rendered = self.text
        if self.tool_calls:
            rendered += "\n".join(
                json.dumps({"tool": tc.function.name, "arguments": tc.function.arguments}, default=str)
                for tc in self.tool_calls
            )
        return rendered

    def __getitem__(self, key: str) -> Any:
        """`message["role"]`, `message["content"]`: messages were dicts in smolagents <= 1.9."""
        if key == "role":
            return self.role.value if isinstance(self.role, MessageRole) else self.role
        if key in ("content", "tool_calls", "raw", "token_usage"):
            return getattr(self, key)
        raise KeyError(f"{key!r}: a ChatMessage has the keys 'role', 'content', 'tool_calls', 'raw' and 'token_usage'")

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], raw: Any | None = None, token_usage: TokenUsage | None = None
    ) -> ChatMessage:
        """Rebuild a message from `dict()` output (or any dict of the same shape); `raw`/`token_usage` override."""
        usage = data.get("token_usage")
        if token_usage is None and usage:
            token_usage = (
                usage if isinstance(usage, TokenUsage) else TokenUsage(usage["input_tokens"], usage["output_tokens"])
            )
        return cls(
            role=data["role"],
            content=data.get("content"),
            tool_calls=list(data["tool_calls"]) if data.get("tool_calls") else None,
            raw=raw if raw is not None else data.get("raw"),
            token_usage=token_usage,
        )


def _jsonable_content(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        if part.get("type") == "image" and not isinstance(part.get("image"), (str, type(None))):
            parts.append({"type": "image", "image": "<image>"})
        else:
            parts.append(part)
    return parts


@dataclass
class ChatMessageToolCallStreamDelta:
    index: int | None = None
    id: str | None = None
    type: str | None = None
    function: ChatMessageToolCallFunction | None = None


@dataclass
class ChatMessageStreamDelta:
    content: str | None = None
    tool_calls: list[ChatMessageToolCallStreamDelta] | None = None
    token_usage: TokenUsage | None = None


def agglomerate_stream_deltas(deltas: list[ChatMessageStreamDelta]) -> ChatMessage:
    """Join streamed deltas into one assistant `ChatMessage`."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    usage: TokenUsage | None = None
    for delta in deltas:
        if delta.content:
            text.append(delta.content)
        if delta.token_usage:
            usage = delta.token_usage + usage if usage else delta.token_usage
        for tc in delta.tool_calls or []:
            slot = calls.setdefault(tc.index or 0, {"id": None, "name": "", "arguments": ""})
            slot["id"] = tc.id or slot["id"]
            if tc.function:
                slot["name"] += tc.function.name or ""
                args = tc.function.arguments
                if isinstance(args, str) and isinstance(slot["arguments"], str):
                    slot["arguments"] += args
                elif args is not None:  # a whole (already decoded) argument object
                    slot["arguments"] = args
    tool_calls = [
        ChatMessageToolCall(
            function=ChatMessageToolCallFunction(name=c["name"], arguments=c["arguments"]),
            id=c["id"] or f"call_{i}",
        )
        for i, c in sorted(calls.items())
    ]
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        content="".join(text),
        tool_calls=tool_calls or None,
        token_usage=usage,
    )


def message_as_delta(message: ChatMessage) -> ChatMessageStreamDelta:
    """A whole message as one stream delta (for models that cannot stream it piece by piece)."""
    calls = [
        ChatMessageToolCallStreamDelta(index=i, id=tc.id, type=tc.type, function=tc.function)
        for i, tc in enumerate(message.tool_calls or [])
    ]
    return ChatMessageStreamDelta(content=message.text, tool_calls=calls or None, token_usage=message.token_usage)


def remove_content_after_stop_sequences(content: str | None, stop_sequences: list[str] | None) -> str | None:
    """smolagents' name for `remove_stop_sequences`; `None` content (a tool-call-only answer) stays `None`."""
    return content if content is None else remove_stop_sequences(content, stop_sequences)


# Reasoning models that refuse the `stop` parameter (their output is cut client-side instead): OpenAI's
# o3 (not o3-mini) and o4 families, the gpt-5 family and xAI's grok models, with any version suffix.
_NO_STOP_MODEL = re.compile(r"^(?:o3(?:$|[-.].*)|o4(?:$|[-.].*)|gpt-5.*|(?:[A-Za-z][\w-]*\.)?grok-[A-Za-z0-9][\w.-]*)$")


def supports_stop_parameter(model_id: str) -> bool:
    """Whether the model accepts `stop` (judged on the last path segment: "openai/o3" is "o3")."""
    name = (model_id or "").split("/")[-1]
    return name == "o3-mini" or not _NO_STOP_MODEL.match(name)


def encode_image_base64(image: Any) -> str:
    """A PIL image (or PNG/JPEG bytes) as base64 text."""
    if isinstance(image, (bytes, bytearray)):
        return base64.b64encode(bytes(image)).decode("ascii")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def make_image_url(base64_image: str) -> str:
    return f"data:image/png;base64,{base64_image}"


def remove_stop_sequences(text: str, stop_sequences: list[str] | None) -> str:
    """Cut `text` at the first stop sequence it contains."""
    cut = len(text)
    for stop in stop_sequences or []:
        at = text.find(stop)
        if at != -1:
            cut = min(cut, at)
    return text[:cut]


def _as_message_dict(message: ChatMessage | dict[str, Any]) -> dict[str, Any]:
    if isinstance(message, ChatMessage):
        role = message.role.value if isinstance(message.role, MessageRole) else message.role
        return {"role": role, "content": message.content, "tool_calls": message.tool_calls}
    return dict(message)


def get_clean_message_list(
    messages: list[ChatMessage | dict[str, Any]],
    role_conversions: dict[MessageRole, MessageRole] | None = None,
    convert_images_to_image_urls: bool = False,
    flatten_messages_as_text: bool = False,
) -> list[dict[str, Any]]:
    """Provider-ready message dicts: roles converted, same-role neighbours merged.

    Content is a list of parts unless `flatten_messages_as_text`, in which case
    it is one string (images dropped), as most local chat templates want.
    `convert_images_to_image_urls` turns image parts into OpenAI's `image_url` parts (data URLs);
    otherwise images stay as given (local models take PIL images).
    """
    conversions = {MessageRole(k).value: MessageRole(v).value for k, v in (role_conversions or {}).items()}
    cleaned: list[dict[str, Any]] = []
    for raw in messages:
        message = _as_message_dict(raw)
        role = message["role"].value if isinstance(message["role"], MessageRole) else message["role"]
        role = conversions.get(role, role)
        if role not in MessageRole.roles():
            raise ValueError(f"Unknown message role {role!r}; expected one of {MessageRole.roles()}")
        parts = _content_parts(message.get("content"))
        if convert_images_to_image_urls:
            parts = [_image_url_part(p) if p.get("type") == "image" else p for p in parts]
        if cleaned and cleaned[-1]["role"] == role:
            cleaned[-1]["content"].extend(parts)
        else:
            cleaned.append({"role": role, "content": parts})
    if flatten_messages_as_text:
        for message in cleaned:
            message["content"] = "\n".join(p["text"] for p in message["content"] if p.get("type") == "text")
    return cleaned


def _image_url_part(part: dict[str, Any]) -> dict[str, Any]:
    image = part.get("image")
    url = image if isinstance(image, str) else make_image_url(encode_image_base64(image))
    return {"type": "image_url", "image_url": {"url": url}}


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(part) for part in content]


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_json_tool_call(text: str) -> ChatMessageToolCall:
    """Read a tool call written as JSON text by a model without native tool calling.

    Accepts `{"name": ..., "arguments": {...}}` (also under `Action:` or inside a
    ```json fence```). Raises `ValueError` with the offending text otherwise.
    """
    match = _JSON_OBJECT.search(text)
    if not match:
        raise ValueError(f"The model output contains no JSON tool call: {text[:500]!r}")
    blob = match.group(0)
    try:
        data = json.loads(blob)
    except json.JSONDecodeError as err:
        raise ValueError(  # smolagents' wording
            f"The JSON blob you used is invalid due to the following error: {err.msg} at char {err.pos}.\n"
            f"JSON blob was: {blob[:500]}"
        ) from None
    name = data.get("name") or data.get("tool_name") or data.get("action")
    if not isinstance(name, str):
        raise ValueError(f'The tool call has no "name" field: {blob[:500]!r}')
    arguments = data.get("arguments", data.get("action_input", data.get("parameters", {})))
    return ChatMessageToolCall(function=ChatMessageToolCallFunction(name=name, arguments=arguments))


def parse_json_if_needed(arguments: Any) -> Any:
    """Tool-call arguments: a JSON string decoded, anything else (or invalid JSON) as given."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments


def _first_json_object(text: str) -> dict[str, Any]:
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ValueError(f"The model output contains no JSON object: {text[:500]!r}")


def get_tool_call_from_text(text: str, tool_name_key: str, tool_arguments_key: str) -> ChatMessageToolCall:
    """A tool call written as JSON in plain text, under the given keys (smolagents' function)."""
    blob = _first_json_object(text)
    if tool_name_key not in blob:
        raise ValueError(f"Tool call needs to have a key '{tool_name_key}'. Got keys: {list(blob)} instead")
    return ChatMessageToolCall(
        function=ChatMessageToolCallFunction(
            name=blob[tool_name_key], arguments=parse_json_if_needed(blob.get(tool_arguments_key))
        ),
        id=str(uuid.uuid4()),
        type="function",
    )


class _RemoveParameter:
    def __repr__(self) -> str:
        return "REMOVE_PARAMETER"


# Give a model `param=REMOVE_PARAMETER` to drop `param` from every call (smolagents' sentinel).
REMOVE_PARAMETER = _RemoveParameter()


class Model:
    """Base of every model. Subclasses implement `generate` and may implement `generate_stream`.

    `generate(messages, stop_sequences=None, response_format=None,
    tools_to_call_from=None, **kwargs) -> ChatMessage` returns the assistant
    message with `token_usage` set. `generate_stream(...)` yields
    `ChatMessageStreamDelta`s; the base implementation yields one delta made
    from `generate` (called by keyword with only the arguments that are set, as
    smolagents calls it), so every model can be streamed.
    """

    # Keys that never appear in to_dict(), saved agents or widget state.
    _secret_keys = ("api_key", "token", "azure_ad_token")

    def __init__(
        self,
        flatten_messages_as_text: bool = False,
        tool_name_key: str = "name",
        tool_arguments_key: str = "arguments",
        model_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.flatten_messages_as_text = flatten_messages_as_text
        self.tool_name_key = tool_name_key
        self.tool_arguments_key = tool_arguments_key
        self.model_id = model_id
        self.kwargs = kwargs

    def generate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        raise NotImplementedError(f"{type(self).__name__} must implement generate()")

    def generate_stream(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatMessageStreamDelta]:
        given = _set_arguments(stop_sequences, response_format, tools_to_call_from)
        yield message_as_delta(self.generate(messages, **given, **kwargs))

    async def agenerate(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        """`generate` for async code: `await model.agenerate(messages)`. Here `generate` runs on a worker
        thread (the event loop stays free); the API models override this with their async clients."""
        given = _set_arguments(stop_sequences, response_format, tools_to_call_from)
        return await asyncio.to_thread(functools.partial(self.generate, messages, **given, **kwargs))

    async def agenerate_stream(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatMessageStreamDelta]:
        """`generate_stream` for async code: `async for delta in model.agenerate_stream(messages)`.

        The stream is read on a worker thread and each delta handed to the event loop as it comes.
        """
        given = _set_arguments(stop_sequences, response_format, tools_to_call_from)
        stream = iter(self.generate_stream(messages, **given, **kwargs))
        done = object()
        try:
            while True:
                delta = await asyncio.to_thread(next, stream, done)
                if delta is done:
                    return
                yield delta
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                await asyncio.to_thread(close)

    def __call__(self, *args: Any, **kwargs: Any) -> ChatMessage:
        return self.generate(*args, **kwargs)

    @property
    def supports_stop_parameter(self) -> bool:
        return supports_stop_parameter(self.model_id or "")

    @property
    def supports_streaming(self) -> bool:
        """Whether this class streams for real (overrides `generate_stream`); the base one yields one delta."""
        return type(self).generate_stream is not Model.generate_stream

    def _prepare_completion_kwargs(
        self,
        messages: list[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        tools_to_call_from: list[Any] | None = None,
        custom_role_conversions: dict[str, str] | None = None,
        convert_images_to_image_urls: bool = False,
        tool_choice: str | dict[str, Any] | None = "required",
        **kwargs: Any,
    ) -> dict[str, Any]:
        """A chat-completions request as smolagents builds it, for `Model` subclasses written for smolagents.

        Precedence, lowest first: `stop`/`response_format`/`tools`, then `kwargs`, then the model's own
        constructor keywords (`self.kwargs`; a value `REMOVE_PARAMETER` deletes the key).
        """
        from ._common import tool_schemas  # _common is a leaf helper module

        flatten = kwargs.pop("flatten_messages_as_text", self.flatten_messages_as_text)
        params: dict[str, Any] = {
            "messages": get_clean_message_list(
                messages,
                role_conversions=custom_role_conversions or TOOL_ROLE_CONVERSIONS,
                convert_images_to_image_urls=convert_images_to_image_urls,
                flatten_messages_as_text=flatten,
            )
        }
        if stop_sequences is not None and self.supports_stop_parameter:
            params["stop"] = stop_sequences
        if response_format is not None:
            params["response_format"] = response_format
        if tools_to_call_from:
            params["tools"] = tool_schemas(tools_to_call_from)
            if tool_choice is not None:
                params["tool_choice"] = tool_choice
        params.update(kwargs)
        for key, value in self.kwargs.items():
            if value is REMOVE_PARAMETER:
                params.pop(key, None)
            else:
                params[key] = value
        return params

    def parse_tool_calls(self, message: ChatMessage) -> ChatMessage:
        """Fill `message.tool_calls` from its text when the model has no native tool calling."""
        message.role = MessageRole.ASSISTANT
        if not message.tool_calls:
            message.tool_calls = [parse_json_tool_call(message.text)]
        for call in message.tool_calls:
            if isinstance(call.function.arguments, str):
                try:
                    call.function.arguments = json.loads(call.function.arguments)
                except json.JSONDecodeError:
                    pass  # a plain-string argument is legitimate for one-input tools
        return message

    def to_dict(self) -> dict[str, Any]:
        """Constructor arguments to rebuild this model, without secrets."""
        data: dict[str, Any] = {"class": type(self).__name__, "model_id": self.model_id}
        for key, value in self.kwargs.items():
            if key in self._secret_keys or not _is_jsonable(value):
                continue
            data[key] = value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Model:
        data = {k: v for k, v in data.items() if k != "class"}
        return cls(**data)


def _set_arguments(
    stop_sequences: list[str] | None, response_format: dict[str, Any] | None, tools_to_call_from: list[Any] | None
) -> dict[str, Any]:
    """The generation arguments that are set, to pass by keyword: a `Model` subclass written for
    smolagents may declare `generate(self, messages, stop_sequences=None)` and nothing more."""
    given = {
        "stop_sequences": stop_sequences,
        "response_format": response_format,
        "tools_to_call_from": tools_to_call_from,
    }
    return {name: value for name, value in given.items() if value is not None}


def _is_jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
