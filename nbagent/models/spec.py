"""Turning a short text (from the CLI or `%%agent -m`) into a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["model_from_spec", "model_from_type", "MODEL_SPEC_HELP"]

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


# smolagents' CLI options: --model-type <class> --model-id <id> [--api-base URL] [--api-key KEY] [--provider P].
_API_OPTION_NAMES: dict[str, dict[str, str]] = {
    "OpenAIServerModel": {"api_base": "api_base", "api_key": "api_key"},
    "LiteLLMModel": {"api_base": "api_base", "api_key": "api_key"},
    "AzureOpenAIServerModel": {"api_base": "azure_endpoint", "api_key": "api_key"},
    "InferenceClientModel": {"api_base": "base_url", "api_key": "api_key", "provider": "provider"},
    "HfApiModel": {"api_base": "base_url", "api_key": "api_key", "provider": "provider"},
}
_LOCAL_TYPES = {"TransformersModel": "model_id", "LlamaCppModel": "model_path"}


def model_from_type(model_type: str, model_id: str | None = None, **api_options: str | None) -> Any:
    """A model from smolagents-style options: a class name of `nbagent.models` and its model id.

    `api_options` (`api_base`, `api_key`, `provider`) go to API models under their own parameter names.
    """
    import nbagent.models as models

    given = {name: value for name, value in api_options.items() if value is not None}
    if model_type in _LOCAL_TYPES:
        if given:
            raise ValueError(f"--{next(iter(given)).replace('_', '-')} is for API models, not {model_type}")
        if not model_id:
            raise ValueError(f"--model-type {model_type} needs --model-id (a local path or a cached Hub id)")
        return getattr(models, model_type)(**{_LOCAL_TYPES[model_type]: model_id})
    names = _API_OPTION_NAMES.get(model_type)
    if names is None:
        known = ", ".join([*_API_OPTION_NAMES, *_LOCAL_TYPES])
        raise ValueError(f"Unknown --model-type {model_type!r}: use one of {known}")
    unknown = [name for name in given if name not in names]
    if unknown:
        raise ValueError(f"--{unknown[0].replace('_', '-')} does not apply to {model_type}")
    options = {names[name]: value for name, value in given.items()}
    if model_id:
        options["model_id"] = model_id
    return getattr(models, model_type)(**options)
