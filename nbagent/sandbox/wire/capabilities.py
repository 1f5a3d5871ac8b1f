"""What the agent's code was refused by the boundary, and what a person granted in its place.

A worker's code that reaches a file or a host it was not granted fails (Landlock's ``EACCES``, the proxy's
``403``). The executor lists those refusals after the call (``executor.last_refusals``); the loop may ask a person
(the widget's "Allow once · Allow for this run · Deny") or a policy, and ``executor.grant(refused)`` widens the
confinement for the next calls (a fresh worker where the OS rules are fixed at its start). ``revoke(grant)`` narrows
it again ("Allow once").

Both are plain, frozen data: the step records them and a saved run carries them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["CAPABILITY_KINDS", "RefusedCapability", "Grant"]

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
        variable `internal_memo` (str, 14 chars)``."""
        verb = _VERBS.get(self.kind, self.kind)
        said = f"{verb} `{self.target}`" if self.target else verb
        return f"{said} ({self.detail})" if self.detail else said

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
