"""smolagents' in-process runtimes this machine cannot run: `VLLMModel` (an NVIDIA GPU) and `MLXModel` (Apple silicon).

They exist so that code written for smolagents imports; constructing one raises a `RuntimeError` that says what it
needs and the nbagent way to the same model (both runtimes also serve an OpenAI-compatible API, which
`OpenAIServerModel` speaks). Nothing here pretends to run a model: nbagent's tests cannot exercise either runtime.
"""

from __future__ import annotations

from typing import Any

from .base import Model

__all__ = ["MLXModel", "VLLMModel"]


class VLLMModel(Model):
    """Not available in nbagent: vLLM runs on an NVIDIA GPU (CUDA). Raises at construction, saying so."""

    def __init__(self, model_id: str, model_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        raise RuntimeError(
            f"VLLMModel({model_id!r}) is not available in nbagent: vLLM loads the model in this process on an NVIDIA "
            "GPU with CUDA (pip install vllm), which nbagent neither needs nor tests. Serve it instead "
            f"(`vllm serve {model_id}` on the GPU machine) and use OpenAIServerModel(model_id={model_id!r}, "
            "api_base='http://<host>:8000/v1'), or run it here with LlamaCppModel or TransformersModel."
        )


class MLXModel(Model):
    """Not available in nbagent: MLX runs on Apple silicon (macOS, M-series). Raises at construction, saying so."""

    def __init__(self, model_id: str, trust_remote_code: bool = False, **kwargs: Any) -> None:
        raise RuntimeError(
            f"MLXModel({model_id!r}) is not available in nbagent: MLX runs on Apple silicon (macOS on an M-series "
            "chip, pip install mlx-lm), which nbagent neither needs nor tests. On a Mac, serve it "
            f"(`mlx_lm.server --model {model_id}`) and use OpenAIServerModel(model_id={model_id!r}, "
            "api_base='http://127.0.0.1:8080/v1'), or run a GGUF build of it with LlamaCppModel."
        )
