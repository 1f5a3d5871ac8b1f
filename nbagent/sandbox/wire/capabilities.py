"""What the agent's code was refused by the boundary, and what a person granted in its place.

A worker's code that reaches a file or a host it was not granted fails (Landlock's ``EACCES``, the proxy's
``403``). The executor lists those refusals after the call (``executor.last_refusals``); the loop may ask a person
(the widget's "Allow once · Allow for this run · Deny") or a policy, and ``executor.grant(refused)`` widens the
confinement for the next calls (a fresh worker where the OS rules are fixed at its start). ``revoke(grant)`` narrows
it again ("Allow once").

Both are plain, frozen data: the step records them and a saved run carries them.

A target is the agent's choice (a path, a host, a name), shown to the person who decides. So it is never mixed into a
sentence that is rendered as markup: :meth:`RefusedCapability.parts` gives the sentence as nbagent's words and the
target as separate parts (the widget, the static page and the console show the target as one text node), and
:func:`shown_target` escapes the characters that could make a target look like something else (controls, bidi
overrides and isolates, zero-width marks, line separators, the backtick): ``report.csv\u202e`` reads as written.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["CAPABILITY_KINDS", "RefusedCapability", "Grant", "shown_target", "needs_escape", "ESCAPED_NOTE"]

#: What a target may not show as it is: C0/C1 controls and DEL, the Arabic letter mark, zero-width and bidi marks,
#: line/paragraph separators, bidi embeddings, overrides and isolates, word joiners, the BOM, and the backtick.
#: Keep in step with UNSAFE_TARGET in js/asks.js.
_UNSAFE_TARGET = re.compile("[\x00-\x1f\x7f-\x9f`\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
#: Said after a target that held such characters (nbagent's words, so the person knows what they see is escaped).
ESCAPED_NOTE = " (shown escaped: it holds control, bidi or backtick characters)"
#: A part of a sentence about a capability: ("words", nbagent's text), ("target", an escaped target) or
#: ("detail", what nbagent says the target is, escaped too).
Part = tuple[str, str]

#: ``read`` / ``write``: a path; ``connect``: ``host:port`` through the proxy; ``network``: any (no network grant);
#: ``variable``: a notebook variable the task did not give the agent (``visibility.py``).
CAPABILITY_KINDS = ("read", "write", "connect", "network", "variable")

_VERBS = {
    "read": "read",
    "write": "write",
    "connect": "connect to",
    "network": "use the network",
    "variable": "read your variable",
}


def shown_target(text: str) -> str:
    """``text`` with each character of ``_UNSAFE_TARGET`` written as ``\\uXXXX`` (idempotent: the result holds none)."""
    return _UNSAFE_TARGET.sub(lambda found: f"\\u{ord(found.group()):04x}", str(text))


def needs_escape(text: str) -> bool:
    return bool(_UNSAFE_TARGET.search(str(text)))


@dataclass(frozen=True)
class RefusedCapability:
    """One thing the code tried and was refused.

    ``target``: an absolute path (read, write; a folder's ends with ``/``), ``host:port`` (connect), "" (network) or a
    variable's name (variable). ``reason``: one line saying why it was refused. ``detail``: what the target is, never
    its value (``str, 14 chars``, ``DataFrame 400×6``), said after it. ``grantable``: False for what is never granted (the kernel's secrets, cloud metadata...), in
    which case nobody is asked.
    """

    kind: str
    target: str
    reason: str = ""
    grantable: bool = True
    detail: str = ""

    def describe(self) -> str:
        """``write `out/report.csv```, ``connect to `api.example.com:443```, ``use the network``, ``read your
        variable `internal_memo` (str, 14 chars)`` (plain text: the target escaped, so its backticks are ours)."""
        return "".join(f"`{text}`" if role == "target" else text for role, text in self.parts())

    def parts(self) -> list[Part]:
        """The same, as parts: ``[("words", "write "), ("target", "out/report.csv")]`` (+ the detail, + a note when
        the target was escaped). The verb is nbagent's, chosen by ``kind`` (an unknown kind is said as such)."""
        verb = _VERBS.get(self.kind) or f"use a capability of kind {shown_target(self.kind)!r}"
        if not self.target:
            return [("words", verb)]
        parts: list[Part] = [("words", f"{verb} "), ("target", shown_target(self.target))]
        if self.detail:
            parts += [("words", " ("), ("detail", shown_target(self.detail)), ("words", ")")]
        if needs_escape(self.target):
            parts.append(("words", ESCAPED_NOTE))
        return parts

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RefusedCapability:
        return cls(**{k: data[k] for k in ("kind", "target", "reason", "grantable", "detail") if k in data})


@dataclass(frozen=True)
class Grant:
    """A capability a person (or a policy) granted: ``scope`` is ``"once"`` (the step's re-run) or ``"run"``.

    ``target`` is what was actually granted (a path, a folder ending with ``/``, ``host:port``, or ""); ``note`` says
    what the grant did beyond the words of the question (an empty file nbagent created so that the worker may write
    it: the OS's file rules hold only for what exists).
    """

    kind: str
    target: str
    scope: str = "run"
    note: str = ""

    def describe(self) -> str:
        return RefusedCapability(self.kind, self.target).describe()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Grant:
        return cls(**{k: data[k] for k in ("kind", "target", "scope", "note") if k in data})
