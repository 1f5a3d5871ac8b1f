"""What the boundary refused during a call, as the host checks it, and what is never granted (host side).

Two sources: the worker's ``done`` message (``refused``: file reads and writes, the network, found by denied.py in
the worker) and the host's proxy (connections its policy refused). The worker is hostile, so what it says is a claim:

* at most ``MAX_REFUSALS`` entries are kept (of the first ``MAX_SCANNED`` it sends), each a dict of a known kind with
  a printable target of at most ``MAX_TARGET_CHARS`` characters; a path must be absolute and is normalised here, in
  the host (``os.path.realpath``: a link the worker planted is judged by where it leads); a ``connect`` is never
  taken from the worker (the proxy knows its own refusals); the reason is the host's own sentence;
* a path the worker may already reach (its scratch folder, ``allow_write``, ``allow_read``) is no refusal of the
  boundary and is dropped; so is a network refusal when the network is granted;
* what is never granted (:func:`never_granted`: the allow-list of grantable.py, decided by where the path is: never
  where Python or the machine loads code or configuration from) is marked ``grantable=False`` with the reason in one
  line: nobody is asked; so is a path whose name holds control or bidi characters (a person could not read what they
  would allow).

Nothing here grants anything: a refusal only leads to a question (grants.py acts on the answer and checks again).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..wire.capabilities import RefusedCapability
from . import grantable

MAX_REFUSALS = 5
MAX_SCANNED = 50
MAX_TARGET_CHARS = 4096
_UNREADABLE = (
    "its name holds control, bidi or invisible characters (shown escaped): nbagent never grants a path a person "
    "cannot read as it is"
)

REASONS = {
    "read": "the worker reads only the Python installation, the system's libraries, the working directory and "
    "allow_read",
    "write": "the worker writes only its scratch folder and allow_write",
    "network": "the code has no network grant (no network module is authorized)",
}


@dataclass(frozen=True)
class Reach:
    """What the worker may already read and write, as the host set it (a claim inside it is no refusal)."""

    scratch: str
    allow_read: tuple[str, ...] = ()
    allow_write: tuple[str, ...] = ()
    allow_network: bool = False

    def covers(self, kind: str, path: str) -> bool:
        roots = [self.scratch, *self.allow_write] + (list(self.allow_read) if kind == "read" else [])
        return any(_inside(path, os.path.realpath(os.path.expanduser(root))) for root in roots)


def from_worker(sent: Any, reach: Reach) -> list[RefusedCapability]:
    """The worker's ``refused`` list, checked: at most ``MAX_REFUSALS`` entries, none forged into a grant."""
    if not isinstance(sent, list):
        return []
    found: list[RefusedCapability] = []
    for entry in sent[:MAX_SCANNED]:
        refused = _checked(entry, reach)
        if refused is not None and refused not in found:
            found.append(refused)
        if len(found) >= MAX_REFUSALS:
            break
    return found


def from_proxy(records: Iterable[tuple[str, int, str, bool]]) -> list[RefusedCapability]:
    """The proxy's own refusals (host, port, why, grantable): connections its policy turned down."""
    return [
        RefusedCapability("connect", f"[{host}]:{port}" if ":" in host else f"{host}:{port}", reason, grantable)
        for host, port, reason, grantable in records
    ]


def merged(*groups: Iterable[RefusedCapability]) -> list[RefusedCapability]:
    """One list, each refusal once (by kind and target), at most ``MAX_REFUSALS``."""
    out: list[RefusedCapability] = []
    for refused in (r for group in groups for r in group):
        if all((r.kind, r.target) != (refused.kind, refused.target) for r in out) and len(out) < MAX_REFUSALS:
            out.append(refused)
    return out


def _checked(entry: Any, reach: Reach) -> RefusedCapability | None:
    if not isinstance(entry, dict):
        return None
    kind, target = entry.get("kind"), entry.get("target")
    if kind == "network":
        return None if target != "" or reach.allow_network else RefusedCapability("network", "", REASONS["network"])
    if kind not in ("read", "write"):
        return None
    path = normalised(target)
    if path is None:
        return _unreadable(kind, target)
    if reach.covers(kind, path.rstrip("/") or "/"):
        return None
    why = never_granted(kind, path)
    return RefusedCapability(kind, path, why or REASONS[kind], grantable=not why)


def _unreadable(kind: str, target: Any) -> RefusedCapability | None:
    """A path a person cannot read as it is (control or bidi characters: ``report\u202ecsv.exe``) is refused with
    the reason, never asked about (the views show it escaped); any other malformed claim is dropped."""
    if not isinstance(target, str) or not 0 < len(target) <= MAX_TARGET_CHARS or not os.path.isabs(target):
        return None
    if "\0" in target or target.isprintable():
        return None
    return RefusedCapability(kind, os.path.realpath(target), _UNREADABLE, grantable=False)


def normalised(target: Any) -> str | None:
    """An absolute, printable path of bounded length, resolved here (a folder's ends with ``/``); None otherwise."""
    if not isinstance(target, str) or not 0 < len(target) <= MAX_TARGET_CHARS or not target.isprintable():
        return None
    if not os.path.isabs(target):
        return None
    real = os.path.realpath(target)
    folder = target.endswith("/") or os.path.isdir(real)
    return real + "/" if folder and real != "/" else real


def never_granted(kind: str, target: str) -> str:
    """Why reading or writing ``target`` (a normalised path) is never granted; "" if it may be asked for: the
    reviewed allow-list of grantable.py."""
    return grantable.why_not(kind, target)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
