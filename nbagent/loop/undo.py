"""What an undo says: the names it put back and removed, what it could not restore, and what no undo reaches.

An undo (`RunSession.undo`) is a rewind to before the run's first step (sandbox/wire/timeline.py); this module only
turns its outcome (a `Rewound`) into the sentence the widget, the console and `%agent --undo` show.
"""

from __future__ import annotations

from typing import Any

__all__ = ["undo_note", "NOT_UNDONE"]

#: What no undo takes back: it restores the namespace's bindings, not the world outside it.
NOT_UNDONE = "Not undone: files the code wrote and what tools did{tools}."
_SHOWN = 8


def undo_note(rewound: Any, ran_code: bool, failure: str = "", tools: list[str] | None = None) -> str:
    """The note of an undo from its `Rewound` (None: nothing was rewound), ``ran_code``: the run's code changed a
    variable at all; ``failure``: why the executor could not rewind; ``tools``: the tools the run called."""
    if not ran_code:
        return "Nothing to undo: the run's code changed no variable."
    said = f" ({', '.join(tools)})" if tools else ""
    if failure:
        return f"The run could not be undone ({failure}); variables keep the values it gave them."
    if rewound is None:
        return "This agent's executor keeps no snapshots: the run could not be undone."
    if not rewound.found:
        return (
            "The run could not be undone: its snapshot was dropped by the snapshot limit (max_snapshots, "
            "max_snapshot_bytes); variables keep the values it gave them."
        )
    parts = ["Undone: your variables are as they were before the run"]
    restored = [name for name in rewound.restored if name not in rewound.unrestorable]
    done = [text for text in (_listed(restored, "restored"), _listed(rewound.removed, "removed")) if text]
    parts[0] += f" ({'; '.join(done)})." if done else "."
    if rewound.redefined:
        parts.append(f"Re-made in a fresh worker: {', '.join(rewound.redefined)}.")
    if rewound.kept:
        parts.append("Left as they are: " + "; ".join(f"{n} ({why})" for n, why in sorted(rewound.kept.items())) + ".")
    if rewound.unrestorable:
        items = "; ".join(f"{n} ({why})" for n, why in sorted(rewound.unrestorable.items()))
        parts.append(f"Not restorable: {items}.")
    parts.append(NOT_UNDONE.format(tools=said))
    return " ".join(parts)


def _listed(names: list[str], verb: str) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
    return f"{verb} {shown}"
