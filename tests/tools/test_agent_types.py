"""AgentImage / AgentText / AgentAudio: PIL-only wrappers that display and convert."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from nbagent.media import image_to_png
from nbagent.media.agent_types import (
    AgentAudio,
    AgentImage,
    AgentText,
    handle_agent_input_types,
    handle_agent_output_types,
)


def _picture() -> Image.Image:
    image = Image.new("RGB", (4, 3), (10, 20, 30))
    image.putpixel((1, 1), (255, 0, 0))
    return image


def test_agent_image_from_pil_and_back():
    pil = _picture()
    image = AgentImage(pil)
    assert image.to_raw() is pil
    assert image.size == (4, 3) and image.mode == "RGB"  # PIL attributes are forwarded
    png = image._repr_png_()
    assert png.startswith(b"\x89PNG")
    assert Image.open(io.BytesIO(png)).getpixel((1, 1)) == (255, 0, 0)
    assert image_to_png(image) == png  # memory persistence accepts AgentImage


def test_agent_image_to_string_writes_a_png_that_reloads(tmp_path):
    image = AgentImage(_picture())
    path = image.to_string()
    assert Path(path).suffix == ".png" and Path(path).exists()
    assert str(image) == path and image.to_string() == path  # written once
    assert AgentImage(path) == image
    assert AgentImage(Path(path)).to_raw().getpixel((1, 1)) == (255, 0, 0)


def test_agent_image_from_bytes_array_and_agent_image():
    buffer = io.BytesIO()
    _picture().save(buffer, format="PNG")
    from_bytes = AgentImage(buffer.getvalue())
    from_array = AgentImage(np.asarray(_picture()))
    assert from_bytes == from_array == AgentImage(from_bytes)
    assert from_bytes != AgentImage(Image.new("RGB", (4, 3)))
    assert "size=(4, 3)" in repr(from_bytes)
    with pytest.raises(TypeError, match="AgentImage takes a PIL image"):
        AgentImage(3.5)


def test_agent_text_is_a_str():
    text = AgentText("hello")
    assert isinstance(text, str) and text == "hello" and text.upper() == "HELLO"
    assert text.to_raw() == "hello" and text.to_string() == "hello"


def test_agent_audio_from_samples_writes_wav():
    audio = AgentAudio((8000, np.array([0.0, 0.5, -0.5, 1.0])))
    raw = audio.to_raw()
    with wave.open(io.BytesIO(raw)) as wav:
        assert wav.getframerate() == 8000 and wav.getnframes() == 4 and wav.getsampwidth() == 2
        frames = wav.readframes(4)
    assert int.from_bytes(frames[2:4], "little", signed=True) == 16383
    path = audio.to_string()
    assert Path(path).read_bytes() == raw
    assert AgentAudio(path).to_raw() == raw
    assert "audio/wav;base64," in audio._repr_html_()


def test_handle_types():
    image = AgentImage(_picture())
    args, kwargs = handle_agent_input_types(image, "x", text=AgentText("t"))
    assert args[0] is image.to_raw() and args[1] == "x" and type(kwargs["text"]) is str
    assert isinstance(handle_agent_output_types("s", "string"), AgentText)
    assert isinstance(handle_agent_output_types(_picture(), "image"), AgentImage)
    assert isinstance(handle_agent_output_types(_picture()), AgentImage)
    assert handle_agent_output_types(3, "integer") == 3
    assert handle_agent_output_types(image, "image") is image
