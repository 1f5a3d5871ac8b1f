"""TransformersModel on a tiny random Llama built offline (fast) and on the SmolLM2 GGUF (slow)."""

from __future__ import annotations

import json
import re
import threading

import pytest

from nbagent.models import ModelError
from nbagent.models.base import agglomerate_stream_deltas

STEP1 = [
    {"role": "system", "content": "You are a helpful coding assistant. " * 8},
    {"role": "user", "content": "compute 2 ** 10 please"},
]


def step2(first: str) -> list[dict[str, str]]:
    return [*STEP1, {"role": "assistant", "content": first}, {"role": "user", "content": "now reverse notebook"}]


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from nbagent.models.transformers import TransformersModel

    return TransformersModel(str(tiny_model_dir), torch_dtype="float32", max_new_tokens=24)


@pytest.fixture(scope="module")
def tiny_fresh(tiny_model_dir):
    from nbagent.models.transformers import TransformersModel

    return TransformersModel(str(tiny_model_dir), torch_dtype="float32", max_new_tokens=24, reuse_cache=False)


def test_generate_text_and_usage(tiny):
    message = tiny.generate(STEP1)
    assert isinstance(message.content, str) and message.content
    assert message.token_usage.input_tokens == len(tiny.prompt_ids(STEP1))
    assert 0 < message.token_usage.output_tokens <= 24


def test_default_dtype_is_bfloat16_on_cpu(tiny_model_dir):
    import torch

    from nbagent.models.transformers import TransformersModel

    model = TransformersModel(str(tiny_model_dir), max_new_tokens=4)
    assert model.model.dtype == torch.bfloat16
    assert model.generate(STEP1).token_usage.output_tokens <= 4


def test_cache_reuse_gives_the_same_text_as_recompute(tiny, tiny_fresh):
    tiny.reset_cache()
    first = tiny.generate(STEP1)
    assert tiny.last_reused_tokens == 0
    second = tiny.generate(step2(first.content))
    assert tiny.last_reused_tokens >= len(tiny.prompt_ids(STEP1)) - 1  # at least the whole first prompt
    recomputed = tiny_fresh.generate(step2(first.content))
    assert tiny_fresh.last_reused_tokens == 0
    assert second.content == recomputed.content
    # Same again one step further, through the streaming path.
    third_msgs = [
        *step2(first.content),
        {"role": "assistant", "content": second.content},
        {"role": "user", "content": "and sum 1..100"},
    ]
    streamed = agglomerate_stream_deltas(list(tiny.generate_stream(third_msgs)))
    assert tiny.last_reused_tokens >= len(tiny.prompt_ids(step2(first.content))) - 1
    assert streamed.content == tiny_fresh.generate(third_msgs).content


def test_edited_conversation_falls_back(tiny, tiny_fresh):
    tiny.reset_cache()
    first = tiny.generate(STEP1)
    tiny.generate(step2(first.content))
    edited = step2(first.content)
    edited[1] = {"role": "user", "content": "compute 3 ** 5 please"}  # an earlier message changed
    shared_with_edit = len(tiny.prompt_ids(STEP1[:1]))  # only the system turn is still the same
    result = tiny.generate(edited)
    assert 0 < tiny.last_reused_tokens <= shared_with_edit + 3
    assert result.content == tiny_fresh.generate(edited).content
    # Entirely different conversation: nothing shared, full recompute, still correct.
    other = [{"role": "user", "content": "hello"}]
    assert tiny.generate(other).content == tiny_fresh.generate(other).content
    assert tiny.last_reused_tokens <= 2


def test_stop_sequences_cut_the_text(tiny_fresh):
    full = tiny_fresh.generate(STEP1).content
    candidates = [m.start() for m in re.finditer(r"[A-Za-z]{2}", full) if m.start() > 0]
    assert candidates, f"no ASCII stop candidate in {full!r}"
    at = candidates[0]
    stop = full[at : at + 2]
    expected = full[: full.find(stop)]
    cut = tiny_fresh.generate(STEP1, stop_sequences=[stop])
    assert cut.content == expected
    assert cut.token_usage.output_tokens < tiny_fresh.generate(STEP1).token_usage.output_tokens + 1
    streamed = agglomerate_stream_deltas(list(tiny_fresh.generate_stream(STEP1, stop_sequences=[stop])))
    assert streamed.content == expected


def test_stream_matches_generate_and_reports_usage(tiny_fresh):
    whole = tiny_fresh.generate(STEP1)
    deltas = list(tiny_fresh.generate_stream(STEP1))
    assert len([d for d in deltas if d.content]) >= 2
    assert agglomerate_stream_deltas(deltas).content == whole.content
    assert deltas[-1].token_usage.input_tokens == whole.token_usage.input_tokens
    assert deltas[-1].token_usage.output_tokens == whole.token_usage.output_tokens


def test_abandoned_stream_stops_generation_and_frees_the_model(tiny_model_dir):
    from nbagent.models.transformers import TransformersModel

    model = TransformersModel(str(tiny_model_dir), torch_dtype="float32", max_new_tokens=2000)
    stream = model.generate_stream(STEP1)
    next(stream)
    stream.close()  # the consumer went away
    assert not [t for t in threading.enumerate() if t.name == "nbagent-generate"]
    assert model.generate(STEP1, max_new_tokens=3).token_usage.output_tokens <= 3


def test_to_dict_and_errors(tiny, tmp_path):
    from nbagent.models.transformers import TransformersModel

    data = tiny.to_dict()
    assert data["class"] == "TransformersModel" and data["torch_dtype"] == "float32"
    json.dumps(data)
    with pytest.raises(ValueError, match="default_model"):
        TransformersModel()
    with pytest.raises(ModelError, match="response_format"):
        tiny.generate(STEP1, response_format={"type": "json_object"})
    with pytest.raises((ModelError, OSError)):
        TransformersModel(str(tmp_path / "no-such-model"))


@pytest.mark.slow
def test_gguf_file_offline_with_cache_reuse(smol_gguf):
    """A real chat model loaded from a GGUF: reuse and recompute agree on step 2."""
    from nbagent.models.transformers import TransformersModel

    model = TransformersModel(str(smol_gguf.parent), gguf_file=smol_gguf.name, torch_dtype="float32", max_new_tokens=20)
    first = model.generate(STEP1)
    assert first.content.strip()
    second = model.generate(step2(first.content), stop_sequences=["\n\n"])
    assert model.last_reused_tokens > first.token_usage.input_tokens
    model.reuse_cache = False
    model.reset_cache()
    assert model.generate(step2(first.content), stop_sequences=["\n\n"]).content == second.content
