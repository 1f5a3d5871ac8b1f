"""`%agent --undo` and `%agent --keep`: the magic's words for `agent.undo()` and `agent.keep()`.

An undo also puts back the variable `-o NAME` stored the run's answer in (the magic bound it, not the agent's code:
the executor's snapshots do not know it), unless the person changed it since.
"""

from __future__ import annotations

from typing import Any

__all__ = ["undo_or_keep"]

_MISSING = object()


def undo_or_keep(agent: Any, namespace: dict[str, Any], undo: bool, keep: str | None, out: tuple | None) -> str:
    """Carry out `--undo` (``out``: the last run's ``(agent, name, bound before, value before, answer stored)``) or
    `--keep` (``"*"``: every name of `agent.scratch`, else a comma-separated list); the line to print."""
    if undo:
        note = agent.undo()
        if out is not None and agent.session.undone:
            note += _undo_out(namespace, *out[1:])
        return note
    names = None if keep == "*" else [part.strip() for part in (keep or "").split(",") if part.strip()]
    try:
        brought = agent.keep(*(names or []))
    except ValueError as error:
        from IPython.core.error import UsageError

        raise UsageError(f"--keep: {error}") from None
    if not brought:
        return "The agent's scope holds no names to bring in."
    left = f"; still in agent.scratch: {', '.join(agent.scratch)}" if agent.scratch else ""
    return f"Brought into your namespace: {', '.join(brought)}{left}."


def _undo_out(namespace: dict[str, Any], name: str, bound: bool, before: Any, stored: Any) -> str:
    if namespace.get(name, _MISSING) is not stored:
        return f" {name} (-o) is left as you set it since."
    if not bound:
        namespace.pop(name, None)
        return f" {name} (-o) is removed."
    namespace[name] = before
    return f" {name} (-o) is back to its value before the run."
