"""Which views watch a run: the live widget in a notebook, the rich console elsewhere, or none.

`choose_views(agent)` is called by the agent when a run starts. In a kernel (or
with `show_widget=True`) it makes a fresh `AgentWidget` per run (so earlier cells
keep showing their own run), displays it, and connects its buttons to the agent's
`RunDriver`; elsewhere it returns the console view, or nothing when the agent is
silent. Nothing of Jupyter is imported unless a widget is shown.
"""

from __future__ import annotations

from typing import Any

from nbagent.loop import LogLevel, View

from .kernel import in_kernel

__all__ = ["choose_views", "show_live_widget", "show_loading_widget"]


def choose_views(agent: Any) -> list[View]:
    """The views of a new run of `agent` (its `show_widget` and `verbosity_level` decide)."""
    # show_widget=True always shows it; left unset, a notebook shows it unless the agent is told to be silent
    auto = agent.show_widget is None and agent.verbosity_level > LogLevel.OFF and in_kernel()
    if agent.show_widget is True or auto:
        agent._widget = _adopt_pending_widget(agent) or show_live_widget(agent)
        return [agent._widget]
    if agent.verbosity_level <= LogLevel.OFF:
        return []
    from nbagent.views.console import ConsoleView

    return [ConsoleView(agent.verbosity_level, console=getattr(getattr(agent, "logger", None), "console", None))]


def show_live_widget(agent: Any) -> Any:
    """Display a new widget for `agent`'s run, with working buttons (earlier runs' widgets lose theirs)."""
    from IPython.display import display

    from .widget import AgentWidget

    widget = AgentWidget.for_agent(agent)
    display(widget)
    agent.driver.attach(widget)
    widget.program_of = getattr(agent, "to_code", None)  # the run as code when it ends ("Copy as cell")
    return widget


def show_loading_widget(message: str) -> Any:
    """Display a widget at once that says `message` (e.g. "loading the offline model…"), before its agent exists.

    Give it to the agent as `agent._pending_widget`: its first run then shows in this widget.
    """
    from IPython.display import display

    from .widget import AgentWidget

    widget = AgentWidget()
    widget.run = {**widget.run, "status": "running", "message": message}
    display(widget)
    return widget


def _adopt_pending_widget(agent: Any) -> Any:
    """The widget shown while the agent's model loaded (see `show_loading_widget`), now wired to the agent."""
    widget = getattr(agent, "_pending_widget", None)
    if widget is None:
        return None
    agent._pending_widget = None
    model_id = getattr(getattr(agent, "model", None), "model_id", None)
    widget._builder.run.update(agent_name=getattr(agent, "name", None), model_id=model_id)
    agent.driver.attach(widget)
    widget.program_of = getattr(agent, "to_code", None)
    return widget
