"""What the OS refused the agent's code, read from the exception a step ended with (worker side).

The worker's confinement answers a file it was not granted with ``PermissionError`` (Landlock: ``EACCES``; an ``EPERM``
naming a path is seccomp refusing ``chmod`` and the like, which no grant changes) and a TCP socket without a network
grant with ``EPERM`` (seccomp). :func:`refusals_in` finds those errors in what the code raised (libraries wrap them:
the ``__cause__``/``__context__`` chain is followed) and says, as plain data for the ``done`` message, what was
refused:

* ``{"kind": "read" | "write", "target": <absolute path>}``: the path the error names. What was attempted on it is
  told by the audit events Python raised just before (:func:`watch_file_events`: ``open`` with its flags, ``os.mkdir``,
  ``os.listdir``...; the last 16 are kept: about 0.2 µs per audit event, and data code raises few). Where no event names the path (a C
  library opening it itself), by probing it read-only: readable, or absent (being created), means a write; refused
  means a read (an existing file refused both ways is then a read first, its write a later refusal). A folder being
  created (``os.mkdir``, hence ``os.makedirs`` and ``Path.mkdir``) ends with ``/``.
* ``{"kind": "network", "target": ""}``: a socket refused without a network grant, or a host name that did not
  resolve without one (``socket.gaierror``: the worker's own network namespace has no DNS, so code that names a
  host, `pd.read_csv("https://…")`, fails there before any socket is refused).

The worker is the hostile side: this is a claim, which the host checks (refusals.py) and which can only lead to a
question, never to a grant by itself. It reads exceptions through the built-in descriptors, so an agent-defined
exception class cannot make it run agent code.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from collections import deque
from types import TracebackType
from typing import Any

MAX_REFUSED = 5
MAX_CHAIN = 32
_CAUSE = BaseException.__dict__["__cause__"]
_CONTEXT = BaseException.__dict__["__context__"]
_TRACEBACK = BaseException.__dict__["__traceback__"]
_ERRNO = OSError.__dict__["errno"]
_FILENAME = OSError.__dict__["filename"]
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
#: Audit events that name a path, and what they do to it ("open" is told by its flags).
_PATH_EVENTS = {
    "open": "", "os.mkdir": "folder", "os.listdir": "read", "os.scandir": "read", "os.remove": "write",
    "os.rmdir": "write", "os.rename": "write", "os.truncate": "write", "os.link": "write", "os.symlink": "write",
}  # fmt: skip
_EVENTS: deque = deque(maxlen=16)  # the last path events: (event, args)


def watch_file_events() -> None:
    """Keep the last few path events of this process (the worker's, from its start): a set lookup per audit event."""
    events, append = frozenset(_PATH_EVENTS), _EVENTS.append

    def hook(event: str, args: tuple) -> None:
        if event in events:
            append((event, args))

    sys.addaudithook(hook)


def forget_file_events() -> None:
    """A new call: earlier calls' events say nothing about its refusals."""
    _EVENTS.clear()


def refusals_in(exc: BaseException, *, network_granted: bool) -> list[dict[str, Any]]:
    """The refusals behind ``exc`` (at most ``MAX_REFUSED``, each once)."""
    found: list[dict[str, Any]] = []
    for error in _chain(exc):
        if type(error) is socket.gaierror and not network_granted:  # no name resolves here without the network
            refused: dict[str, Any] | None = {"kind": "network", "target": ""}
        elif type(error) is not PermissionError:  # built-in only: a subclass could compute its fields with agent code
            continue
        else:
            refused = _refusal(error, network_granted)
        if refused is not None and refused not in found:
            found.append(refused)
        if len(found) >= MAX_REFUSED:
            break
    return found


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during, each once, at most ``MAX_CHAIN``."""
    seen: list[BaseException] = []
    pending = [exc]
    while pending and len(seen) < MAX_CHAIN:
        error = pending.pop(0)
        if not isinstance(error, BaseException) or any(error is s for s in seen):
            continue
        seen.append(error)
        pending += [_CAUSE.__get__(error), _CONTEXT.__get__(error)]
    return seen


def _refusal(error: PermissionError, network_granted: bool) -> dict[str, Any] | None:
    number, filename = _ERRNO.__get__(error), _FILENAME.__get__(error)
    if isinstance(filename, (str, bytes)) and number == errno.EACCES:  # (EPERM on a path: seccomp's chmod, not a grant)
        path = os.path.abspath(os.fsdecode(filename))
        kind = _attempted(os.fsdecode(filename)) or _file_kind(path)
        if kind == "folder":  # a folder being created: its path says so
            return {"kind": "write", "target": path if os.path.lexists(path) else path.rstrip("/") + "/"}
        return {"kind": kind, "target": path} if kind is not None else None
    if filename is None and number == errno.EPERM and not network_granted and _from_socket(error):
        return {"kind": "network", "target": ""}
    return None


def _attempted(filename: str) -> str | None:
    """What the newest audit event naming ``filename`` (as the code passed it) did: read, write, folder; or None."""
    for event, args in reversed(list(_EVENTS)):
        paths = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
        try:
            named = any(os.fsdecode(os.fspath(p)) == filename for p in paths)
        except (TypeError, ValueError):
            continue
        if not named:
            continue
        if event == "open":
            flags = args[2] if len(args) > 2 and type(args[2]) is int else 0
            return "write" if flags & _WRITE_FLAGS else "read"
        return _PATH_EVENTS[event]
    return None


def _file_kind(path: str) -> str | None:
    """``write`` if the path reads (or does not exist yet: it was being created), ``read`` if reading it is refused
    too; None for anything else (a path through a file, a loop of links)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        return "write"
    except PermissionError:
        return "read"
    except OSError:
        return None
    os.close(fd)
    return "write"


def _innermost(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _from_socket(error: PermissionError) -> bool:
    """Raised while creating a socket (``socket.socket.__init__``): seccomp's answer to a TCP socket ungranted."""
    last = _innermost(_TRACEBACK.__get__(error))
    if last is None:
        return False
    code = last.tb_frame.f_code
    return code.co_name == "__init__" and os.path.basename(code.co_filename) == "socket.py"
