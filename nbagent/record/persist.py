"""Saving and loading `AgentMemory`: one JSON file plus a folder of PNG images.

The round trip is lossless for everything a run records: messages, code,
observations, errors (by type and message), timings, token usage, images
(pixel-exact through PNG) and outputs that are JSON values, tuples or images.
Other outputs (a DataFrame, say) are kept as their `repr`, marked as such.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from nbagent.errors import AgentError, error_from_dict
from nbagent.media import image_to_png, is_image
from nbagent.models.base import ChatMessage, TokenUsage

from .steps import MEMORY_FORMAT_VERSION, STEP_TYPES, MemoryStep, SystemPromptStep, Timing, ToolCall

__all__ = ["save_memory", "load_memory", "memory_to_json", "memory_from_json", "memories_equal", "ReprValue"]

FORMAT_NAME = "nbagent.memory"
ImageSink = Callable[[Any], str]


class ReprValue(str):
    """An output that could not be stored as data; what is kept is its repr."""


def save_memory(memory: Any, path: Path) -> Path:
    """Write `memory` (an AgentMemory) to `path` as JSON, its images as PNG files beside it."""
    path = path if path.suffix == ".json" else path.with_suffix(".json")
    image_dir = path.parent / f"{path.stem}_images"
    written: dict[str, str] = {}

    def sink(image: Any) -> str:
        png = image_to_png(image)
        name = hashlib.sha256(png).hexdigest()[:16] + ".png"
        if name not in written:
            image_dir.mkdir(parents=True, exist_ok=True)
            (image_dir / name).write_bytes(png)
            written[name] = name
        return f"{image_dir.name}/{name}"

    data = memory_to_json(memory, sink)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def load_memory(path: Path) -> tuple[SystemPromptStep, list[MemoryStep]]:
    """The system prompt and steps saved at `path` (AgentMemory.load builds the memory from them)."""
    if not path.exists() and path.with_suffix(".json").exists():
        path = path.with_suffix(".json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"No saved memory at {path}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not a saved agent memory (invalid JSON: {err.msg}, line {err.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ValueError(f'{path} is not a saved agent memory (no \'"format": "{FORMAT_NAME}"\' field)')
    if data.get("version", 0) > MEMORY_FORMAT_VERSION:
        raise ValueError(f"{path} was saved by a newer nbagent (format {data['version']}); upgrade nbagent to load it")
    return memory_from_json(data, lambda ref: _open_png((path.parent / ref).read_bytes()))


def memory_to_json(memory: Any, image_sink: ImageSink | None) -> dict[str, Any]:
    """The memory as JSON data; images go through `image_sink` (default: their PNG hash)."""
    sink = image_sink or (lambda image: "sha256:" + hashlib.sha256(image_to_png(image)).hexdigest())
    return {
        "format": FORMAT_NAME,
        "version": MEMORY_FORMAT_VERSION,
        "system_prompt": memory.system_prompt.system_prompt,
        "steps": [_step_to_json(step, sink) for step in memory.steps],
    }


def memory_from_json(
    data: dict[str, Any], image_source: Callable[[str], Any]
) -> tuple[SystemPromptStep, list[MemoryStep]]:
    system_prompt = SystemPromptStep(system_prompt=data.get("system_prompt", ""))
    return system_prompt, [_step_from_json(step, image_source) for step in data.get("steps", [])]


def memories_equal(first: Any, second: Any) -> bool:
    """Same system prompt and steps, field by field (images by pixels; errors by type and message)."""
    if first.system_prompt.system_prompt != second.system_prompt.system_prompt or len(first.steps) != len(second.steps):
        return False
    return all(_same_step(a, b) for a, b in zip(first.steps, second.steps))


def _same_step(first: MemoryStep, second: MemoryStep) -> bool:
    if type(first) is not type(second):
        return False
    return all(_same(getattr(first, f.name), getattr(second, f.name)) for f in fields(first))


def _same(first: Any, second: Any) -> bool:
    if is_image(first) or is_image(second):
        return is_image(first) and is_image(second) and _pixels(first) == _pixels(second)
    if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
        return type(first) is type(second) and len(first) == len(second) and all(map(_same, first, second))
    if isinstance(first, AgentError) or isinstance(second, AgentError):
        return _error_key(first) == _error_key(second)
    if isinstance(first, ChatMessage) and isinstance(second, ChatMessage):
        rest = [{k: v for k, v in m.dict().items() if k != "content"} for m in (first, second)]
        return _same(first.content, second.content) and rest[0] == rest[1]
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(_same(first[k], second[k]) for k in first)
    try:
        return bool(first == second)
    except Exception:  # e.g. a DataFrame output: compare what would be saved
        return repr(first) == repr(second)


def _pixels(image: Any) -> tuple[Any, ...]:
    pil = image.to_raw() if hasattr(image, "to_raw") else image
    return pil.size, pil.mode, pil.tobytes()


def _error_key(error: Any) -> tuple[str, str]:
    return (type(error).__name__, str(error)) if isinstance(error, AgentError) else ("", str(error))


def _step_to_json(step: MemoryStep, sink: ImageSink) -> dict[str, Any]:
    data: dict[str, Any] = {"type": type(step).__name__}
    for f in fields(step):
        data[f.name] = _encode(getattr(step, f.name), sink)
    return data


def _step_from_json(data: dict[str, Any], source: Callable[[str], Any]) -> MemoryStep:
    kind = data.get("type")
    if kind not in STEP_TYPES:
        raise ValueError(f"Unknown memory step type {kind!r} in saved memory")
    cls = STEP_TYPES[kind]
    values = {f.name: _decode(data[f.name], source) for f in fields(cls) if f.name in data}
    return cls(**values)


def _encode(value: Any, sink: ImageSink) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if is_image(value):
        return {"$image": sink(value)}
    if isinstance(value, AgentError):
        return {"$error": value.dict()}
    if isinstance(value, ChatMessage):
        return {"$message": {**value.dict(), "content": _encode(value.content, sink)}}
    if isinstance(value, Timing):
        return {"$timing": [value.start_time, value.end_time]}
    if isinstance(value, TokenUsage):
        return {"$tokens": [value.input_tokens, value.output_tokens]}
    if isinstance(value, ToolCall):
        return {"$tool_call": {"name": value.name, "arguments": _encode(value.arguments, sink), "id": value.id}}
    if isinstance(value, tuple):
        return {"$tuple": [_encode(v, sink) for v in value]}
    if isinstance(value, list):
        return [_encode(v, sink) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        encoded = {k: _encode(v, sink) for k, v in value.items()}
        return {"$dict": encoded} if any(k.startswith("$") for k in value) else encoded
    return {"$repr": repr(value)}


_DECODERS: dict[str, Callable[[Any, Callable[[str], Any]], Any]] = {
    "$image": lambda v, src: src(v),
    "$error": lambda v, src: error_from_dict(v),
    "$message": lambda v, src: _decode_message(v, src),
    "$timing": lambda v, src: Timing(start_time=v[0], end_time=v[1]),
    "$tokens": lambda v, src: TokenUsage(v[0], v[1]),
    "$tool_call": lambda v, src: ToolCall(name=v["name"], arguments=_decode(v["arguments"], src), id=v["id"]),
    "$tuple": lambda v, src: tuple(_decode(x, src) for x in v),
    "$dict": lambda v, src: {k: _decode(x, src) for k, x in v.items()},
    "$repr": lambda v, src: ReprValue(v),
}


def _decode(value: Any, source: Callable[[str], Any]) -> Any:
    if isinstance(value, list):
        return [_decode(v, source) for v in value]
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, inner),) = value.items()
            if key in _DECODERS:
                return _DECODERS[key](inner, source)
        return {k: _decode(v, source) for k, v in value.items()}
    return value


def _decode_message(data: dict[str, Any], source: Callable[[str], Any]) -> ChatMessage:
    message = ChatMessage.from_dict(data)
    message.content = _decode(data.get("content"), source)
    return message


def _open_png(png: bytes) -> Any:
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    image.load()
    return image
