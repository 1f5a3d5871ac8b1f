"""Time travel for a namespace: per-step snapshots of its bindings, restored before a re-run (issue 23).

An executor takes a :class:`Snapshot` just before each step's code runs (``executor.checkpoint(step)``): the shared
names and the objects they are bound to (a shallow copy: pointers, no data), with what the agent itself had written
by then. ``restore`` puts a namespace back as a snapshot had it, name by name, and only where the agent made the
difference: a name the notebook rebound since is left alone and said so (nothing of the person's is lost).

Why references are enough: the isolated executor never changes an object of the notebook in place (a frame the code
changed comes back as a new object and is rebound), so the object a snapshot points at *is* the value as it was.
The local executor runs the code in this process, on the objects themselves: what it may have changed in place is
named as not restorable instead.

Snapshots keep old values alive, so they are bounded: at most ``max_snapshots``, and at most ``max_bytes`` held by
snapshots alone (values no longer bound in the namespace, sized by :func:`estimate_bytes`); past either, the oldest
snapshot goes first, and a re-run from its step says its effects are kept.

The count is incremental (issue 32): :class:`HeldBySnapshots` counts the values the snapshots point at as snapshots
come and go, and sizes each value once, so a step's bookkeeping costs the names it copies, not the snapshots it keeps
(``benchmarks/snapshots.py bookkeeping``).

A re-run cuts the line: :meth:`Timeline.cut` keeps the snapshots from the step on, with the namespace at the end of
that line (its *tip*), as a :class:`Branch` that :meth:`Timeline.graft` can make live again (``agent.forks``).
"""

from __future__ import annotations

import ast
import itertools
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MISSING",
    "Snapshot",
    "Branch",
    "Rewound",
    "Timeline",
    "HeldBySnapshots",
    "estimate_bytes",
    "definitions_in",
]

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<unbound>"})()
_order = itertools.count()


def estimate_bytes(value: Any) -> int:
    """A value's size as its data counts it: arrays and frames by their buffers, text by its length, else
    ``sys.getsizeof`` (containers by their own size only: an estimate, said so in the docs)."""
    try:
        nbytes = getattr(value, "nbytes", None)
        if isinstance(nbytes, int):
            return nbytes
        usage = getattr(value, "memory_usage", None)
        if callable(usage) and type(value).__module__.startswith("pandas"):
            return _frame_bytes(value, usage)
        return sys.getsizeof(value)
    except Exception:
        return 0


def _frame_bytes(frame: Any, usage: Callable[..., Any]) -> int:
    """``memory_usage(index=True, deep=False)``'s total, from the frame's columns' buffers (pandas' block manager:
    microseconds, where ``memory_usage`` builds a Series per call), or from ``memory_usage`` where that is missing."""
    try:
        return sum(int(array.nbytes) for array in frame._mgr.arrays) + int(frame.index.nbytes)
    except Exception:
        pass
    try:
        total = usage(index=True, deep=False)
        return int(total.sum() if hasattr(total, "sum") else total)
    except Exception:
        return 0


@dataclass(eq=False)  # one snapshot is itself, never another with equal fields (comparing values would compare data)
class Snapshot:
    """The namespace just before a step's code ran: its shared bindings, the names the agent had written (and the
    values it wrote), and the executor's own bookkeeping (``extra``)."""

    step: int
    bindings: dict[str, Any]
    written: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)
    order: int = field(default_factory=lambda: next(_order))


class HeldBySnapshots:
    """The values a set of snapshots points at, counted incrementally: :meth:`sync` counts the snapshots added and
    forgets those gone since the last call (a snapshot's tables are not changed once taken: :meth:`reset` after a
    change), so its cost is the snapshots that changed, not all of them. Each value is sized once, while a snapshot
    still holds it (so its ``id`` is its own)."""

    def __init__(self, sizeof: Callable[[Any], int]) -> None:
        self.sizeof = sizeof
        self.reset()

    def reset(self) -> None:
        self._snapshots: dict[int, Snapshot] = {}  # id -> the snapshot counted (held, so the id stays its own)
        self._added: Counter[int] = Counter()  # per value id: how many table entries of counted snapshots added it...
        self._removed: Counter[int] = Counter()  # ...and how many of the snapshots forgotten since
        self._values: dict[int, Any] = {}
        self._sizes: dict[int, int] = {}
        self._gone: set[int] = set()  # ids that a forgotten snapshot pointed at: maybe no longer held
        self._latest: tuple[int, set[int]] = (0, set())  # the snapshot counted last and the ids it points at

    def sync(self, snapshots: Iterable[Snapshot]) -> None:
        current = {id(s): s for s in snapshots}
        for key in [k for k in self._snapshots if k not in current]:
            ids = self._ids(self._snapshots.pop(key))
            self._removed.update(ids)  # (Counter counts an iterable in C)
            self._gone.update(ids)
        for key, snapshot in current.items():
            if key not in self._snapshots:
                self._snapshots[key] = snapshot
                values = [*snapshot.bindings.values(), *snapshot.written.values()]
                ids = list(map(id, values))
                self._added.update(ids)
                self._values.update(zip(ids, values))
                self._latest = (key, set(ids))
        self._release()

    def _release(self) -> None:
        """Let go of the values no counted snapshot points at any more (those the latest one counted points at are
        held: only the others are looked at)."""
        key, held = self._latest
        gone = self._gone - held if key in self._snapshots else self._gone
        added, removed = self._added, self._removed
        for value_id in gone:
            if added[value_id] <= removed[value_id]:
                for table in (added, removed, self._values, self._sizes):
                    table.pop(value_id, None)
        self._gone = set()

    @staticmethod
    def _ids(snapshot: Snapshot) -> list[int]:
        return [*map(id, snapshot.bindings.values()), *map(id, snapshot.written.values())]

    def bytes_beyond(self, namespace: Mapping[str, Any]) -> int:
        """The bytes of the distinct values counted that ``namespace`` does not bind."""
        total = 0
        for key in self._values.keys() - set(map(id, namespace.values())):
            value = self._values[key]
            if value is MISSING:
                continue
            size = self._sizes.get(key)
            if size is None:
                size = self._sizes[key] = self.sizeof(value)
            total += size
        return total


@dataclass(eq=False)  # (as a snapshot: by identity)
class Branch:
    """A line of steps a re-run cut off: its snapshots from ``start`` on and its namespace at the cut (``tip``)."""

    start: int
    snapshots: list[Snapshot]
    tip: Snapshot


@dataclass
class Rewound:
    """What a rewind did: names set back, names removed, names left as they are and names that could not be
    restored (each with why), functions re-made in a fresh worker (their definitions run again with every tool
    refused: ``reran``, ``refused_tools``); ``note`` says it in a sentence or two."""

    step: int
    found: bool = True  # False: no snapshot of that step or later (dropped by the limit, or no code ran)
    snapshot_step: int | None = None  # the snapshot used (a later step's when the step ran no code)
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)
    unrestorable: dict[str, str] = field(default_factory=dict)
    redefined: list[str] = field(default_factory=list)
    reran: list[str] = field(default_factory=list)  # the definitions run again in the fresh worker (tools refused)
    refused_tools: list[str] = field(default_factory=list)  # the tools they called, refused: never run in the host
    note: str = ""
    branch: Branch | None = field(default=None, repr=False)  # the line the rewind cut off (agent.forks)

    def describe(self) -> str:
        """The sentence a re-run shows (the widget, the console, the step)."""
        if not self.found:
            return (
                f"The namespace could not be restored to before step {self.step} (its snapshot was dropped by the "
                "snapshot limit, or no code ran): variables keep the values later steps gave them."
            )
        parts = [f"Variables are as they were before step {self.step}"]
        restored = [name for name in self.restored if name not in self.unrestorable]
        if restored or self.removed:
            parts[0] += f" ({_listed(restored, 'restored')}{'; ' if restored and self.removed else ''}"
            parts[0] += f"{_listed(self.removed, 'removed')})"
        parts[0] += "."
        if self.redefined:
            parts.append(f"Re-made in a fresh worker: {', '.join(self.redefined)}.")
        if self.reran:
            refused = f" (refused: {', '.join(self.refused_tools)})" if self.refused_tools else ""
            parts.append(
                f"Definitions run again: {_listed(self.reran, '')[1:]}; no tool was called while they ran{refused}."
            )
        if self.kept:
            parts.append("Left as they are: " + "; ".join(f"{n} ({why})" for n, why in sorted(self.kept.items())) + ".")
        if self.unrestorable:
            items = "; ".join(f"{n} ({why})" for n, why in sorted(self.unrestorable.items()))
            parts.append(f"Not restorable: {items}.")
        return " ".join(parts)


def _listed(names: list[str], verb: str) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f"{verb} {shown}"


def definitions_in(code: str) -> dict[str, str]:
    """The source of each top-level ``def`` and ``class`` statement of ``code`` (decorators included), by name: what
    a fresh worker runs again to re-make the functions and classes an earlier worker held."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    lines = code.splitlines(keepends=True)
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.end_lineno:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            found.pop(node.name, None)  # the last definition of a name is the one bound
            found[node.name] = "".join(lines[first - 1 : node.end_lineno])
    return found


class Timeline:
    """The snapshots of one namespace, bounded; thread-compatible (the executor's lock serialises calls)."""

    def __init__(
        self,
        max_snapshots: int = 20,
        max_bytes: int | None = None,
        shared: Callable[[Any], bool] = lambda name: isinstance(name, str) and not name.startswith("__"),
        sizeof: Callable[[Any], int] = estimate_bytes,
    ) -> None:
        self.max_snapshots = max_snapshots
        self.max_bytes = max_bytes
        self.shared = shared
        self.sizeof = sizeof
        self.snapshots: list[Snapshot] = []
        self.branches: list[Branch] = []
        self.written: dict[str, Any] = {}  # name -> the value the agent last bound (MISSING: it deleted the name)
        self.dropped: list[int] = []  # steps whose snapshots the limits dropped
        self._held = HeldBySnapshots(sizeof)  # counted only when asked (held_bytes), so only a byte limit pays for it
        self._asked: tuple[Callable[[Any], bool], set[Any], set[Any]] = (shared, set(), set())  # names asked, refused

    # -- recording ----------------------------------------------------------------------------------------------------

    def checkpoint(self, step: int, namespace: Mapping[str, Any], extra: dict[str, Any] | None = None) -> Snapshot:
        """Snapshot ``namespace`` as it is before ``step``'s code (replacing a snapshot of the same step: a re-run)."""
        self.snapshots = [s for s in self.snapshots if s.step < step]
        snapshot = Snapshot(step, self._bindings(namespace), dict(self.written), dict(extra or {}))
        self.snapshots.append(snapshot)
        self.dropped = [s for s in self.dropped if s < step]
        self.enforce(namespace)
        return snapshot

    def wrote(self, name: str, value: Any) -> None:
        """The agent's code bound ``name`` to ``value`` (``MISSING``: deleted it). Without a snapshot nothing is
        kept: a write matters only against a snapshot taken before it (and must not keep a value alive)."""
        if self.snapshots or self.branches:
            self.written[name] = value

    def _bindings(self, namespace: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``namespace`` less the names ``shared`` refuses (each name asked once: a step copies pointers)."""
        bindings = dict(namespace)
        if self._asked[0] is not self.shared or len(self._asked[1]) > _MAX_NAMES_ASKED:
            self._asked = (self.shared, set(), set())
        _, asked, refused = self._asked
        fresh = bindings.keys() - asked
        if fresh:
            refused.update(name for name in fresh if not self.shared(name))
            asked |= fresh
        for name in refused.intersection(bindings):
            del bindings[name]
        return bindings

    # -- limits -------------------------------------------------------------------------------------------------------

    def held_bytes(self, namespace: Mapping[str, Any]) -> int:
        """Bytes that only snapshots keep alive: distinct values they point at that the namespace no longer binds."""
        if self._held.sizeof is not self.sizeof:  # (set after construction)
            self._held = HeldBySnapshots(self.sizeof)
        self._held.sync(self.all_snapshots())
        return self._held.bytes_beyond(namespace)

    def count(self) -> int:
        return len(self.snapshots) + sum(len(b.snapshots) + 1 for b in self.branches)

    def enforce(self, namespace: Mapping[str, Any]) -> list[int]:
        """Drop the oldest snapshots until both limits hold; the steps whose live snapshots were dropped."""
        dropped: list[int] = []
        while self._over(namespace):
            oldest = min(self.all_snapshots(), key=lambda s: s.order, default=None)
            if oldest is None:
                break
            dropped += self._drop(oldest)
        self.dropped = sorted(set(self.dropped) | set(dropped))
        if not self.count():
            self._held.reset()  # (the byte count is not asked without snapshots: it would keep their values alive)
        return dropped

    def _over(self, namespace: Mapping[str, Any]) -> bool:
        if self.count() > max(0, self.max_snapshots):
            return True
        return self.max_bytes is not None and self.count() > 0 and self.held_bytes(namespace) > self.max_bytes

    def _drop(self, snapshot: Snapshot) -> list[int]:
        if snapshot in self.snapshots:
            self.snapshots.remove(snapshot)
            return [snapshot.step]
        for branch in list(self.branches):
            if snapshot is branch.tip:  # a fork without its tip cannot be restored: drop it all
                self.branches.remove(branch)
            elif snapshot in branch.snapshots:
                branch.snapshots.remove(snapshot)
        return []

    def all_snapshots(self) -> Iterable[Snapshot]:
        yield from self.snapshots
        for branch in self.branches:
            yield from branch.snapshots
            yield branch.tip

    # -- restoring ----------------------------------------------------------------------------------------------------

    def find(self, step: int) -> Snapshot | None:
        """The snapshot to restore before ``step``: its own, or the next step's when ``step`` ran no code. None when
        a snapshot on the way was dropped (the state before ``step`` is gone) or no code ran since."""
        later = [s for s in self.snapshots if s.step >= step]
        if not later or any(step <= d < later[0].step for d in self.dropped):
            return None
        return later[0]

    def rewind(
        self, step: int, namespace: dict[str, Any], extra: dict[str, Any] | None = None, keep: bool = True
    ) -> tuple[Rewound, Snapshot | None]:
        """Put ``namespace`` back as it was before ``step``; the line from there on becomes a branch (``extra``: the
        executor's bookkeeping at its tip), or is dropped (``keep=False``: a step tried again). Returns what was
        done and the snapshot used (None: none was found)."""
        snapshot = self.find(step)
        if snapshot is None:
            return Rewound(step, found=False), None
        branch = self.cut(step, namespace, extra)
        if not keep:
            self.branches.remove(branch)
            branch = None
        outcome = self.apply(snapshot, namespace)
        outcome.step, outcome.snapshot_step, outcome.branch = step, snapshot.step, branch
        self.written = dict(snapshot.written)
        if not keep:
            self.snapshots.append(snapshot)  # the step runs again from the same state
        return outcome, snapshot

    def apply(self, target: Snapshot, namespace: dict[str, Any]) -> Rewound:
        """Make ``namespace`` bind what ``target`` binds, for every name whose present value the agent made."""
        return self._set_all(
            target,
            namespace,
            ours=lambda name, present: self.written.get(name, _NEVER) is present,
            agents=lambda name: self.written.get(name, _NEVER) is not target.written.get(name, _NEVER),
        )

    def _set_all(
        self,
        target: Snapshot,
        namespace: dict[str, Any],
        ours: Callable[[str, Any], bool],
        agents: Callable[[str], bool],
    ) -> Rewound:
        """Set every name where ``ours(name, present)``; a name the agent changed on the way (``agents(name)``) but
        the notebook changed since is left and said; the notebook's own names are left silently."""
        outcome = Rewound(target.step, snapshot_step=target.step)
        names = set(target.bindings) | {n for n in namespace if self.shared(n)}
        for name in sorted(names):
            wanted = target.bindings.get(name, MISSING)
            present = namespace.get(name, MISSING)
            if present is wanted:
                continue
            if not ours(name, present):
                if agents(name):
                    outcome.kept[name] = "your notebook changed it after the agent did"
            elif wanted is MISSING:
                namespace.pop(name, None)
                outcome.removed.append(name)
            else:
                namespace[name] = wanted
                outcome.restored.append(name)
        return outcome

    def cut(self, step: int, namespace: Mapping[str, Any], extra: dict[str, Any] | None = None) -> Branch:
        """Keep the line from ``step`` on as a branch (its snapshots and its tip: the namespace now)."""
        tip = Snapshot(step, self._bindings(namespace), dict(self.written), dict(extra or {}))
        branch = Branch(step, [s for s in self.snapshots if s.step >= step], tip)
        self.snapshots = [s for s in self.snapshots if s.step < step]
        self.branches.append(branch)
        return branch

    def graft(self, branch: Branch, namespace: dict[str, Any]) -> Rewound:
        """Make ``branch`` the live line again: the namespace as at its tip, its snapshots live. The namespace is
        expected at the branch's start (restore that first); a name changed since that start is left alone."""
        base = branch.snapshots[0] if branch.snapshots else None

        def ours(name: str, present: Any) -> bool:
            return base is None or base.bindings.get(name, MISSING) is present

        def agents(name: str) -> bool:
            return base is None or branch.tip.written.get(name, _NEVER) is not base.written.get(name, _NEVER)

        outcome = self._set_all(branch.tip, namespace, ours, agents)
        self.written = dict(branch.tip.written)
        self.snapshots = [s for s in self.snapshots if s.step < branch.start] + list(branch.snapshots)
        if branch in self.branches:
            self.branches.remove(branch)
        return outcome

    def rebind(self, old: Any, new: Any) -> None:
        """An object replaced everywhere (a worker's handle re-made by a fresh worker)."""
        self._held.reset()  # the snapshots' tables change: counted again when next asked
        for snapshot in self.all_snapshots():
            for table in (snapshot.bindings, snapshot.written):
                for name, value in list(table.items()):
                    if value is old:
                        table[name] = new
        for name, value in list(self.written.items()):
            if value is old:
                self.written[name] = new

    def clear(self) -> None:
        self.snapshots, self.branches, self.dropped = [], [], []
        self.written = {}
        self._held.reset()


_NEVER = object()
_MAX_NAMES_ASKED = 100_000  # past this many names remembered, the memory starts again
