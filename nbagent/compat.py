"""smolagents names that nbagent keeps for old code: deprecated wrappers, aliases and clear refusals.

Everything here exists so that the examples of smolagents' documentation run
with `nbagent` imports (see tests/seeds/AUDIT.md). New code should use the
names each docstring points to.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.tree import Tree

    from nbagent.agents import MultiStepAgent
    from nbagent.memory import ActionStep

__all__ = [
    "ManagedAgent",
    "StepLog",
    "agent_logs",
    "agent_tree",
    "from_hub",
    "pop_legacy_options",
    "visualize_agent",
]


# ---------------------------------------------------------------------------- constructor options


# Options of older smolagents versions: (the value that means "off", why nbagent has no such option).
_LEGACY_OPTIONS: dict[str, tuple[Any, str]] = {
    "grammar": (
        None,
        "nbagent does not constrain the model with a grammar (smolagents dropped this option too); "
        "constrain generation in the model itself, e.g. with its response_format",
    ),
    "tool_parser": (
        None,
        "nbagent reads tool calls itself (native tool calls, or JSON in the text); "
        "to read another format, give your model a parse_tool_calls(message) method",
    ),
    "use_e2b_executor": (
        False,
        "nbagent runs the agent's code in its own local sandbox; remote executors (E2B, Docker) are not supported",
    ),
}


def pop_legacy_options(owner: str, options: dict[str, Any]) -> dict[str, Any]:
    """Remove old smolagents options from `options`: harmless when "off" (with a warning), refused otherwise."""
    rest = dict(options)
    for name, (off_value, why) in _LEGACY_OPTIONS.items():
        if name not in rest:
            continue
        value = rest.pop(name)
        if value != off_value:
            raise TypeError(f"{owner}({name}={value!r}) is not supported: {why}.")
        warnings.warn(f"{owner}({name}=...) has no effect in nbagent: {why}.", DeprecationWarning, stacklevel=4)
    return rest


# ---------------------------------------------------------------------------- ManagedAgent


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
        from nbagent.agents import MultiStepAgent

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


# ---------------------------------------------------------------------------- agent.logs


class StepLog(dict):
    """One action step as a dict, as `agent.logs` entries were in early smolagents.

    Holds the step's fields (`step_number`, `model_output`, `observations`, …)
    plus the short keys older examples read: `code`, `output`, `duration`,
    `llm_output`, `observation`. Attribute access reads the step itself.
    """

    def __init__(self, step: ActionStep) -> None:
        super().__init__(step.dict())
        self.update(
            code=step.code_action,
            output=step.action_output,
            duration=step.timing.duration,
            llm_output=step.model_output,
            observation=step.observations,
        )
        self._step = step

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.__dict__["_step"], name)


def agent_logs(agent: MultiStepAgent) -> list[StepLog]:
    """The action steps of the agent's memory as `StepLog` dicts (see `MultiStepAgent.logs`)."""
    from nbagent.memory import ActionStep

    warnings.warn(
        "agent.logs is deprecated: read agent.memory.steps (the memory steps) or agent.memory.get_full_steps() (dicts).",
        DeprecationWarning,
        stacklevel=3,
    )
    return [StepLog(step) for step in agent.memory.steps if isinstance(step, ActionStep)]


# ---------------------------------------------------------------------------- agent.visualize()


def agent_tree(agent: MultiStepAgent) -> Tree:
    """A rich tree of the agent: its model, tools (with their inputs) and, recursively, its managed agents."""
    from rich.tree import Tree

    tree = Tree(_agent_label(agent))
    _add_agent_branches(tree, agent)
    return tree


def _agent_label(agent: MultiStepAgent) -> str:
    model_id = getattr(agent.model, "model_id", None)
    name = f"[bold]{agent.name}[/bold] | " if agent.name else ""
    return f"{name}[bold]{type(agent).__name__}[/bold] | {type(agent.model).__name__}" + (
        f" {model_id}" if model_id else ""
    )


def _add_agent_branches(tree: Tree, agent: MultiStepAgent) -> None:
    from rich.table import Table

    if agent.description:
        tree.add(f"[italic]Description:[/italic] {agent.description}")
    imports = getattr(agent, "authorized_imports", None)
    if imports:
        tree.add(f"[italic]Authorized imports:[/italic] {', '.join(sorted(imports))}")
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    for column in ("Name", "Description", "Arguments"):
        table.add_column(column)
    for tool in agent.tools.values():
        table.add_row(tool.name, tool.description, _describe_inputs(tool.inputs))
    tree.add("[bold]Tools:[/bold]").add(table)
    if agent.managed_agents:
        team = tree.add("[bold]Managed agents:[/bold]")
        for managed in agent.managed_agents.values():
            _add_agent_branches(team.add(_agent_label(managed)), managed)


def _describe_inputs(inputs: dict[str, dict[str, Any]]) -> str:
    parts = []
    for arg, spec in inputs.items():
        optional = " (optional)" if spec.get("nullable") else ""
        parts.append(f"{arg} ({spec.get('type')}{optional}): {spec.get('description', '')}")
    return "\n".join(parts)


def visualize_agent(agent: MultiStepAgent, console: Console | None = None) -> None:
    """Print `agent_tree(agent)` (smolagents' `agent.visualize()`)."""
    from rich.console import Console

    (console or Console(highlight=False)).print(agent_tree(agent))


# ---------------------------------------------------------------------------- from_hub


def from_hub(repo_id: str, token: str | None = None, trust_remote_code: bool = False, **kwargs: Any) -> MultiStepAgent:
    """Load a saved agent (a Hub Space, or a local folder) whatever its class, as `CodeAgent.from_hub` does.

    The agent's tools are code that will run here: pass `trust_remote_code=True` once you have read them.
    """
    from nbagent.agents import MultiStepAgent

    return MultiStepAgent.from_hub(repo_id, token=token, trust_remote_code=trust_remote_code, **kwargs)
