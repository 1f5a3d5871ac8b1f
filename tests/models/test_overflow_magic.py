"""A real context overflow (llama.cpp, a small GGUF) through `%%agent --n-ctx`: one line that says what helps."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.testing.globalipapp import start_ipython

from nbagent.magics import AgentRunFailed

pytestmark = [pytest.mark.slow, pytest.mark.model]


def test_n_ctx_reaches_llama_cpp_and_an_overflow_says_what_helps(smol_gguf: Path) -> None:
    start_ipython()
    from IPython import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "nbagent")
    magics = shell.magics_manager.registry["AgentMagics"]
    magics.show_widget = False
    try:
        with pytest.raises(AgentRunFailed) as info:
            shell.run_cell_magic("agent", f'-m "{smol_gguf}" --n-ctx 512 --max-tokens 64', "What is 2 + 2?")
        assert magics.last_agent.model.n_ctx == 512  # the option reached the model nbagent loaded
    finally:
        magics.last_agent = None
        magics._models.clear()
    message = str(info.value)
    assert "exceeds the context window n_ctx=512" in message
    assert "`%%agent --n-ctx " in message and "a new run" in message
    assert "goes on from it" not in message  # --continue would only overflow again
    assert len(info.value._render_traceback_()) == 1
