"""Values tools return that know how to show themselves: text, images, audio.

`AgentImage` wraps a PIL image (made from a path, bytes, a numpy array or a torch tensor): it displays in Jupyter
(`_repr_png_`), gives the PIL image back with `to_raw()`, and a file path with
`to_string()`. Unlike smolagents' AgentImage it is a wrapper, not a PIL subclass:
PIL attributes (`size`, `save`, `convert`, ...) are forwarded to the wrapped image.
"""

from __future__ import annotations

import io
import os
import tempfile
import uuid
import wave
from pathlib import Path
from typing import Any

__all__ = [
    "AgentType",
    "AgentText",
    "AgentImage",
    "AgentAudio",
    "handle_agent_input_types",
    "handle_agent_output_types",
]


def _temp_path(suffix: str) -> str:
    folder = Path(tempfile.gettempdir()) / "nbagent_media"
    folder.mkdir(exist_ok=True)
    return str(folder / f"{uuid.uuid4().hex}{suffix}")


class AgentType:
    """Base of agent values: `to_raw()` gives the Python object, `to_string()` a text form."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def to_raw(self) -> Any:
        return self._value

    def to_string(self) -> str:
        return str(self._value)

    def __str__(self) -> str:
        return self.to_string()


class AgentText(AgentType, str):
    """A str that is also an AgentType."""

    def __new__(cls, value: Any) -> AgentText:
        return str.__new__(cls, value)

    def __init__(self, value: Any) -> None:
        AgentType.__init__(self, str(value))

    def to_raw(self) -> str:
        return str(self._value)

    def to_string(self) -> str:
        return str(self._value)


class AgentImage(AgentType):
    """An image from a PIL image, AgentImage, file path, PNG/JPEG bytes or numpy array."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self._raw = None
        self._path: str | None = None
        if isinstance(value, AgentImage):
            self._raw, self._path = value._raw, value._path
        elif isinstance(value, (str, os.PathLike)):
            self._path = str(value)
        elif isinstance(value, (bytes, bytearray)):
            from PIL import Image

            self._raw = Image.open(io.BytesIO(value))
            self._raw.load()
        elif type(value).__module__.startswith("PIL."):
            self._raw = value
        elif type(value).__name__ == "ndarray":
            self._raw = _array_image(value)
        elif type(value).__module__.startswith("torch") and hasattr(value, "detach"):
            self._tensor = value  # smolagents keeps the tensor under this name
            self._raw = _array_image(value.detach().cpu().numpy())
        else:
            raise TypeError(
                "AgentImage takes a PIL image, a path, image bytes, a numpy array or a torch tensor, "
                f"got {type(value).__name__}"
            )

    def to_raw(self) -> Any:
        """The PIL image (loaded from the path on first use)."""
        if self._raw is None:
            from PIL import Image

            self._raw = Image.open(self._path)
            self._raw.load()
        return self._raw

    def to_string(self) -> str:
        """A path to the image file (a PNG is written to a temporary folder if there is none)."""
        if self._path is None:
            self._path = _temp_path(".png")
            self.to_raw().save(self._path, format="PNG")
        return self._path

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.to_raw().save(buffer, format="PNG")
        return buffer.getvalue()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.to_raw(), name)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, AgentImage):
            return NotImplemented
        a, b = self.to_raw(), other.to_raw()
        return a.size == b.size and a.mode == b.mode and a.tobytes() == b.tobytes()

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        raw = self._raw
        if raw is None:
            return f"AgentImage(path={self._path!r})"
        return f"AgentImage(size={raw.size}, mode={raw.mode!r})"


def _array_image(array: Any) -> Any:
    """A PIL image of an (H, W) or (H, W, C) array: floats in [0, 1] are scaled, other numbers clipped to 0-255."""
    import numpy as np
    from PIL import Image

    if array.dtype != np.uint8:
        scaled = array * 255 if array.dtype.kind == "f" and array.size and float(array.max()) <= 1.0 else array
        array = np.clip(scaled, 0, 255).astype(np.uint8)
    return Image.fromarray(array)


class AgentAudio(AgentType):
    """Audio from a WAV path, WAV bytes, or `(samplerate, samples)` with samples a numpy array or list of ints."""

    def __init__(self, value: Any, samplerate: int = 16_000) -> None:
        super().__init__(value)
        self.samplerate = samplerate
        self._path: str | None = None
        self._bytes: bytes | None = None
        if isinstance(value, AgentAudio):
            self.samplerate, self._path, self._bytes = value.samplerate, value._path, value._bytes
        elif isinstance(value, (str, os.PathLike)):
            self._path = str(value)
        elif isinstance(value, (bytes, bytearray)):
            self._bytes = bytes(value)
        elif isinstance(value, tuple) and len(value) == 2:
            self.samplerate = int(value[0])
            self._bytes = _wav_bytes(value[1], self.samplerate)
        else:
            raise TypeError(
                f"AgentAudio takes a WAV path, WAV bytes or (samplerate, samples), got {type(value).__name__}"
            )

    def to_raw(self) -> bytes:
        """The WAV file's bytes."""
        if self._bytes is None:
            self._bytes = Path(self._path).read_bytes()  # type: ignore[arg-type]
        return self._bytes

    def to_string(self) -> str:
        """A path to the WAV file."""
        if self._path is None:
            self._path = _temp_path(".wav")
            Path(self._path).write_bytes(self.to_raw())
        return self._path

    def _repr_html_(self) -> str:
        import base64

        data = base64.b64encode(self.to_raw()).decode()
        return f'<audio controls src="data:audio/wav;base64,{data}"></audio>'


def _wav_bytes(samples: Any, samplerate: int) -> bytes:
    """16-bit mono WAV from int samples, or floats in [-1, 1]."""
    values = samples.tolist() if hasattr(samples, "tolist") else list(samples)
    if values and isinstance(values[0], float):
        values = [int(max(-1.0, min(1.0, v)) * 32767) for v in values]
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(samplerate)
        out.writeframes(b"".join(int(v).to_bytes(2, "little", signed=True) for v in values))
    return buffer.getvalue()


_OUTPUT_TYPES = {"string": AgentText, "image": AgentImage, "audio": AgentAudio}
_AGENT_TYPE_MAPPING = _OUTPUT_TYPES  # smolagents' name: a tool's output_type -> the AgentType that wraps it


def handle_agent_input_types(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Unwrap AgentTypes into the raw values tools expect."""
    args = tuple(a.to_raw() if isinstance(a, AgentType) else a for a in args)
    kwargs = {k: v.to_raw() if isinstance(v, AgentType) else v for k, v in kwargs.items()}
    return args, kwargs


def handle_agent_output_types(output: Any, output_type: str | None = None) -> Any:
    """Wrap a tool's output as the AgentType of its declared type (or guessed from the value)."""
    if isinstance(output, AgentType):
        return output
    if output_type in _OUTPUT_TYPES:
        try:
            return _OUTPUT_TYPES[output_type](output)
        except TypeError:
            return output
    if isinstance(output, str):
        return AgentText(output)
    if type(output).__module__.startswith("PIL."):
        return AgentImage(output)
    return output
