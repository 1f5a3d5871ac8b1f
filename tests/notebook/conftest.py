"""Fixtures of the control tests: CodeAgents on ScriptedModels (real sandbox, no widget)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def make_agent():
    from nbagent import CodeAgent, ScriptedModel

    def make(responses: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("verbosity_level", -1)
        kwargs.setdefault("show_widget", False)
        model = responses if hasattr(responses, "generate") else ScriptedModel(responses)
        return CodeAgent(tools=kwargs.pop("tools", []), model=model, **kwargs)

    return make
