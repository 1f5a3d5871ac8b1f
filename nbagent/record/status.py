"""The one status vocabulary: how a run ended (`RunOutcome`) and what a view shows (`RunStatus`).

`RunOutcome` is `RunResult.state` (smolagents' values). `RunStatus` is what the
widget badge, the control gates and the static HTML say; `js/status.js` holds
the same values (a test keeps the two equal). `status_of(outcome)` is the one
map from the first to the second.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["RunOutcome", "RunStatus", "STATUSES", "status_of", "LIVE_STATUSES", "ENDED_STATUSES", "HALT_STATUSES"]


class RunOutcome(str, Enum):
    """How a run ended (`RunResult.state`)."""

    SUCCESS = "success"
    MAX_STEPS = "max_steps_error"
    STOPPED = "stopped"
    ERROR = "error"


class RunStatus(str, Enum):
    """Where a run is, as shown to a person."""

    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    AWAITING_APPROVAL = "awaiting_approval"
    STOPPED = "stopped"
    DONE = "done"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


STATUSES: tuple[str, ...] = tuple(status.value for status in RunStatus)
LIVE_STATUSES = frozenset({RunStatus.RUNNING.value, RunStatus.PAUSED.value, RunStatus.AWAITING_APPROVAL.value})
ENDED_STATUSES = frozenset({RunStatus.STOPPED.value, RunStatus.DONE.value, RunStatus.ERROR.value})
# A halt is any point where the loop's thread waits or stops: what "step once" and "run" wait for.
HALT_STATUSES = frozenset({RunStatus.PAUSED.value, RunStatus.AWAITING_APPROVAL.value, *ENDED_STATUSES})

_STATUS_OF_OUTCOME = {
    RunOutcome.SUCCESS: RunStatus.DONE,
    RunOutcome.MAX_STEPS: RunStatus.DONE,
    RunOutcome.STOPPED: RunStatus.STOPPED,
    RunOutcome.ERROR: RunStatus.ERROR,
}


def status_of(outcome: str) -> str:
    """The status a view shows for a run that ended with `outcome` (unknown outcomes show as an error)."""
    try:
        return _STATUS_OF_OUTCOME[RunOutcome(outcome)].value
    except ValueError:
        return RunStatus.ERROR.value
