"""Which views watch a run: the live widget in a notebook, the rich console elsewhere."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbagent.console import ConsoleView, LogLevel

if TYPE_CHECKING:
    from nbagent.agents import MultiStepAgent

__all__ = ["make_views", "in_notebook"]


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where widgets can be displayed)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def make_views(agent: MultiStepAgent) -> list[Any]:
    """A fresh widget per run in a notebook (so earlier cells keep showing their own run), else the console."""
    # show_widget=True always shows it; left unset, a notebook shows it unless the agent is told to be silent
    auto = agent.show_widget is None and agent.verbosity_level > LogLevel.OFF and in_notebook()
    if agent.show_widget is True or auto:
        from IPython.display import display

        from nbagent.widget import AgentWidget

        agent._widget = AgentWidget.for_agent(agent)
        display(agent._widget)
        return [agent._widget]
    if agent.verbosity_level <= LogLevel.OFF:
        return []
    return [ConsoleView(agent.verbosity_level)]
