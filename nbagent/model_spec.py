"""Turning a short text (from the CLI or `%%agent -m`) into a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["model_from_spec", "MODEL_SPEC_HELP"]

MODEL_SPEC_HELP = (
    "'default' (the offline model), a .gguf file, a local transformers folder, "
    "openai:<model id>, hf:<model id>, litellm:<model id>, or a Hugging Face model id"
)

_PREFIXES = {
    "openai": "OpenAIServerModel",
    "hf": "InferenceClientModel",
    "litellm": "LiteLLMModel",
    "transformers": "TransformersModel",
    "llamacpp": "LlamaCppModel",
}


def model_from_spec(spec: str | None) -> Any:
    """A model from `spec` (see `MODEL_SPEC_HELP`); `None`/"default" gives the offline default."""
    import nbagent.models as models

    if spec is None or spec.strip() in ("", "default"):
        return models.default_model()
    spec = spec.strip()
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in _PREFIXES:
        if not rest:
            raise ValueError(f"Model spec {spec!r} names no model after '{prefix}:'")
        cls = getattr(models, _PREFIXES[prefix])
        return cls(model_path=rest) if prefix == "llamacpp" else cls(model_id=rest)
    path = Path(spec).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ValueError(f"No GGUF file at {spec!r}")
        return models.LlamaCppModel(model_path=str(path))
    if path.is_dir():
        return models.TransformersModel(model_id=str(path))
    return models.InferenceClientModel(model_id=spec)
