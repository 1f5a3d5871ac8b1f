"""What a step's code did to the notebook's namespace, in a few words (js/changes.js `changeText` says the same).

Each change is a dict of nbagent/sandbox/wire/changes.py: `name`, `change` ("created", "rebound",
"modified", "deleted"), `type`, `detail`, `kept` (the change stayed in the agent's copy), `reason` (why the
isolated worker kept it: a name that would shadow a builtin, IPython's own or a module of yours, your own function;
a file mapping not granted) and `yours` (the name was the person's: said as a warning, with what changed, and how
to undo it). The run's end says which of the person's names changed (`yours_line`) and which names the agent kept in
its scope (`scratch_text`, loop/scope.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nbagent.loop.scope import scratch_line

__all__ = ["change_text", "yours_changed", "yours_line", "scratch_text", "UNDO_HINT"]

#: How a person takes a run's changes back (the widget has a button for it too).
UNDO_HINT = "agent.undo() or %agent --undo puts them back as they were"


def change_text(change: dict[str, Any]) -> str:
    """ "+ region_data (DataFrame 50×6)", "~ sales: +1 column total_revenue", "rebinds x (int)", "deletes tmp";
    the person's names as warnings: "⚠ changed your orders: column category changed"."""
    name, kind, detail = change.get("name", ""), change.get("change"), change.get("detail")
    kind_of = f" ({change['type']})" if change.get("type") else ""
    if change.get("yours") and kind in ("modified", "rebound", "deleted"):
        verb = {"modified": "changed", "rebound": "replaced", "deleted": "deleted"}[kind]
        text = f"⚠ {verb} your {name}" + (kind_of if kind == "rebound" or not detail else "")
        text += f": {detail}" if detail else ""
    elif kind == "created":
        text = f"+ {name}{kind_of}"
    elif kind == "modified":
        text = f"~ {name}: {detail}" if detail else f"~ {name}{kind_of}"
    elif kind == "rebound":
        text = f"rebinds {name}{kind_of}"
    else:
        text = f"deletes {name}"
    if change.get("kept") and change.get("reason"):
        return f"{text} [kept in the worker]"
    return f"{text} [agent's copy]" if change.get("kept") else text


def yours_changed(steps: Iterable[dict[str, Any]]) -> list[str]:
    """The person's names the run's code changed, rebound or deleted in the notebook (not in its copy), in order."""
    names: dict[str, None] = {}
    for step in steps:
        for change in step.get("changes") or []:
            if change.get("yours") and not change.get("kept"):
                names[change.get("name", "")] = None
    return list(names)


def yours_line(steps: Iterable[dict[str, Any]]) -> str:
    """ "⚠ The run changed your variables: orders, config; agent.undo() or …" ("" when it changed none)."""
    names = yours_changed(steps)
    if not names:
        return ""
    which = "variable" if len(names) == 1 else "variables"
    return f"⚠ The run changed your {which}: {', '.join(names)}; {UNDO_HINT}."


def scratch_text(names: list[str] | None) -> str:
    """The run's "Kept in the agent's scope: …" line ("" for none)."""
    return scratch_line(list(names or []))
