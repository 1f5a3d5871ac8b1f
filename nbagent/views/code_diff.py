"""Who changed a step's code before it ran, each change with its diff: nbagent's rewrite, a person's edit.

The model writes code; nbagent's own fixes may rewrite it (a small model's product of totals, see
nbagent/loop/aids/code_checks.py); a person approving it may edit it. A step keeps all three
(`ActionStep.model_code_action`, `rewritten_code_action`, `edited_code_action`), and every view says
the same from `code_changes(step)`: "rewritten by nbagent" (the model's code → nbagent's) and "edited
by you" (what you were shown → what you approved), or, for a run saved before the step kept them,
"changed before it ran". The widget (js/code.js) and the static page render the dicts built here.
"""

from __future__ import annotations

import difflib
from typing import Any

__all__ = ["CHANGE_LABELS", "code_changes", "diff_lines"]

# by -> label, as js/code.js's CHANGE_LABELS
CHANGE_LABELS = {
    "nbagent": "rewritten by nbagent",
    "you": "edited by you",
    "unknown": "changed before it ran",
}
_MAX_DIFF_LINES = 400  # agent code is short; a pasted notebook is not: its diff is cut, the code still shows whole


def code_changes(step: Any) -> list[dict[str, Any]]:
    """`[{"by": "nbagent" | "you" | "unknown", "label": str, "diff": [[op, line], ...]}]`, in the order they happened.

    `op` is " " (kept), "-" (removed) or "+" (added); [] when the code ran as the model wrote it.
    """
    model, ran = getattr(step, "model_code_action", None), getattr(step, "code_action", None)
    rewritten, edited = getattr(step, "rewritten_code_action", None), getattr(step, "edited_code_action", None)
    if model is None or ran is None:
        return []
    changes = []
    if rewritten is not None and rewritten != model:
        changes.append(_change("nbagent", model, rewritten))
    if edited is not None and edited != (rewritten or model):
        changes.append(_change("you", rewritten or model, edited))
    if not changes and ran != model:  # saved before the step said who changed it
        changes.append(_change("unknown", model, ran))
    return changes


def diff_lines(before: str, after: str) -> list[list[str]]:
    """Every line of `before` and `after` in order, each marked kept, removed or added (whole code: it is short)."""
    old, new = before.splitlines(), after.splitlines()
    lines: list[list[str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            lines += [[" ", line] for line in old[i1:i2]]
            continue
        lines += [["-", line] for line in old[i1:i2]]
        lines += [["+", line] for line in new[j1:j2]]
    if len(lines) > _MAX_DIFF_LINES:
        lines = lines[:_MAX_DIFF_LINES] + [[" ", f"[… {len(lines) - _MAX_DIFF_LINES} more lines]"]]
    return lines


def _change(by: str, before: str, after: str) -> dict[str, Any]:
    return {"by": by, "label": CHANGE_LABELS[by], "diff": diff_lines(before, after)}
