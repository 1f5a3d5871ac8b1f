"""smolagents' other default tools, which call a web service or a model: `GoogleSearchTool` (SerpAPI or
Serper, with an API key), `WikipediaSearchTool` (the `wikipedia-api` package) and `SpeechToTextTool`
(Whisper through `transformers`). None of their packages or keys is a dependency of nbagent: a tool
without them says what is missing when it is made (keys, packages) or set up (the model).
"""

from __future__ import annotations

import io
import os
from typing import Any

from .base import Tool

__all__ = ["GoogleSearchTool", "SpeechToTextTool", "WikipediaSearchTool"]

_GOOGLE_PROVIDERS = {
    # provider: (API key variable, search URL, key of the organic results in the answer)
    "serpapi": ("SERPAPI_API_KEY", "https://serpapi.com/search.json", "organic_results"),
    "serper": ("SERPER_API_KEY", "https://google.serper.dev/search", "organic"),
}


class GoogleSearchTool(Tool):
    """A Google search through SerpAPI (`$SERPAPI_API_KEY`) or Serper (`provider="serper"`, `$SERPER_API_KEY`)."""

    name = "web_search"
    description = "Performs a google web search for your query then returns a string of the top search results."
    inputs = {
        "query": {"type": "string", "description": "The search query to perform."},
        "filter_year": {
            "type": "integer",
            "description": "Optionally restrict results to a certain year",
            "nullable": True,
        },
    }
    output_type = "string"

    def __init__(self, provider: str = "serpapi") -> None:
        super().__init__()
        if provider not in _GOOGLE_PROVIDERS:
            raise ValueError(f"GoogleSearchTool(provider={provider!r}): use one of {', '.join(_GOOGLE_PROVIDERS)}")
        self.provider = provider
        key_name, self.url, self.organic_key = _GOOGLE_PROVIDERS[provider]
        self.api_key = os.getenv(key_name)
        if self.api_key is None:
            raise ValueError(f"Missing API key. Make sure you have '{key_name}' in your env variables.")

    def forward(self, query: str, filter_year: int | None = None) -> str:
        import requests

        params = {"q": query, "api_key": self.api_key}
        if self.provider == "serpapi":
            params.update(engine="google", google_domain="google.com")
        if filter_year is not None:
            params["tbs"] = f"cdr:1,cd_min:01/01/{filter_year},cd_max:12/31/{filter_year}"
        response = requests.get(self.url, params=params, timeout=30)
        if response.status_code != 200:
            raise ValueError(f"The {self.provider} search failed: HTTP {response.status_code} {response.text[:300]}")
        pages = response.json().get(self.organic_key)
        year = f" with filter year={filter_year}" if filter_year is not None else ""
        if not pages:
            return f"No results found for '{query}'{year}. Try with a more general query, or remove the year filter."
        return "## Search Results\n" + "\n\n".join(_google_entry(i, page) for i, page in enumerate(pages))


def _google_entry(index: int, page: dict[str, Any]) -> str:
    labels = (("date", "Date published"), ("source", "Source"))
    extras = "".join(f"\n{label}: {page[key]}" for key, label in labels if key in page)
    snippet = f"\n{page['snippet']}" if "snippet" in page else ""
    return f"{index}. [{page.get('title', '')}]({page.get('link', '')}){extras}{snippet}"


class WikipediaSearchTool(Tool):
    """A Wikipedia page's summary or text (`content_type`), in `language`; needs `pip install wikipedia-api`.

    Wikipedia asks every client to name itself: pass a `user_agent` such as "MyBot (me@example.com)".
    """

    name = "wikipedia_search"
    description = "Searches Wikipedia and returns a summary or full text of the given topic, along with the page URL."
    inputs = {"query": {"type": "string", "description": "The topic to search on Wikipedia."}}
    output_type = "string"

    def __init__(
        self,
        user_agent: str = "nbagent (https://github.com/nbagent)",
        language: str = "en",
        content_type: str = "text",
        extract_format: str = "WIKI",
    ) -> None:
        super().__init__()
        try:
            import wikipediaapi
        except ImportError:
            raise ImportError(
                "WikipediaSearchTool needs the `wikipedia-api` package: `pip install wikipedia-api`"
            ) from None
        if not user_agent:
            raise ValueError("WikipediaSearchTool needs a user_agent naming your project (Wikipedia's API policy)")
        if content_type not in ("summary", "text"):
            raise ValueError(f"WikipediaSearchTool(content_type={content_type!r}): use 'summary' or 'text'")
        formats = {"WIKI": wikipediaapi.ExtractFormat.WIKI, "HTML": wikipediaapi.ExtractFormat.HTML}
        if extract_format not in formats:
            raise ValueError(f"WikipediaSearchTool(extract_format={extract_format!r}): use 'WIKI' or 'HTML'")
        self.user_agent, self.language, self.content_type = user_agent, language, content_type
        self.extract_format = formats[extract_format]
        self.wiki = wikipediaapi.Wikipedia(user_agent=user_agent, language=language, extract_format=self.extract_format)

    def forward(self, query: str) -> str:
        try:
            page = self.wiki.page(query)
            if not page.exists():
                return f"No Wikipedia page found for '{query}'. Try a different query."
            text = page.summary if self.content_type == "summary" else page.text
            return f"✅ **Wikipedia Page:** {page.title}\n\n**Content:** {text}\n\n🔗 **Read more:** {page.fullurl}"
        except Exception as failure:  # the network, the API: the model reads it and can carry on
            return f"Error fetching Wikipedia summary: {failure}"


WHISPER_RATE = 16_000  # samples per second Whisper models expect


class SpeechToTextTool(Tool):
    """Transcribes audio with a Whisper model (`transformers`; `model` names a checkpoint, loaded at setup)."""

    name = "transcriber"
    description = "This is a tool that transcribes an audio into text. It returns the transcribed text."
    inputs = {
        "audio": {
            "type": "audio",
            "description": "The audio to transcribe. Can be a local path, an url, or a tensor.",
        }
    }
    output_type = "string"
    default_checkpoint = "openai/whisper-large-v3-turbo"

    def __init__(self, model: str | None = None, device: str | None = None) -> None:
        super().__init__()
        self.checkpoint = model or self.default_checkpoint
        self.device = device
        self.pre_processor: Any = None
        self.model: Any = None

    @property
    def pre_processor_class(self) -> type:
        from transformers.models.whisper import WhisperProcessor

        return WhisperProcessor

    @property
    def model_class(self) -> type:
        from transformers.models.whisper import WhisperForConditionalGeneration

        return WhisperForConditionalGeneration

    def setup(self) -> None:
        self.pre_processor = self.pre_processor_class.from_pretrained(self.checkpoint)
        self.model = self.model_class.from_pretrained(self.checkpoint)
        if self.device:
            self.model = self.model.to(self.device)
        self.is_initialized = True

    def forward(self, audio: Any) -> str:
        if self.model is None:
            self.setup()
        samples = _mono_samples(audio)
        features = self.pre_processor(samples, sampling_rate=WHISPER_RATE, return_tensors="pt").input_features
        if self.device:
            features = features.to(self.device)
        tokens = self.model.generate(features)
        return self.pre_processor.batch_decode(tokens, skip_special_tokens=True)[0]


def _mono_samples(audio: Any) -> Any:
    """Float samples at 16 kHz from a path, WAV bytes, an AgentAudio, a numpy array or a torch tensor."""
    import numpy as np

    rate = WHISPER_RATE
    raw = audio.to_raw() if hasattr(audio, "to_raw") else audio
    if isinstance(raw, (str, os.PathLike, bytes, bytearray)):
        source = io.BytesIO(raw) if isinstance(raw, (bytes, bytearray)) else raw
        raw, rate = _read_audio(source)
    if hasattr(raw, "detach"):
        raw = raw.detach().cpu().numpy()
    samples = np.asarray(raw, dtype=np.float32)
    if samples.ndim > 1:
        samples = samples.mean(axis=1)
    if rate != WHISPER_RATE and samples.size:
        positions = np.linspace(0, samples.size - 1, int(samples.size * WHISPER_RATE / rate))
        samples = np.interp(positions, np.arange(samples.size), samples).astype(np.float32)
    return samples


def _read_audio(source: Any) -> tuple[Any, int]:
    """(samples, rate) of an audio file: any format with `soundfile` installed, PCM WAV without it."""
    try:
        import soundfile
    except ImportError:
        return _read_wav(source)
    return soundfile.read(source, dtype="float32")


def _read_wav(source: Any) -> tuple[Any, int]:
    import wave

    import numpy as np

    with wave.open(source if not isinstance(source, os.PathLike) else os.fspath(source), "rb") as wav:
        width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
        frames = wav.readframes(wav.getnframes())
    kinds = {1: (np.uint8, 128.0, 128.0), 2: (np.int16, 0.0, 32768.0), 4: (np.int32, 0.0, 2147483648.0)}
    if width not in kinds:
        raise ValueError(
            f"SpeechToTextTool reads 8, 16 or 32-bit PCM WAV (install soundfile for more), got {width * 8}-bit"
        )
    dtype, offset, scale = kinds[width]
    samples = (np.frombuffer(frames, dtype=dtype).astype(np.float32) - offset) / scale
    return samples.reshape(-1, channels), rate
