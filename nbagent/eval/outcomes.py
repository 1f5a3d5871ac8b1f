"""Did the sample's run answer? A run that ended without a final answer is a failure for every scorer.

A run answers only when it ends with a final answer (`RunResult.state` "success"). Every other end
of a run — max steps reached (smolagents then asks the model for a closing reply and returns it as
the output), stopped, timed out, stuck, failed — is "no answer": each scorer gets its minimum (0,
or the scorer's `minimum` attribute) and is never called, so a closing reply that happens to equal
the reference does not pass, and a model-graded scorer costs nothing.

Each record says so in two fields (two columns of the results): `answered` (True, False, or None
when no run ended: cancelled, or the sample could not run) and `outcome`, one of `OUTCOMES`'
values: "answered", "no answer (max steps)", "no answer (stopped)", "no answer (timed out)",
"no answer (stuck)", "no answer (failed)", "no answer (model error)", "error" (the sample could not
run: its agent factory raised, the engine failed) or "cancelled".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbagent.record.status import RunOutcome, run_outcome

__all__ = [
    "ANSWERED",
    "CANCELLED",
    "NO_ANSWER",
    "NOT_RUN",
    "OUTCOMES",
    "fail_scores",
    "is_no_answer",
    "minimum_score",
    "run_end",
    "settle",
]

ANSWERED = "answered"
NO_ANSWER = "no answer"
NOT_RUN = "error"  # the sample could not run: no run ended, so there is nothing to score
CANCELLED = "cancelled"

_WHY = {
    RunOutcome.MAX_STEPS: "max steps",
    RunOutcome.STOPPED: "stopped",
    RunOutcome.TIMED_OUT: "timed out",
    RunOutcome.STUCK: "stuck",
    RunOutcome.ERROR: "failed",
    RunOutcome.MODEL_ERROR: "model error",
}
OUTCOMES: tuple[str, ...] = (ANSWERED, *(f"{NO_ANSWER} ({why})" for why in _WHY.values()), NOT_RUN, CANCELLED)


def run_end(state: str | None, error: Any = None) -> tuple[bool, str]:
    """(answered, outcome) of a run that ended in `state` (a `RunResult.state`) with `error`."""
    if state == RunOutcome.SUCCESS.value:
        return True, ANSWERED
    outcome = run_outcome(str(state), None, error)
    return False, f"{NO_ANSWER} ({_WHY.get(outcome, str(state))})"


def is_no_answer(record: dict[str, Any]) -> bool:
    return record.get("answered") is False


def minimum_score(scorer: Callable[..., Any] | None) -> float:
    """What a scorer gives a run without an answer: its `minimum` attribute when it has one, else 0."""
    value = getattr(scorer, "minimum", None)
    return 0.0 if value is None else float(value)


def fail_scores(record: dict[str, Any], scorers: dict[str, Callable[..., Any] | None]) -> None:
    """Every scorer's minimum for a run without an answer (no scorer is called; no explanation, no error)."""
    record["scores"] = {name: minimum_score(scorer) for name, scorer in scorers.items()}
    record["explanations"] = {}
    record["scorer_errors"] = {}


def settle(record: dict[str, Any]) -> dict[str, Any]:
    """Fill `answered` and `outcome` of a record that lacks them (a record of an older log, a cancel), in place.

    From the state alone: "error" is a sample that could not run (an older log cannot tell a failed
    run from it, and it was not scored); a run that ended without an answer gets 0 on every scorer
    it was scored by, as a new evaluation gives it.
    """
    if record.get("outcome") is not None:
        return record
    state = record.get("state")
    if state == CANCELLED:
        record["answered"], record["outcome"] = None, CANCELLED
    elif state in (None, NOT_RUN):
        record["answered"], record["outcome"] = None, NOT_RUN
    else:
        record["answered"], record["outcome"] = run_end(state, record.get("error"))
        if record["answered"] is False:
            fail_scores(record, dict.fromkeys(record.get("scores") or {}))
    return record
