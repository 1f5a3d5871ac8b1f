"""What a step asked to be allowed and what became of it, in one line per ask (the widget shows the same text).

Each entry is a dict of `ActionStep.permissions` (nbagent/loop/permissions.py): `kind`, `target`, `answer`
("once", "run", "deny", "never"), `by` ("person", "policy", "nobody", "sandbox"), and maybe `reason`,
`granted` (what was granted in its place, e.g. a file's folder), `note` (what the grant did beyond that) and
`error` (the grant failed), and `detail` (what a variable is).

The target is the agent's choice: it is never parsed as markup. `permission_parts` keeps nbagent's words, the
targets and the texts nbagent did not write apart, each escaped (`shown_target`); the widget, the static page and the
console render each part as one text node.
"""

from __future__ import annotations

from typing import Any

from nbagent.sandbox.wire.capabilities import RefusedCapability, shown_target

__all__ = ["permission_text", "permission_parts", "permission_state"]

_ANSWERS = {
    "once": "Allowed once",
    "run": "Allowed for this run",
    "deny": "Denied",
    "never": "Never granted",
}
_BY = {"person": "by you", "policy": "by on_permission", "nobody": "nobody could be asked"}

Part = tuple[str, str]


def permission_parts(entry: dict[str, Any]) -> list[Part]:
    """The line as parts: nbagent's words ("words"), the target and what was granted in its place ("target"), and
    texts nbagent did not write (a reason, a note, an error: "detail"), each escaped; rendered as text nodes."""
    what = RefusedCapability(
        str(entry.get("kind", "")), str(entry.get("target", "")), detail=str(entry.get("detail", ""))
    ).parts()
    said = _ANSWERS.get(str(entry.get("answer")), shown_target(str(entry.get("answer"))))
    why: list[list[Part]] = [[("words", _BY[entry["by"]])]] if entry.get("by") in _BY else []
    if entry.get("reason") and entry.get("by") != "nobody":
        why.append([("detail", shown_target(entry["reason"]))])
    if entry.get("granted"):
        why.append([("words", "granted as "), ("target", shown_target(entry["granted"]))])
    if entry.get("note"):
        why.append([("detail", shown_target(entry["note"]))])
    if entry.get("error"):
        why.append([("words", "the grant failed: "), ("detail", shown_target(entry["error"]))])
    parts: list[Part] = [("words", f"{said}: "), *what]
    for index, reason in enumerate(why):
        parts += [("words", " (" if index == 0 else "; "), *reason]
    return parts + [("words", ")")] if why else parts


def permission_text(entry: dict[str, Any]) -> str:
    """ "Allowed once: write `/work/out.csv` (by you)", "Denied: connect to `api.example.com:443` (…)": the parts as
    plain text, the targets in backticks (escaped, so the backticks are nbagent's)."""
    return "".join(f"`{text}`" if role == "target" else text for role, text in permission_parts(entry))


def permission_state(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry as the widget's state holds it: its kind, target, answer, the line's parts (what is rendered) and
    the line as plain text."""
    return {
        "kind": str(entry.get("kind", "")),
        "target": str(entry.get("target", "")),
        "answer": str(entry.get("answer", "")),
        "parts": [list(part) for part in permission_parts(entry)],
        "text": permission_text(entry),
    }
