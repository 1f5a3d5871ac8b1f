"""The agent's scope: the names its code made that the notebook did not ask for stay the agent's, not the person's.

A run's code makes intermediate names (`tmp`, `result2`, `filtered_orders`). They live in the shared namespace while
the run goes on (the next step's code uses them, the time-travel snapshots see them), and when the run ends they
move out of it into the agent's scope (`agent.scratch`), unless the task asks for them (a name it writes as `name` or
{name}) or they hold the answer's parts (the answer itself, or an item of an answer that is a tuple, list or dict).
The next run of the same agent, a re-run and an undo put them back first, so the agent's code of a later run still
sees what it made; a name the person bound meanwhile wins (the agent's value is dropped, and said).

`keep(names)` brings names into the notebook for good (`agent.keep()`, `%agent --keep`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["AgentScope", "answer_parts", "scratch_line", "names_made"]

_SHOWN = 6  # names listed in the line before "and N more"


class AgentScope:
    """Names an agent made, held out of a namespace between its runs (``names``), and put back for the next."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {}  # out of the namespace now: name -> value
        self.entered: dict[str, Any] = {}  # put back for the run under way: name -> the value put back
        self.dropped: list[str] = []  # names the person bound meanwhile: the agent's value was dropped

    def enter(self, namespace: dict[str, Any]) -> None:
        """Put the agent's names back into ``namespace`` for a run (idempotent)."""
        for name, value in list(self.names.items()):
            if name in namespace and namespace[name] is not value:
                self.dropped.append(name)  # the person's binding wins
            else:
                namespace[name] = value
                self.entered[name] = value
        self.names.clear()

    def leave(
        self,
        namespace: dict[str, Any],
        made: Iterable[str],
        keep: Iterable[str] = (),
        touched: Iterable[str] = (),
        parts: list[Any] | None = None,
    ) -> list[str]:
        """Move out of ``namespace`` the names put back by ``enter`` and those in ``made`` (the names the run's code
        created), but those in ``keep`` and those holding one of the answer's ``parts`` (:func:`answer_parts`);
        ``touched``: the names the run's code bound (a name put back and bound since by anyone else is the
        person's). Returns the names held now, in order."""
        kept, made, touched = set(keep), list(made), set(touched)
        for name in dict.fromkeys([*self.entered, *made]):
            if name in kept or name not in namespace or any(_same(namespace[name], p) for p in parts or ()):
                continue
            if name in self.entered and namespace[name] is not self.entered[name] and name not in touched:
                continue  # rebound since by the person: theirs now
            self.names[name] = namespace.pop(name)
        self.entered.clear()
        return list(self.names)

    def keep(self, namespace: dict[str, Any], names: Iterable[str] | None = None) -> list[str]:
        """Bring ``names`` (None: all) into ``namespace`` for good; a name the person bound meanwhile is not
        overwritten. Returns the names brought in. An unknown name is a ValueError naming the ones held."""
        wanted = list(self.names) if names is None else list(names)
        unknown = [name for name in wanted if name not in self.names]
        if unknown:
            held = ", ".join(self.names) or "none"
            raise ValueError(f"not in the agent's scope: {', '.join(unknown)} (it holds: {held})")
        brought = []
        for name in wanted:
            value = self.names.pop(name)
            if name in namespace and namespace[name] is not value:
                self.dropped.append(name)
                continue
            namespace[name] = value
            brought.append(name)
        return brought

    def forget(self, names: Iterable[str]) -> None:
        """An undo removed these names: the scope does not hold them either."""
        for name in names:
            self.names.pop(name, None)
            self.entered.pop(name, None)


def _same(value: Any, part: Any) -> bool:
    """``value`` is the answer's part: the same object, or an equal value of the same type (the isolated worker's
    answer and its write-back are two decoded copies of one object)."""
    if value is part:
        return True
    if type(value) is not type(part) or callable(value):
        return False
    try:
        equals = getattr(value, "equals", None)
        if callable(equals) and type(value).__module__.startswith("pandas"):
            return bool(equals(part))
        if type(value).__module__.startswith("numpy"):
            import numpy

            return bool(numpy.array_equal(value, part))
        return bool(value == part)
    except Exception:  # a value that cannot say it is equal is not the answer's part
        return False


def answer_parts(answer: Any) -> list[Any]:
    """The answer and, for a tuple, list or dict answer, its items: names bound to them are the answer's parts."""
    parts = [answer]
    if isinstance(answer, (tuple, list)) and len(answer) <= 100:
        parts += list(answer)
    elif isinstance(answer, dict) and len(answer) <= 100:
        parts += list(answer.values())
    return parts


def scratch_line(names: list[str], how: str = "agent.scratch holds them; %agent --keep brings them in") -> str:
    """ "Kept in the agent's scope: 12 names (tmp, result2, … and 6 more); …" ("" for none)."""
    if not names:
        return ""
    shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
    plural = "name" if len(names) == 1 else "names"
    return f"Kept in the agent's scope: {len(names)} {plural} ({shown}); {how}."


def names_made(steps: Iterable[Any]) -> list[str]:
    """The names the steps' code created (in order) and did not delete afterwards, from their change reports."""
    made: dict[str, None] = {}
    for step in steps:
        for change in getattr(step, "namespace_changes", None) or []:
            if not isinstance(change, Mapping) or change.get("kept"):
                continue
            name, kind = change.get("name"), change.get("change")
            if kind == "created":
                made[name] = None
            elif kind == "deleted":
                made.pop(name, None)
    return list(made)
