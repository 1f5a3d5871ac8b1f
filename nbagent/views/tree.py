"""`agent.visualize()`: the agent as a rich tree — model, tools with their inputs, managed agents."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.tree import Tree

__all__ = ["agent_tree", "visualize_agent"]


def agent_tree(agent: Any) -> Tree:
    """A rich tree of the agent: its model, tools (with their inputs) and, recursively, its managed agents."""
    tree = Tree(_agent_label(agent))
    _add_agent_branches(tree, agent)
    return tree


def _agent_label(agent: Any) -> str:
    model_id = getattr(agent.model, "model_id", None)
    name = f"[bold]{agent.name}[/bold] | " if agent.name else ""
    return f"{name}[bold]{type(agent).__name__}[/bold] | {type(agent.model).__name__}" + (
        f" {model_id}" if model_id else ""
    )


def _add_agent_branches(tree: Tree, agent: Any) -> None:
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


def visualize_agent(agent: Any, console: Console | None = None) -> None:
    """Print `agent_tree(agent)` (smolagents' `agent.visualize()`)."""
    (console or Console(highlight=False)).print(agent_tree(agent))
