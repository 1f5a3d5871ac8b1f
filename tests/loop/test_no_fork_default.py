"""Where `os.fork` is missing (Windows), the local executor runs the agent's code only when asked for by name.

A silent fallback put a hostile model's code in the kernel's own process, next to the widget that owns the page
(issue 29, item 6); now `CodeAgent()` and `%%agent` fail at once with one message that says why and how to ask.
"""

from __future__ import annotations

import os

import pytest
from IPython.core.error import UsageError

from nbagent import CodeAgent, ScriptedModel
from nbagent.loop.executors import NoForkError


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


@pytest.fixture
def no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "fork")
    monkeypatch.delenv("NBAGENT_EXECUTOR", raising=False)


@pytest.mark.parametrize("asked", [None, "isolated"], ids=["default", "isolated by name"])
def test_code_agent_without_fork_refuses_with_one_message(no_fork: None, asked: str | None) -> None:
    with pytest.raises(NoForkError) as refused:
        CodeAgent(tools=[], model=ScriptedModel([code("final_answer(1)")]), executor_type=asked)
    message = str(refused.value)
    assert "no os.fork" in message and "executor_type='local'" in message and "--executor local" in message
    assert "not a hostile one" in message


def test_code_agent_without_fork_runs_locally_when_asked(no_fork: None, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = CodeAgent(tools=[], model=ScriptedModel([code("final_answer(6 * 7)")]), executor_type="local")
    assert agent.executor_type == "local" and agent.run("Six times seven?") == 42
    monkeypatch.setenv("NBAGENT_EXECUTOR", "local")  # the environment's choice is a choice by name too
    assert CodeAgent(tools=[], model=ScriptedModel([code("final_answer(1)")])).executor_type == "local"


def test_magic_without_fork_is_one_usage_error_unless_local_is_asked(ip, no_fork: None) -> None:
    ip.user_ns["m"] = ScriptedModel([code("final_answer(1)")] * 2)
    magics = ip.magics_manager.registry["AgentMagics"]
    with pytest.raises(UsageError, match=r"no os\.fork.*--executor local"):
        ip.run_cell_magic("agent", "-m m --quiet", "One?")
    with pytest.raises(UsageError, match=r"no os\.fork"):
        ip.run_cell_magic("agent", "-m m --quiet --executor isolated", "One?")
    ip.run_cell_magic("agent", "-m m --quiet --executor local", "One?")
    assert magics.last_agent.executor_type == "local"
