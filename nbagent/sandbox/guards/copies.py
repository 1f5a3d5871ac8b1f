"""``copy_inputs``: the agent's code works on copies of the notebook's objects, which stay as they were.

For the local executor (the code runs in the notebook's own namespace): before a call, the notebook's mutable
objects the code mentions are replaced by copies, and names the agent changed in an earlier call show the
agent's version; after it, every notebook name is put back, and the agent's versions are kept aside for its next
call. Names the agent created are the agent's and stay in the namespace (its results come back as new variables).
The notebook rebinding a name between calls ends the agent's private version of it.

A pandas frame or series is copied lazily where pandas copies on write (pandas 3, or 2.x with
``mode.copy_on_write``): new objects over the same buffers, a column copied only when the code writes it (0.02 ms
for a 100 MB frame, where a deep copy took tens of ms: ``benchmarks/copy_inputs.py``). Anything else is deep-copied.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..wire.changes import is_mutable, referenced_names

_MISSING = object()


class InputCopies:
    """Keeps a notebook's names untouched across calls of an executor that runs in its namespace."""

    def __init__(self) -> None:
        self.private: dict[str, tuple[Any, Any]] = {}  # name -> (the notebook's value, the agent's version)
        self.agent_values: dict[str, Any] = {}  # names the agent created -> the value it left
        self.user: dict[str, Any] = {}  # during a call: the notebook's names and values
        self.uncopied: list[str] = []  # mutable objects that could not be copied (shared, said in the report)

    def owned_by_agent(self, name: str, value: Any) -> bool:
        return name in self.agent_values and self.agent_values[name] is value

    def enter(self, namespace: dict, code: str, shared: Callable[[Any], bool]) -> None:
        """Before a call: show the agent its versions and copies."""
        for name, (user_value, _agent_value) in list(self.private.items()):
            if namespace.get(name, _MISSING) is not user_value:  # the notebook rebound it since
                del self.private[name]
        self.user = {
            name: self.private[name][0] if name in self.private else value
            for name, value in list(namespace.items())
            if shared(name) and not self.owned_by_agent(name, value)
        }
        for name, (_, agent_value) in self.private.items():
            if agent_value is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = agent_value
        self.uncopied = []
        for name in referenced_names(code):
            value = self.user.get(name, _MISSING)
            if name in self.private or value is _MISSING or not is_mutable(value):
                continue
            try:
                namespace[name] = private_copy(value)
            except Exception:  # e.g. an object holding a lock: it stays shared
                self.uncopied.append(name)

    def leave(self, namespace: dict, shared: Callable[[Any], bool]) -> set[str]:
        """After a call: put the notebook's values back; returns the notebook names whose changes stay private."""
        kept = set()
        for name, user_value in self.user.items():
            current = namespace.get(name, _MISSING)
            if current is not user_value:
                self.private[name] = (user_value, current)
                namespace[name] = user_value
                kept.add(name)
        for name, value in list(namespace.items()):
            if shared(name) and name not in self.user:
                self.agent_values[name] = value
        self.user = {}
        return kept


def private_copy(value: Any) -> Any:
    """A copy of ``value`` the code may change without changing ``value``: lazy for pandas under copy-on-write."""
    if _copies_on_write(value):
        return value.copy(deep=False)
    return copy.deepcopy(value)


def _copies_on_write(value: Any) -> bool:
    kind = type(value)
    if not (getattr(kind, "__module__", "") or "").startswith("pandas") or kind.__name__ not in ("DataFrame", "Series"):
        return False
    import pandas

    if int(pandas.__version__.split(".")[0]) >= 3:  # always on (its option is deprecated and says so when read)
        return True
    return pandas.get_option("mode.copy_on_write") is True  # 2.x: "warn" or False keep views that write through
