"""What a step's code did to the notebook's namespace, in a few words (js/changes.js `changeText` says the same).

Each change is a dict of nbagent/sandbox/changes.py: `name`, `change` ("created", "rebound",
"modified", "deleted"), `type`, `detail`, `kept` (the change stayed in the agent's copy) and `reason` (why the
isolated worker kept it: a name that would shadow a builtin, IPython's own or a module of yours; a file mapping not
granted).
"""

from __future__ import annotations

from typing import Any

__all__ = ["change_text"]


def change_text(change: dict[str, Any]) -> str:
    """ "+ region_data (DataFrame 50×6)", "~ sales: +1 column total_revenue", "rebinds x (int)", "deletes tmp"."""
    name, kind, detail = change.get("name", ""), change.get("change"), change.get("detail")
    kind_of = f" ({change['type']})" if change.get("type") else ""
    if kind == "created":
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
