"""How a memory (or an agent) shows itself in a notebook: the widget view plus static HTML and text."""

from __future__ import annotations

from typing import Any

__all__ = ["memory_mimebundle", "memory_text"]


def memory_text(memory: Any) -> str:
    """A short text summary: number of steps, and the final answer when there is one."""
    from nbagent.views.state import memory_to_state

    run, _ = memory_to_state(memory)
    steps = sum(1 for s in run["steps"] if s["kind"] == "action")
    answer = (run["final_answer"] or {}).get("text")
    text = f"AgentMemory({steps} step{'' if steps == 1 else 's'}, {run['status']})"
    return text + (f": {answer[:80]}" if answer else "")


def memory_mimebundle(memory: Any, widget: Any = None) -> dict[str, Any]:
    """The output bundle of `memory`: widget view + `text/html` + `text/plain`.

    `widget` (e.g. `agent.widget`) is used when it already shows a run (live or
    finished); otherwise a widget is made from the memory. When the widget's
    front-end is not built, the bundle holds the static HTML and text only.
    """
    try:
        from nbagent.widget import AgentWidget
    except ImportError:
        from nbagent.views.html import memory_to_html

        return {"text/html": memory_to_html(memory), "text/plain": memory_text(memory)}
    if widget is None or widget.run.get("status", "idle") == "idle":
        widget = AgentWidget.from_memory(memory)
    return widget.mimebundle()
