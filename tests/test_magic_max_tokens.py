"""`%%agent --max-tokens N`: the per-step token cap of the agent the magic makes (0: the model's own)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from nbagent import ScriptedModel


def recording_model(seen: list, profile: str | None = None) -> ScriptedModel:
    def answer(messages, **kwargs):
        seen.append(kwargs.get("max_new_tokens"))
        return "Thought: done.\n```python\nfinal_answer(1)\n```"

    model = ScriptedModel(answer)
    if profile:
        model.prompt_profile = profile
    return model


def test_max_tokens_caps_every_step(ip):
    seen: list = []
    ip.user_ns["m"] = recording_model(seen)
    assert ip.run_cell_magic("agent", "-m m --quiet --max-tokens 64", "One.") == 1
    assert seen == [64]
    assert ip.magics_manager.registry["AgentMagics"].last_agent.max_tokens_per_step == 64


def test_a_small_model_is_capped_by_default_and_zero_lifts_the_cap(ip):
    from nbagent.loop.prompting import SMALL_MODEL_STEP_TOKENS

    seen: list = []
    ip.user_ns["m"] = recording_model(seen, profile="small")
    ip.run_cell_magic("agent", "-m m --quiet", "One.")
    ip.run_cell_magic("agent", "-m m --quiet --max-tokens 0", "One.")
    assert seen == [SMALL_MODEL_STEP_TOKENS, None]


def test_a_negative_cap_is_a_usage_error(ip):
    ip.user_ns["m"] = recording_model([])
    with pytest.raises(UsageError, match="--max-tokens must be 0 or more"):
        ip.run_cell_magic("agent", "-m m --quiet --max-tokens -5", "One.")
