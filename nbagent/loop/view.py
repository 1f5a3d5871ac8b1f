"""What the loop needs of a view: `consume(event)`. The loop is given its views; it never makes them.

`LogLevel` (smolagents' verbosity levels) lives here because the loop's callers pick
views by it, and importing it must not cost the console (rich).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Protocol, runtime_checkable

__all__ = ["View", "LogLevel"]


@runtime_checkable
class View(Protocol):
    """Anything that shows a run: it is told of every event of the stream, in order, on the loop's thread."""

    def consume(self, event: Any) -> None: ...


class LogLevel(IntEnum):
    OFF = -1
    ERROR = 0
    INFO = 1
    DEBUG = 2
