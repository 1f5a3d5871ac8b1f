"""Shared by the loop's tests: a code agent driven by a scripted small model, as the aids see it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from nbagent import CodeAgent, ScriptedModel
from nbagent.loop.prompting import SMALL


@pytest.fixture
def small_agent() -> Callable[..., CodeAgent]:
    """`small_agent(bodies, namespace, max_steps=…, **options)`: each body one step's code, under the small
    profile, with pandas and matplotlib allowed."""

    def make(bodies: list[str], namespace: dict[str, Any], max_steps: int | None = None, **options: Any) -> CodeAgent:
        model = ScriptedModel([f"Thought: go.\n```python\n{body}\n```" for body in bodies])
        model.prompt_profile = SMALL
        return CodeAgent(
            tools=[],
            model=model,
            namespace=namespace,
            additional_authorized_imports=["pandas", "matplotlib", "matplotlib.*"],
            verbosity_level=-1,
            show_widget=False,
            max_steps=max_steps or len(bodies),
            **options,
        )

    return make
