"""GoogleSearchTool against a search API on 127.0.0.1, and SpeechToTextTool's audio preparation."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from nbagent.tools.service_tools import WHISPER_RATE, GoogleSearchTool, SpeechToTextTool, _mono_samples

ANSWER = {"organic_results": [{"title": "Paris", "link": "https://example.org/paris", "snippet": "Capital of France"}]}


class _SerpApi(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_GET(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        _SerpApi.seen.append(query)
        body = json.dumps(ANSWER if query["q"] == ["paris"] else {"organic_results": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def serpapi_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SerpApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/search.json"
    server.shutdown()
    server.server_close()


def test_google_search_needs_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="SERPAPI_API_KEY"):
        GoogleSearchTool()


def test_google_search_formats_the_results_and_filters_by_year(
    monkeypatch: pytest.MonkeyPatch, serpapi_url: str
) -> None:
    monkeypatch.setenv("SERPAPI_API_KEY", "test-key")
    search = GoogleSearchTool()
    search.url = serpapi_url
    assert search("paris") == "## Search Results\n0. [Paris](https://example.org/paris)\nCapital of France"
    assert _SerpApi.seen[-1]["api_key"] == ["test-key"] and _SerpApi.seen[-1]["engine"] == ["google"]
    assert search("nothing", filter_year=2020).startswith("No results found for 'nothing' with filter year=2020")
    assert _SerpApi.seen[-1]["tbs"] == ["cdr:1,cd_min:01/01/2020,cd_max:12/31/2020"]


def test_speech_to_text_prepares_mono_16khz_samples() -> None:
    one_second_stereo_8khz = np.full((8000, 2), 0.25)
    prepared = _mono_samples(_wav_bytes(one_second_stereo_8khz, 8000))
    assert prepared.dtype == np.float32 and prepared.ndim == 1
    assert abs(prepared.size - WHISPER_RATE) <= 1 and np.allclose(prepared, 0.25, atol=1e-3)


def test_speech_to_text_loads_nothing_until_setup() -> None:
    tool = SpeechToTextTool(model="some/checkpoint")
    assert tool.checkpoint == "some/checkpoint" and tool.model is None and not tool.is_initialized
    assert SpeechToTextTool().checkpoint == SpeechToTextTool.default_checkpoint


def _wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    """16-bit PCM WAV, written with the standard library."""
    import io
    import wave

    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(samples.shape[1])
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes((samples * 32767).astype("<i2").tobytes())
    return buffer.getvalue()
