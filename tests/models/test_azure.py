"""AzureOpenAIServerModel (smolagents' AzureOpenAIModel) against the real llama.cpp server, reached
through Azure's routes (/openai/deployments/<deployment>/chat/completions?api-version=..., api-key header)."""

from __future__ import annotations

import pytest
from azure_proxy import AzureProxy

from nbagent.models import AzureOpenAIModel, ModelError
from nbagent.models.base import agglomerate_stream_deltas
from nbagent.models.openai_server import AzureOpenAIServerModel

pytestmark = pytest.mark.slow

MESSAGES = [{"role": "user", "content": "Name two colors."}]
VERSION = "2024-10-21"


def test_azure_model_talks_azure_routes(llama_server):
    with AzureProxy(llama_server, api_key="azure-key-123", api_version=VERSION) as proxy:
        model = AzureOpenAIServerModel(
            "smollm2",
            azure_endpoint=proxy.endpoint,
            api_key="azure-key-123",
            api_version=VERSION,
            temperature=0.0,
            max_tokens=20,
            timeout=60,
        )
        model.generate(MESSAGES)  # warm llama.cpp's prompt cache: a cold and a cached prompt may decode differently
        whole = model.generate(MESSAGES)
        assert whole.content.strip() and whole.token_usage.output_tokens > 0
        streamed = agglomerate_stream_deltas(list(model.generate_stream(MESSAGES)))
        assert streamed.content == whole.content
        assert proxy.requests[0] == {
            "path": "/openai/deployments/smollm2/chat/completions",
            "api_version": VERSION,
            "api_key": "azure-key-123",
        }
        assert "azure-key-123" not in repr(model) + str(model.to_dict())
        assert AzureOpenAIModel is AzureOpenAIServerModel


def test_azure_wrong_key_is_one_clear_error(llama_server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "wrong")
    monkeypatch.setenv("OPENAI_API_VERSION", VERSION)
    with AzureProxy(llama_server, api_key="right", api_version=VERSION) as proxy:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", proxy.endpoint)
        model = AzureOpenAIServerModel("smollm2", timeout=30)  # endpoint, key and version from the environment
        with pytest.raises(ModelError, match=r"Azure OpenAI call .* HTTP 401.*invalid subscription key.*API key"):
            model.generate(MESSAGES)
