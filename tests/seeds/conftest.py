"""Fixtures for the seed-example tests (see seedkit.py for the helpers)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def fake_list_models(monkeypatch):
    """`huggingface_hub.list_models` answering from a local table (the Hub needs a network).

    Records its calls; the examples import it with `from huggingface_hub import list_models`,
    so patching the module attribute before they run is enough.
    """
    import huggingface_hub

    table = {
        "text-to-video": ["ByteDance/AnimateDiff-Lightning", "ali-vilab/text-to-video-ms-1.7b"],
        "text-to-image": ["black-forest-labs/FLUX.1-dev", "stabilityai/stable-diffusion-xl-base-1.0"],
        "text-classification": ["distilbert/distilbert-base-uncased-finetuned-sst-2-english"],
    }
    calls = []

    def list_models(filter=None, sort=None, direction=None, **kwargs):
        calls.append({"filter": filter, "sort": sort, "direction": direction})
        return iter(types.SimpleNamespace(id=model_id) for model_id in table.get(filter, []))

    monkeypatch.setattr(huggingface_hub, "list_models", list_models)
    return calls
