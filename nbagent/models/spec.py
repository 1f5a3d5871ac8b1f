"""Turning a short text (from the CLI or `%%agent -m`) into a model.

A Hugging Face id (`org/name`) is a model served by Inference Providers when an HF token is set up;
without one it is loaded here with transformers, so it must be in the local Hugging Face cache. An id
that is neither fails at once (`check_spec`), naming what was looked for and the nearest local models,
rather than when the first model call is made ("You must provide an api_key").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["load_model", "model_from_spec", "model_from_type", "check_spec", "needs_loading", "MODEL_SPEC_HELP"]

MODEL_SPEC_HELP = (
    "'default' (the offline model), a .gguf file, a local transformers folder, "
    "openai:<model id>, hf:<model id>, litellm:<model id>, or a Hugging Face model id (org/name: "
    "through Inference Providers with an HF token, else from the local Hugging Face cache)"
)

_PREFIXES = {
    "openai": "OpenAIServerModel",
    "hf": "InferenceClientModel",
    "litellm": "LiteLLMModel",
    "transformers": "TransformersModel",
    "llamacpp": "LlamaCppModel",
}


def check_spec(spec: str | None, candidates: Iterable[str] = ()) -> None:
    """Raise `ValueError` (with suggestions) for a spec that names no model, before anything loads.

    `candidates` are other names the spec could have meant (e.g. notebook variables holding models).
    A bare word is not taken for a Hugging Face id: those are "org/name" (or write `hf:<id>`).
    """
    if spec is None or spec.strip() in ("", "default"):
        return
    spec = spec.strip()
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in _PREFIXES:
        if not rest:
            raise ValueError(f"Model spec {spec!r} names no model after '{prefix}:'")
        return
    path = Path(spec).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ValueError(f"No GGUF file at {spec!r}")
        return
    if path.is_dir():
        return
    if _looks_like_hub_id(spec):
        _check_hub_id(spec)
        return
    if sep and "/" not in prefix:
        hint = _suggest(f"{prefix}:", [f"{p}:" for p in _PREFIXES])
        raise ValueError(f"Unknown model prefix {prefix + ':'!r}{hint}")
    hint = _suggest(spec, ["default", *candidates])
    raise ValueError(f"Unknown model {spec!r}{hint}")


def _looks_like_hub_id(spec: str) -> bool:
    return bool(re.fullmatch(r"[\w.-]+/[\w.-]+", spec)) and not spec.startswith((".", "/"))


def _check_hub_id(spec: str) -> None:
    """A Hub id works through Inference Providers (an HF token) or from the local cache; else a `ValueError`."""
    if hub_token_configured() or cached_hub_model(spec) is not None:
        return
    cached = cached_hub_models()
    close = difflib.get_close_matches(spec, cached, n=3, cutoff=0.5)
    offline = f"'default' (the offline {DEFAULT_HUB_ID.split('/')[1]})"
    meant = [offline] if difflib.get_close_matches(spec, [DEFAULT_HUB_ID], n=1, cutoff=0.8) else []
    meant += [repr(name) for name in close]
    local = ", ".join([offline, *map(repr, cached[:5])]) + (", …" if len(cached) > 5 else "")
    raise ValueError(
        f"{spec!r} is not available offline: no folder of that name, not in the Hugging Face cache "
        f"({_hub_cache_dir()}), and no Hugging Face token for Inference Providers (set HF_TOKEN, or `hf auth login`)"
        + (f" (did you mean {' or '.join(meant)}?)" if meant else "")
        + f". Local models: {local}"
    )


DEFAULT_HUB_ID = "Qwen/Qwen2.5-Coder-1.5B-Instruct"  # the offline default model's Hub name (spec 'default')


def hub_token_configured() -> bool:
    """True when huggingface_hub finds a token (HF_TOKEN, `hf auth login`): Hub ids then go to Inference Providers."""
    from huggingface_hub import get_token

    try:
        return bool(get_token())
    except Exception:  # a token source that fails to answer (e.g. an OIDC exchange) is no token
        return False


def _hub_cache_dir() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def cached_hub_model(model_id: str) -> Path | None:
    """The folder of `model_id` in the local Hugging Face cache, if a snapshot of it is there."""
    folder = _hub_cache_dir() / f"models--{model_id.replace('/', '--')}"
    snapshots = folder / "snapshots"
    return folder if snapshots.is_dir() and any(snapshots.iterdir()) else None


def cached_hub_models() -> list[str]:
    """The ids of the models in the local Hugging Face cache (those with a snapshot), sorted."""
    cache = _hub_cache_dir()
    if not cache.is_dir():
        return []
    names = [entry.name[len("models--") :].replace("--", "/", 1) for entry in cache.glob("models--*--*")]
    return sorted(name for name in names if cached_hub_model(name) is not None)


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(dict.fromkeys(choices)), n=3, cutoff=0.5)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def needs_loading(spec: str | None) -> bool:
    """True for a spec whose model is loaded into this process (the offline default, a GGUF, a local folder)."""
    if spec is None or spec.strip() in ("", "default"):
        return True
    prefix, sep, _ = spec.strip().partition(":")
    if sep and prefix in _PREFIXES:
        return prefix in ("llamacpp", "transformers")
    path = Path(spec.strip()).expanduser()
    local_hub_id = _looks_like_hub_id(spec.strip()) and not hub_token_configured()
    return path.suffix.lower() == ".gguf" or path.is_dir() or local_hub_id


def model_from_spec(spec: str | None, n_ctx: int | None = None) -> Any:
    """A model from `spec` (see `MODEL_SPEC_HELP`); `None`/"default" gives the offline default.

    `n_ctx` sets the context window of a model llama.cpp runs (the default model, a .gguf, `llamacpp:`).
    """
    import nbagent.models as models

    check_spec(spec)
    context = {"n_ctx": n_ctx} if n_ctx else {}
    if spec is None or spec.strip() in ("", "default"):
        return models.default_model(**context)
    spec = spec.strip()
    prefix, sep, rest = spec.partition(":")
    path = Path(spec).expanduser()
    if sep and prefix == "llamacpp":
        return models.LlamaCppModel(model_path=rest, **context)
    if path.suffix.lower() == ".gguf":
        return models.LlamaCppModel(model_path=str(path), **context)
    if context:
        raise ValueError(
            f"n_ctx applies to llama.cpp models (the default, a .gguf file, llamacpp:<path>), not {spec!r}"
        )
    if sep and prefix in _PREFIXES:
        return getattr(models, _PREFIXES[prefix])(model_id=rest)
    if path.is_dir():
        return models.TransformersModel(model_id=str(path))
    if not hub_token_configured():  # check_spec found it in the local cache: load it here
        return models.TransformersModel(model_id=spec)
    return models.InferenceClientModel(model_id=spec)


# smolagents' CLI options: --model-type <class> --model-id <id> [--api-base URL] [--api-key KEY] [--provider P].
_API_OPTION_NAMES: dict[str, dict[str, str]] = {
    "OpenAIServerModel": {"api_base": "api_base", "api_key": "api_key"},
    "OpenAIModel": {"api_base": "api_base", "api_key": "api_key"},
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


def load_model(
    model_type: str,
    model_id: str,
    api_base: str | None = None,
    api_key: str | None = None,
    provider: str | None = None,
) -> Any:
    """smolagents' `load_model` (from its CLI): a model by class name and id, as `nbagent run --model-type` makes
    it. Unlike smolagents, an `OpenAIModel` without `api_base` goes to OpenAI's own API, not to Fireworks', and
    the CLI's other classes are known too (`AzureOpenAIServerModel`, `LlamaCppModel`, ...; a `ValueError` names
    them all otherwise)."""
    return model_from_type(model_type, model_id, api_base=api_base, api_key=api_key, provider=provider)
