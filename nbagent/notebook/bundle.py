"""How a memory (or an agent) shows itself in a notebook: the widget view plus static HTML and text.

The package root registers `memory_mimebundle` as the IPython display of `AgentMemory`
(by type name), so the record layer never imports this one.
"""

from __future__ import annotations

from typing import Any

from nbagent.record.status import answered, outcome_message
from nbagent.text import ONE_LINE, truncate
from nbagent.views.html import memory_to_html
from nbagent.views.state import memory_to_state

__all__ = ["memory_mimebundle", "memory_text"]


def memory_text(memory: Any) -> str:
    """A short text summary: number of steps, how the run ended, and the answer when it answered."""
    run, _ = memory_to_state(memory)
    steps = sum(1 for s in run["steps"] if s["kind"] == "action")
    ended = outcome_message(run["outcome"]) if run["outcome"] else "nothing ran yet"
    answer = (run["final_answer"] or {}).get("text") if answered(run["outcome"]) else None
    text = f"AgentMemory({steps} step{'' if steps == 1 else 's'}, {ended})"
    return text + (f": {truncate(answer, ONE_LINE)}" if answer else "")


def memory_mimebundle(memory: Any, widget: Any = None) -> dict[str, Any]:
    """The output bundle of `memory`: widget view + `text/html` + `text/plain`.

    `widget` (e.g. `agent.widget`) is used when it already shows a run (live or
    finished); otherwise a widget is made from the memory. When the widget's
    front-end is not built, the bundle holds the static HTML and text only.
    """
    try:
        from nbagent.notebook.widget import AgentWidget
    except ImportError:
        return {"text/html": memory_to_html(memory), "text/plain": memory_text(memory)}
    if widget is None or widget.run.get("status", "idle") == "idle":
        widget = AgentWidget.from_memory(memory)
    return {**widget.mimebundle(), "text/plain": memory_text(memory)}  # says how the run ended
