"""Limits said plainly: the model's own output cap is made explicit (so a cut step says so), and a context
overflow names what helps — a larger `--n-ctx`, a shorter task, a new run — once, never `--continue`."""

from __future__ import annotations

import pytest

from nbagent import ScriptedModel
from nbagent.magics import AgentRunFailed
from nbagent.models.base import ModelError
from nbagent.models.llamacpp import context_overflow_message


def test_the_models_own_cap_becomes_the_step_cap(ip):
    seen: list = []

    def answer(_messages, **kwargs):
        seen.append(kwargs.get("max_new_tokens"))
        return "Thought: done.\n```python\nfinal_answer(1)\n```"

    model = ScriptedModel(answer)
    model.max_new_tokens = 1024  # e.g. LlamaCppModel's default
    ip.user_ns["m"] = model
    ip.run_cell_magic("agent", "-m m --quiet", "One.")
    assert seen == [1024]  # cut at 1024, the step's observation says so (tests/loop/test_small_model.py)
    assert ip.magics_manager.registry["AgentMagics"].last_agent.max_tokens_per_step == 1024


def test_a_context_overflow_says_what_helps():
    message = context_overflow_message(prompt_tokens=8000, max_tokens=1024, n_ctx=8192)
    assert "n_ctx=8192" in message and "`%%agent --n-ctx 16384`" in message
    assert "fewer or smaller variables" in message and "a new run" in message
    assert "\n" not in message
    assert "--n-ctx 20480" in context_overflow_message(prompt_tokens=19000, max_tokens=1024, n_ctx=4096)


def test_an_overflowing_run_ends_in_one_line_that_does_not_suggest_continue(ip, capsys):
    def overflow(_messages, **_kwargs):
        raise ModelError(context_overflow_message(9000, 1024, 8192))

    ip.user_ns["m"] = ScriptedModel(overflow)
    with pytest.raises(AgentRunFailed) as info:
        ip.run_cell_magic("agent", "-m m", "t")
    line = info.value._render_traceback_()
    assert len(line) == 1 and "\n" not in line[0]
    assert "--n-ctx 16384" in str(info.value) and "goes on from it" not in str(info.value)
    printed = capsys.readouterr().out
    assert printed.count("exceeds the context window") == 1  # the console said it once; the cell's line is the other
