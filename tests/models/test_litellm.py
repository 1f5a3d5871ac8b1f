"""LiteLLMModel: a clear error without the extra; with it, the real llama.cpp server on loopback."""

from __future__ import annotations

import sys

import pytest

from nbagent.models.base import agglomerate_stream_deltas

MESSAGES = [{"role": "user", "content": "Name two colors."}]


def test_missing_litellm_names_the_extra(monkeypatch):
    from nbagent.models.litellm_model import LiteLLMModel

    monkeypatch.setitem(sys.modules, "litellm", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'jupyter-nbagent\[litellm\]'"):
        LiteLLMModel("openai/gpt-4o-mini")


@pytest.mark.slow
def test_litellm_against_the_real_server(llama_server):
    pytest.importorskip("litellm", reason="optional extra jupyter-nbagent[litellm] not installed")
    from nbagent.models.litellm_model import LiteLLMModel

    model = LiteLLMModel(
        "openai/smollm2", api_base=llama_server, api_key="sk-unused-123", temperature=0.0, max_tokens=20, timeout=60
    )
    model.generate(MESSAGES)  # warm llama.cpp's prompt cache: a cold and a cached prompt may decode differently
    whole = model.generate(MESSAGES)
    assert whole.content.strip() and whole.token_usage.output_tokens > 0
    deltas = list(model.generate_stream(MESSAGES))
    assert len([d for d in deltas if d.content]) > 2, "not streamed"
    assert agglomerate_stream_deltas(deltas).content == whole.content
    assert "sk-unused-123" not in repr(model) + str(model.to_dict())


def test_litellm_errors_are_one_clear_model_error(fault_server):
    pytest.importorskip("litellm", reason="optional extra jupyter-nbagent[litellm] not installed")
    from nbagent.models import ModelError
    from nbagent.models.litellm_model import LiteLLMModel
    from nbagent.models.retry import RetryPolicy

    fault_server.script = [("status", 429, "slow down"), "ok"]
    model = LiteLLMModel("openai/fake", api_base=fault_server.url, api_key="x", retry=RetryPolicy(1, 0.01))
    assert model.generate(MESSAGES).content == "Hello from the fault server."
    fault_server.script = [("status", 500, "boom")]
    with pytest.raises(ModelError, match="HTTP 500"):
        model.generate(MESSAGES)


def router_deployments(api_base: str) -> list[dict]:
    return [
        {
            "model_name": "smol",
            "litellm_params": {"model": "openai/smollm2", "api_base": api_base, "api_key": "sk-router-456"},
        }
    ]


def test_router_model_defaults_and_secrets():
    pytest.importorskip("litellm", reason="optional extra jupyter-nbagent[litellm] not installed")
    from nbagent.models.litellm_model import LiteLLMRouterModel

    deployments = [
        {"model_name": "fast", "litellm_params": {"model": "groq/llama-3.3-70b", "api_key": "sk-secret-1"}},
        {"model_name": "fast", "litellm_params": {"model": "openai/gpt-4o-mini", "api_key": "sk-secret-2"}},
        {"model_name": "smart", "litellm_params": {"model": "openai/gpt-4o"}},
    ]
    fast = LiteLLMRouterModel("fast", deployments, client_kwargs={"routing_strategy": "simple-shuffle"})
    assert fast.flatten_messages_as_text is True  # a groq deployment takes text only
    assert LiteLLMRouterModel("smart", deployments).flatten_messages_as_text is False
    assert LiteLLMRouterModel("fast", deployments, flatten_messages_as_text=False).flatten_messages_as_text is False
    saved = str(fast.to_dict()) + repr(fast)
    assert "sk-secret" not in saved and "groq/llama-3.3-70b" in saved


@pytest.mark.slow
def test_router_against_the_real_server(llama_server):
    pytest.importorskip("litellm", reason="optional extra jupyter-nbagent[litellm] not installed")
    from nbagent.models.litellm_model import LiteLLMRouterModel

    model = LiteLLMRouterModel("smol", router_deployments(llama_server), temperature=0.0, max_tokens=20, timeout=60)
    model.generate(MESSAGES)  # warm the prompt cache (see above)
    whole = model.generate(MESSAGES)
    assert whole.content.strip() and whole.token_usage.output_tokens > 0
    streamed = agglomerate_stream_deltas(list(model.generate_stream(MESSAGES)))
    assert streamed.content == whole.content
    assert "sk-router-456" not in repr(model) + str(model.to_dict())
