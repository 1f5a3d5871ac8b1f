"""What a call did to the shared namespace: the names it created, rebound, changed in place or deleted.

Both executors report it after every call (``executor.last_changes``), as plain data the step record keeps::

    {"name": "sales", "change": "modified", "type": "DataFrame 50×7", "detail": "+1 column total_revenue"}

``change`` is one of ``CHANGE_KINDS``; ``type`` says what the name holds now (empty when deleted); ``detail`` says
what changed in place when it can be seen cheaply (a frame's columns or shape, a list's length, a dict's keys),
else it is empty. ``kept`` (only with ``copy_inputs``) is True when the change stayed in the agent's copy. ``yours``
is True when the name was the person's (the notebook bound it, not the agent): the views show such a change as a
warning, and ``agent.undo()`` puts it back. A frame's detail says which columns were added, removed or changed
(values, by comparing the old and new columns where both are at hand: :func:`value_difference`; or by per-column
digests taken before the call: :func:`column_digests`), its dtypes and its rows before → after.

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
    "value_difference",
    "column_digests",
    "users_code",
]

CHANGE_KINDS = ("created", "rebound", "modified", "deleted")
_MAX_KEYS = 200  # keys or columns kept in a snapshot; a bigger dict is compared by its length alone
_MAX_LISTED = 3  # names listed in a detail before "and N more"
_MAX_COMPARED_BYTES = 1 << 30  # frames larger than this are not compared column by column (the outline only)
_MAX_DIGEST_BYTES = 128 << 20  # nor digested before a local call (~0.16 s per 100 MB, measured)


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
            dtypes = getattr(value, "dtypes", None)
            if dtypes is not None and not columns.has_duplicates:
                outline["dtypes"] = {column: str(dtype) for column, dtype in dtypes.items()}
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
    """What changed between two snapshots of one object, in words ("" when nothing shows): columns or keys added and
    removed, a column's dtype, a frame's rows before → after (also when its columns changed), else its shape or
    length."""
    if not before or not after:
        return ""
    parts: list[str] = []
    for label, key, say in (("column", "columns", str), ("key", "keys", _key_text)):
        if key in before and key in after:
            parts += _added_removed(label, [say(k) for k in before[key]], [say(k) for k in after[key]])
    old_types, new_types = before.get("dtypes") or {}, after.get("dtypes") or {}
    retyped = [f"{c} {old_types[c]} → {t}" for c, t in new_types.items() if c in old_types and old_types[c] != t]
    if retyped:
        parts.append(("column " if len(retyped) == 1 else "columns ") + _listed(retyped))
    old_shape, new_shape = before.get("shape"), after.get("shape")
    if "columns" in after and old_shape and new_shape and old_shape[0] != new_shape[0]:
        parts.append(f"rows {old_shape[0]} → {new_shape[0]}")
    elif not parts and old_shape != new_shape and "shape" in after:
        parts.append(f"shape {_dims(old_shape)} → {_dims(new_shape)}")
    if not parts and before.get("len") != after.get("len") and "len" in after:
        parts.append(f"length {before.get('len')} → {after['len']}")
    return "; ".join(parts)


def value_difference(old: Any, new: Any) -> str:
    """What changed from ``old`` to ``new`` (two objects at hand: the host's before and the value the worker sent
    back, or a name's old and new binding): :func:`difference` of their outlines, and for two frames of the same rows
    the columns whose values changed (``column category changed``)."""
    parts = [difference(snapshot(old), snapshot(new))]
    parts.append(_changed_columns(old, new))
    return "; ".join(part for part in parts if part)


def column_digests(value: Any) -> dict[Any, int] | None:
    """Per-column digests of a frame (a hash of each column's values), taken before the local executor runs code that
    mentions it, so that an in-place change can say which column it changed; None for anything else or too big."""
    if not _is_frame(value) or len(value.columns) > _MAX_KEYS or value.columns.has_duplicates:
        return None
    try:
        if int(value.memory_usage(index=False, deep=False).sum()) > _MAX_DIGEST_BYTES:
            return None
        from pandas.util import hash_pandas_object

        return {column: int(hash_pandas_object(value[column], index=False).sum()) for column in value.columns}
    except Exception:  # unhashable cells (lists, dicts): no column detail
        return None


def users_code(value: Any) -> bool:
    """A function or class the notebook defined (its module is ``__main__``): the person's code, never rebound."""
    if not isinstance(value, (types.FunctionType, type)):
        return False
    return getattr(value, "__module__", None) == "__main__"


def _is_frame(value: Any) -> bool:
    kind = type(value)
    return kind.__name__ == "DataFrame" and (getattr(kind, "__module__", "") or "").startswith("pandas")


def _changed_columns(old: Any, new: Any) -> str:
    """The common columns of two frames of the same rows whose values differ (dtype changes are said elsewhere)."""
    if not (_is_frame(old) and _is_frame(new)) or old is new or len(old) != len(new):
        return ""
    try:
        if len(old.columns) > _MAX_KEYS or old.columns.has_duplicates or new.columns.has_duplicates:
            return ""
        if int(old.memory_usage(index=False, deep=False).sum()) > _MAX_COMPARED_BYTES or not old.index.equals(
            new.index
        ):
            return ""
        changed = [
            str(column)
            for column in old.columns
            if column in new.columns and old[column].dtype == new[column].dtype and not old[column].equals(new[column])
        ]
    except Exception:
        return ""
    return digest_text(changed)


def digest_text(changed: list[str]) -> str:
    """``column category changed`` / ``columns a, b changed`` ("" for none)."""
    if not changed:
        return ""
    return f"{'column' if len(changed) == 1 else 'columns'} {_listed(changed)} changed"


def _listed(names: list[str]) -> str:
    more = len(names) - _MAX_LISTED
    return ", ".join(names[:_MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


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
            parts.append(f"{sign}{len(names)} {plural} {_listed(names)}")
    return parts


def _dims(shape: Any) -> str:
    return "×".join(str(n) for n in shape) if isinstance(shape, (tuple, list)) else "?"


def change(
    name: str, kind: str, value: Any = None, detail: str = "", kept: bool = False, yours: bool = False
) -> dict[str, Any]:
    """One entry of a report (``yours``: the name was the person's, a warning in the views)."""
    entry: dict[str, Any] = {
        "name": name,
        "change": kind,
        "type": "" if kind == "deleted" else describe(value),
        "detail": detail,
    }
    if kept:
        entry["kept"] = True
    if yours and kind != "created":
        entry["yours"] = True
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
    mentions: only those can change in place, short of a function of an earlier call doing it; per-column digests of
    the frames among them), compared with the namespace after it (the local executor's report). ``agents(name)`` says
    whether a name is the agent's own: the others are the person's (``yours`` in the report)."""

    def __init__(self, namespace: dict, shared: Any, code: str | None = None, agents: Any = lambda name: False) -> None:
        self.shared = shared
        self.agents = agents
        self.values = {name: value for name, value in list(namespace.items()) if shared(name)}
        mentioned = self.values.keys() if code is None else referenced_names(code) & self.values.keys()
        self.outlines = {name: snapshot(self.values[name]) for name in mentioned}
        self.digests = {name: column_digests(self.values[name]) for name in mentioned if not agents(name)}

    def report(self, namespace: dict) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        missing = object()
        for name, value in list(namespace.items()):
            if not self.shared(name):
                continue
            old = self.values.get(name, missing)
            yours = old is not missing and not self.agents(name)
            if old is missing:
                entries.append(change(name, "created", value))
            elif old is not value:
                entries.append(
                    change(name, "rebound", value, value_difference(old, value) if yours else "", yours=yours)
                )
            else:
                detail = "; ".join(
                    part
                    for part in (difference(self.outlines.get(name), snapshot(value)), self._columns(name, value))
                    if part
                )
                if detail:
                    entries.append(change(name, "modified", value, detail, yours=yours))
        entries += [
            change(name, "deleted", yours=not self.agents(name)) for name in self.values if name not in namespace
        ]
        return entries

    def _columns(self, name: str, value: Any) -> str:
        before = self.digests.get(name)
        if not before:
            return ""
        after = column_digests(value) or {}
        old_types = (self.outlines.get(name) or {}).get("dtypes") or {}
        new_types = (snapshot(value) or {}).get("dtypes") or {}
        retyped = {c for c in old_types if c in new_types and old_types[c] != new_types[c]}  # said as a dtype change
        return digest_text([str(c) for c, d in before.items() if c in after and after[c] != d and c not in retyped])
