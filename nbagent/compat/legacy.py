"""smolagents names kept for old code: `ManagedAgent` (deprecated in smolagents 1.8) and `from_hub`.

New code should use the names each docstring points to (see tests/seeds/AUDIT.md).
"""

from __future__ import annotations

import warnings
from typing import Any

from nbagent.agents import MultiStepAgent

__all__ = ["ManagedAgent", "from_hub"]


class ManagedAgent:
    """Deprecated (smolagents 1.8): give the agent a `name` and `description` instead.

    `ManagedAgent(agent, name, description)` sets those on `agent` and returns
    the agent itself, which a manager then calls like a tool:
    `CodeAgent(tools=[], model=model, managed_agents=[web_agent])`.
    `additional_prompting` is added to the agent's instructions.
    """

    def __new__(  # type: ignore[misc]
        cls,
        agent: MultiStepAgent,
        name: str,
        description: str,
        additional_prompting: str | None = None,
        provide_run_summary: bool = False,
        managed_agent_prompt: str | None = None,
    ) -> MultiStepAgent:
        warnings.warn(
            "ManagedAgent is deprecated: pass name= and description= to the agent itself, "
            "e.g. CodeAgent(tools=..., model=..., name='web_search', description='...'), "
            "then give that agent to managed_agents=[...].",
            DeprecationWarning,
            stacklevel=2,
        )
        if not isinstance(agent, MultiStepAgent):
            raise TypeError(
                f"ManagedAgent(agent=...) takes a CodeAgent or ToolCallingAgent, got {type(agent).__name__}"
            )
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(
                f"ManagedAgent name {name!r} must be a valid Python identifier (the manager calls it like a function)"
            )
        if not description:
            raise ValueError("ManagedAgent needs a description so the manager knows when to call it")
        if managed_agent_prompt is not None:
            raise TypeError(
                "ManagedAgent(managed_agent_prompt=...) is not supported: set the agent's "
                "prompt_templates={'managed_agent': {'task': ..., 'report': ...}} instead"
            )
        agent.name, agent.description = name, description
        agent.provide_run_summary = provide_run_summary
        if additional_prompting:
            agent.instructions = "\n\n".join(filter(None, [agent.instructions, additional_prompting]))
        return agent


def from_hub(repo_id: str, token: str | None = None, trust_remote_code: bool = False, **kwargs: Any) -> MultiStepAgent:
    """Load a saved agent (a Hub Space, or a local folder) whatever its class, as `CodeAgent.from_hub` does.

    The agent's tools are code that will run here: pass `trust_remote_code=True` once you have read them.
    """
    return MultiStepAgent.from_hub(repo_id, token=token, trust_remote_code=trust_remote_code, **kwargs)
