"""What a step asked to be allowed and what became of it, in one line per ask (the widget shows the same text).

Each entry is a dict of `ActionStep.permissions` (nbagent/loop/permissions.py): `kind`, `target`, `answer`
("once", "run", "deny", "never"), `by` ("person", "policy", "nobody", "sandbox"), and maybe `reason`,
`granted` (what was granted in its place, e.g. a file's folder), `note` (what the grant did beyond that) and
`error` (the grant failed).
"""

from __future__ import annotations

from typing import Any

from nbagent.sandbox.wire.capabilities import RefusedCapability

__all__ = ["permission_text", "permission_state"]

_ANSWERS = {
    "once": "Allowed once",
    "run": "Allowed for this run",
    "deny": "Denied",
    "never": "Never granted",
}
_BY = {"person": "by you", "policy": "by on_permission", "nobody": "nobody could be asked"}


def permission_text(entry: dict[str, Any]) -> str:
    """ "Allowed once: write `/work/out.csv` (by you)", "Denied: connect to `api.example.com:443` (…)"."""
    what = RefusedCapability(str(entry.get("kind", "")), str(entry.get("target", ""))).describe()
    said = _ANSWERS.get(str(entry.get("answer")), str(entry.get("answer")))
    why = [_BY[entry["by"]]] if entry.get("by") in _BY else []
    if entry.get("reason") and entry.get("by") != "nobody":
        why.append(str(entry["reason"]))
    if entry.get("granted"):
        why.append(f"granted as `{entry['granted']}`")
    if entry.get("note"):
        why.append(str(entry["note"]))
    if entry.get("error"):
        why.append(f"the grant failed: {entry['error']}")
    return f"{said}: {what}" + (f" ({'; '.join(why)})" if why else "")


def permission_state(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry as the widget's state holds it: its kind, target, answer and the line to show."""
    return {
        "kind": str(entry.get("kind", "")),
        "target": str(entry.get("target", "")),
        "answer": str(entry.get("answer", "")),
        "text": permission_text(entry),
    }
