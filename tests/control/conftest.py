"""Fixtures of the control tests: agents on ScriptedModels; a stand-in executor while the sandbox is missing."""

from __future__ import annotations

from typing import Any

import pytest
from control_helpers import StandInExecutor, real_sandbox


@pytest.fixture(autouse=True)
def _executor(monkeypatch: pytest.MonkeyPatch) -> None:
    if real_sandbox():
        return
    import nbagent.sandbox as sandbox
    from nbagent.sandbox import errors

    monkeypatch.setattr(sandbox, "LocalPythonExecutor", StandInExecutor, raising=False)
    monkeypatch.setattr(sandbox, "ExecutionError", errors.ExecutionError, raising=False)
    monkeypatch.setattr(sandbox, "ExecutionStopped", errors.ExecutionStopped, raising=False)


@pytest.fixture
def make_agent():
    from nbagent import CodeAgent, ScriptedModel

    def make(responses: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("verbosity_level", -1)
        kwargs.setdefault("show_widget", False)
        model = responses if hasattr(responses, "generate") else ScriptedModel(responses)
        return CodeAgent(tools=kwargs.pop("tools", []), model=model, **kwargs)

    return make
