"""Grants: what a person (or a policy) allowed after a refusal, checked again and kept for the run (host side).

:class:`GrantBook` turns a :class:`RefusedCapability` into a :class:`Grant`, never trusting the refusal it is given
(it may come from a saved run, or from a hostile worker's claim): the kind is checked, a path is resolved again here
and judged again by the allow-list of grantable.py (the refusal's ``grantable`` is never trusted), a connection by the
proxy's rules. What each kind grants:

* ``read``: that file or folder (added to ``allow_read``).
* ``write``: that data file (``allow_write``), or a new folder where nothing imports from (grantable.py: never an
  existing folder, whose rule would cover every file under it, nor a new one in the working folder or on
  ``sys.path``, which could become a package). One that does not exist yet is created here first, empty (a file, or
  a folder for a refused ``mkdir``): Landlock's rules hold for existing files, and granting its parent folder instead
  would let the code change every file in it (the notebooks of the working directory, say). The grant's ``note`` says
  so; revoking it removes what was created if it is still empty.
* ``network``: the network through the host's proxy (``allow_network``).
* ``connect``: that ``host:port`` past ``allow_domains`` (the proxy's policy, at once); still public addresses only.

The executor applies the change (isolated.py): file rules and the network in a fresh worker at the next call.
Before a worker starts, :meth:`GrantBook.stale` finds granted paths that now lead elsewhere (a link planted since):
they are withdrawn, never followed.
"""

from __future__ import annotations

import contextlib
import os

from ..wire.capabilities import Grant, RefusedCapability
from . import grantable, proxy, refusals

SCOPES = ("once", "run")


class GrantBook:
    """The grants in force, and the files and folders created for them."""

    def __init__(self) -> None:
        self._grants: list[Grant] = []
        self._created: set[str] = set()

    def current(self) -> list[Grant]:
        return list(self._grants)

    def add(self, refused: RefusedCapability, scope: str, reach: refusals.Reach, policy: proxy.Policy) -> Grant:
        """The grant for ``refused`` (replacing one for the same kind and target); ValueError, in a sentence, for what
        is never granted or needs no grant."""
        if scope not in SCOPES:
            raise ValueError(f"scope must be 'once' or 'run', not {scope!r}")
        if not isinstance(refused, RefusedCapability):
            raise TypeError(f"grant() takes a RefusedCapability, not {type(refused).__name__}")
        if not refused.grantable:
            raise ValueError(f"nbagent does not grant the code to {refused.describe()}: {refused.reason}")
        if refused.kind in ("read", "write"):
            grant = self._path_grant(refused, scope, reach)
        elif refused.kind == "connect":
            grant = Grant("connect", _connect_target(refused.target, policy), scope)
        elif refused.kind == "network":
            if reach.allow_network:
                raise ValueError("the network is already granted to this executor")
            grant = Grant("network", "", scope)
        else:
            raise ValueError(f"unknown kind of capability {refused.kind!r} (one of read, write, connect, network)")
        self._grants = [g for g in self._grants if (g.kind, g.target) != (grant.kind, grant.target)] + [grant]
        return grant

    def remove(self, grant: Grant) -> None:
        """Withdraw ``grant`` (ValueError if it is not in force); what was created for it goes if still empty."""
        if grant not in self._grants:
            raise ValueError(f"{grant.describe()} is not a grant in force for this executor")
        self._grants.remove(grant)
        path = grant.target.rstrip("/") or "/"
        if path in self._created:
            self._created.discard(path)
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    os.rmdir(path)  # only an empty folder
                elif os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) == 0:
                    os.unlink(path)

    def stale(self) -> list[tuple[Grant, str]]:
        """Granted paths that no longer are what was granted (a link now, or now never granted), and why."""
        out = []
        for grant in self._grants:
            if grant.kind not in ("read", "write"):
                continue
            path = grant.target.rstrip("/") or "/"
            real = os.path.realpath(path)
            if real != path:
                out.append((grant, f"`{path}` now leads to `{real}`"))
            elif why := grantable.why_not(grant.kind, grant.target, created=path in self._created):
                out.append((grant, why))
        return out

    def _path_grant(self, refused: RefusedCapability, scope: str, reach: refusals.Reach) -> Grant:
        target = refusals.normalised(refused.target)
        if target is None:
            raise ValueError(f"{refused.target[:200]!r} is not an absolute path")
        why = grantable.why_not(refused.kind, target)
        if why:
            raise ValueError(f"nbagent does not grant the code to {refused.kind} `{target}`: {why}")
        path = target.rstrip("/") or "/"
        note = ""
        if refused.kind == "write" and not os.path.lexists(path):
            note = self._create(path, folder=target.endswith("/"))
        return Grant(refused.kind, target, scope, note)

    def _create(self, path: str, *, folder: bool) -> str:
        """Create what the worker was refused to create, empty, so that a rule can name it; the grant's note."""
        if folder:
            os.mkdir(path)
        else:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666))
        self._created.add(path)
        what = "folder" if folder else "file"
        return f"nbagent created the empty {what} `{path}` so that the worker may write it (only that {what})"


def toggled(paths: tuple[str, ...], target: str, on: bool) -> tuple[str, ...]:
    """``paths`` with ``target`` (a granted path; a folder's trailing ``/`` dropped) added or removed."""
    path = target.rstrip("/") or "/"
    if on:
        return paths if path in paths else (*paths, path)
    return tuple(p for p in paths if p != path)


def _connect_target(target: str, policy: proxy.Policy) -> str:
    """``host:port`` as the proxy would judge it; ValueError for what no grant lets through."""
    host, port = proxy.parse_target(target)
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if port not in policy.ports:
        raise ValueError(f"nbagent does not grant port {port} (only {'/'.join(map(str, policy.ports))}); "
                         f"allow_hosts=['{shown}'] grants one host and port explicitly")  # fmt: skip
    if proxy.literal_not_public(host):  # (a name: the proxy judges the address it resolves to, at each connection)
        raise ValueError(f"nbagent does not grant {shown}: not a public address (allow_hosts=['{shown}'] does)")
    if policy.allow_domains is None:
        raise ValueError(f"{shown} needs no grant: every public domain is allowed")
    return shown
