"""What a call did to the shared namespace: the names it created, rebound, changed in place or deleted.

Both executors report it after every call (``executor.last_changes``), as plain data the step record keeps::

    {"name": "sales", "change": "modified", "type": "DataFrame 50×7", "detail": "+1 column total_revenue"}

``change`` is one of ``CHANGE_KINDS``; ``type`` says what the name holds now (empty when deleted); ``detail`` says
what changed in place when it can be seen cheaply (a frame's columns or shape, a list's length, a dict's keys),
else it is empty. ``kept`` (only with ``copy_inputs``) is True when the change stayed in the agent's copy.

A snapshot is cheap on purpose (no data is hashed): a value changed without a change of shape is "modified" only
when the executor knows it from elsewhere (the isolated worker compares checksums of the names the code used).
"""

from __future__ import annotations

import ast
import types
from typing import Any

from .proxies import RemoteObject

__all__ = [
    "CHANGE_KINDS",
    "snapshot",
    "describe",
    "difference",
    "change",
    "referenced_names",
    "is_mutable",
    "NamespaceSnapshot",
]

CHANGE_KINDS = ("created", "rebound", "modified", "deleted")
_MAX_KEYS = 200  # keys or columns kept in a snapshot; a bigger dict is compared by its length alone
_MAX_LISTED = 3  # names listed in a detail before "and N more"


def is_mutable(value: Any) -> bool:
    """Containers and array-likes code can change in place (what a snapshot is taken of)."""
    kind = type(value)
    if kind in (list, dict, set, bytearray):
        return True
    module = getattr(kind, "__module__", "") or ""
    return module.startswith(("numpy", "pandas", "PIL"))


def snapshot(value: Any) -> dict[str, Any] | None:
    """The cheap outline of a mutable value (shape, columns, length, keys), or None for anything else."""
    if not is_mutable(value):
        return None
    outline: dict[str, Any] = {}
    try:
        if isinstance(value, (list, dict, set, bytearray)):
            outline["len"] = len(value)
            if isinstance(value, dict) and len(value) <= _MAX_KEYS:
                outline["keys"] = list(value)  # the keys themselves: repr() only for a detail
            return outline
        shape = getattr(value, "shape", None)
        if isinstance(shape, tuple):
            outline["shape"] = tuple(int(n) for n in shape)
        columns = getattr(value, "columns", None)
        if columns is not None and len(columns) <= _MAX_KEYS:
            outline["columns"] = list(columns)
        if type(value).__module__.startswith("PIL"):
            outline["size"] = tuple(value.size)
    except Exception:  # a library object that fails to describe itself: no outline
        return None
    return outline


def describe(value: Any) -> str:
    """What a value is, short: "DataFrame 50×6", "list of 3", "dict of 2 keys", "int", "function"."""
    if isinstance(value, RemoteObject):  # left in the isolated worker: its type as the worker said it
        kind_name = object.__getattribute__(value, "_kind")
        type_name = str(object.__getattribute__(value, "_type")).rsplit(".", 1)[-1]
        return kind_name if kind_name in ("function", "class") else f"{type_name} (in the worker)"
    kind = type(value)
    name = kind.__name__
    if isinstance(value, types.ModuleType):
        return "module"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        return "function"
    if isinstance(value, type):
        return "class"
    try:
        shape = getattr(value, "shape", None)
        if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape) and kind.__module__ != "builtins":
            return f"{name} {'×'.join(str(n) for n in shape)}" if shape else name
        if isinstance(value, (list, tuple, set, frozenset)):
            return f"{name} of {len(value)}"
        if isinstance(value, dict):
            return f"dict of {len(value)} key{'' if len(value) == 1 else 's'}"
    except Exception:
        pass
    return name


def difference(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    """What changed between two snapshots of one object, in words ("" when nothing shows)."""
    if not before or not after:
        return ""
    parts: list[str] = []
    for label, key, say in (("column", "columns", str), ("key", "keys", _key_text)):
        if key in before and key in after:
            parts += _added_removed(label, [say(k) for k in before[key]], [say(k) for k in after[key]])
    if not parts and before.get("shape") != after.get("shape") and "shape" in after:
        parts.append(f"shape {_dims(before.get('shape'))} → {_dims(after['shape'])}")
    if not parts and before.get("len") != after.get("len") and "len" in after:
        parts.append(f"length {before.get('len')} → {after['len']}")
    return "; ".join(parts)


def _key_text(key: Any) -> str:
    try:
        return repr(key)[:60]
    except Exception:
        return f"<{type(key).__name__}>"


def _added_removed(label: str, old: list[str], new: list[str]) -> list[str]:
    known, now = set(old), set(new)
    added = [k for k in new if k not in known]
    removed = [k for k in old if k not in now]
    parts = []
    for sign, names in (("+", added), ("−", removed)):
        if names:
            plural = label + ("s" if len(names) > 1 else "")
            listed = ", ".join(names[:_MAX_LISTED]) + (
                f" and {len(names) - _MAX_LISTED} more" if len(names) > _MAX_LISTED else ""
            )
            parts.append(f"{sign}{len(names)} {plural} {listed}")
    return parts


def _dims(shape: Any) -> str:
    return "×".join(str(n) for n in shape) if isinstance(shape, (tuple, list)) else "?"


def change(name: str, kind: str, value: Any = None, detail: str = "", kept: bool = False) -> dict[str, Any]:
    """One entry of a report."""
    entry: dict[str, Any] = {
        "name": name,
        "change": kind,
        "type": "" if kind == "deleted" else describe(value),
        "detail": detail,
    }
    if kept:
        entry["kept"] = True
    return entry


def referenced_names(code: str) -> set[str]:
    """Names the code reads or augments, less those its module level simply rebinds: the objects it may change in
    place (a name rebound by ``x = ...`` at module level is a new object, seen by identity)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    rebound = {
        target.id
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        for target in statement.targets
        if isinstance(target, ast.Name)
    }
    return names - rebound


class NamespaceSnapshot:
    """The shared names of a namespace before a call (values by identity, outlines of the mutable ones the code
    mentions: only those can change in place, short of a function of an earlier call doing it), compared with the
    namespace after it (the local executor's report)."""

    def __init__(self, namespace: dict, shared: Any, code: str | None = None) -> None:
        self.shared = shared
        self.values = {name: value for name, value in list(namespace.items()) if shared(name)}
        mentioned = self.values.keys() if code is None else referenced_names(code) & self.values.keys()
        self.outlines = {name: snapshot(self.values[name]) for name in mentioned}

    def report(self, namespace: dict) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        missing = object()
        for name, value in list(namespace.items()):
            if not self.shared(name):
                continue
            old = self.values.get(name, missing)
            if old is missing:
                entries.append(change(name, "created", value))
            elif old is not value:
                entries.append(change(name, "rebound", value))
            else:
                detail = difference(self.outlines.get(name), snapshot(value))
                if detail:
                    entries.append(change(name, "modified", value, detail))
        entries += [change(name, "deleted") for name in self.values if name not in namespace]
        return entries
