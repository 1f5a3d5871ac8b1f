"""What the notebook holds for objects that stay in the worker: labelled handles, and proxies for functions/classes.

All three are host-side objects of this module; their ``repr`` is built from plain strings the worker sent, so
showing them runs no agent code. Calling a :class:`RemoteFunction` (or a :class:`RemoteClass`) runs it in the worker,
under the executor's limits, and returns plain data (or another handle). A handle passed back to the worker (as a
variable or an argument) is the original object there again. Once the worker that owns them has been replaced (a
crash, a hard timeout, ``restart()``), they are dead and say so.

:func:`is_worker_handle` says whether a value is (or holds) such a handle, which a final answer must not be, and
:func:`handle_advice` which call to write instead (``.tolist()``, ``.to_dict()``...).
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Protocol


class Owner(Protocol):
    def call_remote(self, target: RemoteObject, args: tuple, kwargs: dict) -> Any: ...

    def owns(self, target: RemoteObject) -> bool: ...


#: In the worker: oid -> object, set by the worker at start; used when a handle comes back (unpickled).
WORKER_OBJECTS: dict[int, Any] = {}
WORKER_GENERATION: list[int] = [0]


class DeadHandleError(RuntimeError):
    """The worker holding the object is gone."""


def _resolve(generation: int, oid: int, label: str) -> Any:
    """In the worker: the object behind a handle the host sent back."""
    if generation != WORKER_GENERATION[0] or oid not in WORKER_OBJECTS:
        raise DeadHandleError(f"{label} belonged to a worker process that was replaced; it is lost")
    return WORKER_OBJECTS[oid]


class RemoteObject:
    """A labelled handle: an object the agent's code made that is not plain data stays in the worker."""

    __slots__ = ("_owner", "_generation", "_oid", "_kind", "_type", "_summary", "__weakref__")

    def __init__(self, owner: Owner, generation: int, oid: int, kind: str, type_name: str, summary: str) -> None:
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_generation", generation)
        object.__setattr__(self, "_oid", oid)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_type", type_name)
        object.__setattr__(self, "_summary", summary)

    @property
    def alive(self) -> bool:
        return self._owner.owns(self)

    def __repr__(self) -> str:
        state = "" if self.alive else ", lost: its worker was replaced"
        summary = f" {self._summary}" if self._summary else ""
        return f"<{self._type} in the agent's worker process{summary}{state}>"

    __str__ = __repr__

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{self!r} is a handle: its attributes live in the worker process")

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"{self._type!r} object in the agent's worker process: only plain data (numbers, strings, lists, dicts, "
            f"numpy arrays, pandas frames, images) comes back into the notebook; attribute {name!r} is not available"
        )

    def __reduce__(self) -> tuple:
        if os.getpid() == getattr(self._owner, "host_pid", None):
            return (_resolve, (self._generation, self._oid, repr(self)))
        raise DeadHandleError("a handle cannot be copied")


class RemoteFunction(RemoteObject):
    """A function the agent's code defined: calling it runs it in the worker and returns plain data."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if os.getpid() != getattr(self._owner, "host_pid", None):
            raise DeadHandleError(f"{self._summary or self._type} was defined in another worker process")
        if not self.alive:
            raise DeadHandleError(f"{self._summary or self._type} belonged to a worker process that was replaced")
        return self._owner.call_remote(self, args, kwargs)

    def __repr__(self) -> str:
        state = "" if self.alive else " (lost: its worker was replaced)"
        return f"<agent {self._kind} {self._summary} (runs in the agent's worker process){state}>"

    __str__ = __repr__


class RemoteClass(RemoteFunction):
    """A class the agent's code defined: calling it creates the instance in the worker (a handle here)."""

    __slots__ = ()


#: How far :func:`is_worker_handle` looks into a plain container (depth, items) before it stops looking.
_LOOK_DEPTH = 4
_LOOK_ITEMS = 10_000


def is_worker_handle(value: Any) -> bool:
    """True if ``value`` is, or a list/tuple/dict/set of it holds, a handle to an object left in the agent's worker
    (a :class:`RemoteObject`, function and class proxies included) rather than a value: what a final answer must not
    be. The containers are looked into a few levels deep and up to 10,000 items; their items' own code never runs."""
    return _first_handle(value) is not None


def _first_handle(value: Any) -> RemoteObject | None:
    stack, seen = [(value, 0)], 0
    while stack and seen < _LOOK_ITEMS:
        item, depth = stack.pop()
        seen += 1
        if isinstance(item, RemoteObject):
            return item
        kind = type(item)
        if depth >= _LOOK_DEPTH or kind not in (list, tuple, dict, set, frozenset):
            continue
        children = itertools.chain(item.keys(), item.values()) if kind is dict else iter(item)
        stack.extend((child, depth + 1) for child in itertools.islice(children, _LOOK_ITEMS - seen))
    return None


def _conversion(type_name: str) -> str | None:
    """The call that makes a plain value of an object of ``type_name`` (the handle's label), if one is known."""
    short = type_name.rpartition(".")[2]
    if short == "DataFrame":
        return "`.to_dict()` (or `.to_dict('records')`)"
    if short == "Series":
        return "`.tolist()` (or `.to_dict()`)"
    if short.endswith(("Index", "Array")) or short in ("Categorical", "ndarray", "array", "matrix"):
        return "`.tolist()` (or `.to_list()`)"
    if short in ("Timestamp", "Timedelta", "Period", "Interval", "datetime", "date", "time", "timedelta"):
        return "`str(...)`"
    return None


def handle_advice(value: Any) -> str:
    """The line to write instead of answering with a handle: which call turns ``value`` (see :func:`is_worker_handle`)
    into a plain value, for the model to read. Empty if ``value`` holds no handle."""
    handle = _first_handle(value)
    if handle is None:
        return ""
    label = repr(handle)
    if isinstance(handle, RemoteFunction):
        return (
            f"The answer {'is' if handle is value else 'holds'} {label}, not a value. Call it in your code and pass its result to final_answer(), "
            "converted to plain data (a number, a string, a list or a dict)."
        )
    call = _conversion(object.__getattribute__(handle, "_type"))
    where = "" if handle is value else " (inside the answer)"
    if call is None:
        return (
            f"The answer holds {label}{where}: an object that stays in the worker, not a value. Convert it in your "
            "code to plain data (a number, a string, a list or a dict: `str(...)`, `int(...)`, `.tolist()`, "
            "`.to_dict()`) and pass that to final_answer()."
        )
    return (
        f"The answer holds {label}{where}: an object that stays in the worker, not a value. Call {call} on it in "
        "your code so the answer is a plain value, and pass that to final_answer()."
    )
