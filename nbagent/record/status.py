"""The one status vocabulary: how a run ended (`RunOutcome`) and what a view shows (`RunStatus`).

`RunResult.state` holds the first six `RunOutcome` values: smolagents' own four, and two ends that
nbagent's limits give a run (`TIMED_OUT`: its wall-time limit `max_time` passed; `STUCK`: the model
sent again code that had failed twice the same way and was refused once). The views
refine it with `run_outcome()`: a run that "succeeded" with an answer that reads as an
error or an apology is `ERROR_ANSWER`, a run ended by the model failing is `MODEL_ERROR`.
That refined outcome is the one thing that decides the badge (`status_of`), the final
box (warning style unless `ANSWERED`), the `-o` value of `%%agent` (the answer only when
`answered(outcome)`), the memory view and the static HTML. `js/status.js` holds the same
statuses and labels (a test keeps the two equal).

A step that did not end in the plain way carries a `StepMark`: "error" (its code or the model failed: red),
"stopped" (a person's Stop), "timed_out" (the run's time limit), "stuck" (a repeat the loop refused),
"rejected" (a person rejected its code at approval). Stopped, timed out and rejected are no errors: each has
its own badge and colour in the widget, the static HTML and the console (`step_mark`, mirrored by js/status.js).
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

__all__ = [
    "RunOutcome",
    "RunStatus",
    "STATUSES",
    "OUTCOMES",
    "status_of",
    "run_outcome",
    "answered",
    "looks_like_error",
    "outcome_message",
    "LIVE_STATUSES",
    "ENDED_STATUSES",
    "HALT_STATUSES",
    "StepMark",
    "STEP_MARKS",
    "STEP_MARK_LABELS",
    "REJECTED_OBSERVATION",
    "step_mark",
    "mark_of_step",
]


class RunOutcome(str, Enum):
    """How a run ended. The first six are `RunResult.state`; the last two are refinements of views."""

    SUCCESS = "success"
    MAX_STEPS = "max_steps_error"
    STOPPED = "stopped"
    ERROR = "error"
    TIMED_OUT = "timed_out"  # the run's time limit (max_time) passed: the step under way was stopped
    STUCK = "stuck"  # the model kept sending the same failing code: the run ended instead of looping
    MODEL_ERROR = "model_error"  # the model call failed (API error, context overflow, …)
    ERROR_ANSWER = "error_answer"  # "answered" with text that reads as an error or an apology

    def __str__(self) -> str:
        return self.value


OUTCOMES: tuple[str, ...] = tuple(outcome.value for outcome in RunOutcome)


class RunStatus(str, Enum):
    """Where a run is, as shown to a person."""

    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    AWAITING_APPROVAL = "awaiting_approval"
    AWAITING_PERMISSION = "awaiting_permission"  # the code was refused a file or a host: a person is asked
    STOPPED = "stopped"
    DONE = "done"
    ERROR = "error"
    MAX_STEPS = "max_steps"
    NO_ANSWER = "no_answer"
    TIMED_OUT = "timed_out"
    STUCK = "stuck"

    def __str__(self) -> str:
        return self.value


STATUSES: tuple[str, ...] = tuple(status.value for status in RunStatus)
LIVE_STATUSES = frozenset(
    {
        RunStatus.RUNNING.value,
        RunStatus.PAUSED.value,
        RunStatus.AWAITING_APPROVAL.value,
        RunStatus.AWAITING_PERMISSION.value,
    }
)
ENDED_STATUSES = frozenset(
    {
        RunStatus.STOPPED.value,
        RunStatus.DONE.value,
        RunStatus.ERROR.value,
        RunStatus.MAX_STEPS.value,
        RunStatus.NO_ANSWER.value,
        RunStatus.TIMED_OUT.value,
        RunStatus.STUCK.value,
    }
)
# A halt is any point where the loop's thread waits or stops: what "step once" and "run" wait for.
HALT_STATUSES = frozenset(
    {RunStatus.PAUSED.value, RunStatus.AWAITING_APPROVAL.value, RunStatus.AWAITING_PERMISSION.value, *ENDED_STATUSES}
)

_STATUS_OF_OUTCOME = {
    RunOutcome.SUCCESS: RunStatus.DONE,
    RunOutcome.MAX_STEPS: RunStatus.MAX_STEPS,
    RunOutcome.STOPPED: RunStatus.STOPPED,
    RunOutcome.ERROR: RunStatus.ERROR,
    RunOutcome.TIMED_OUT: RunStatus.TIMED_OUT,
    RunOutcome.STUCK: RunStatus.STUCK,
    RunOutcome.MODEL_ERROR: RunStatus.ERROR,
    RunOutcome.ERROR_ANSWER: RunStatus.NO_ANSWER,
}

# What `%%agent` and the memory's text say of an outcome (one line; the answer is not repeated).
_MESSAGES = {
    RunOutcome.SUCCESS: "answered",
    RunOutcome.MAX_STEPS: "max steps reached, no answer",
    RunOutcome.STOPPED: "stopped before an answer",
    RunOutcome.ERROR: "failed",
    RunOutcome.TIMED_OUT: "timed out before an answer (the run's time limit, max_time)",
    RunOutcome.STUCK: "stuck: the model kept sending the same failing code, so the run ended",
    RunOutcome.MODEL_ERROR: "the model failed",
    RunOutcome.ERROR_ANSWER: "no answer: the model's final answer reads as an error or an apology",
}

# An answer that opens like this is an error report or an apology, not an answer to the task.
_ERROR_OPENINGS = re.compile(
    r"""^\W{0,3}(
        error\b\s*[:\-–(] | error\ while\b | traceback\ \(most\ recent | exception\b\s*: |
        [a-z]*error:\s | i'?m\ sorry\b | i\ am\ sorry\b | sorry,? | i\ apologi[sz]e\b | apologies\b |
        unfortunately,?\ i\b | i\ (cannot|can'?t|could\ not|couldn'?t|was\ (not|unable)|am\ (not\ able|unable))\b |
        unable\ to\b | no\ answer\b | n/?a$ | none$ | null$
    )""",
    re.IGNORECASE | re.VERBOSE,
)


def looks_like_error(answer: Any) -> bool:
    """True for a text answer that reads as an error or an apology ("Error: …", "I'm sorry, I could not …")."""
    if not isinstance(answer, str):
        return False
    return bool(_ERROR_OPENINGS.match(answer.strip()))


def run_outcome(state: str, output: Any = None, error: Any = None) -> RunOutcome:
    """The refined outcome of a run that ended in `state` (a `RunResult.state`) with `output` and `error`."""
    try:
        outcome = RunOutcome(state)
    except ValueError:
        return RunOutcome.ERROR
    if outcome is RunOutcome.SUCCESS and looks_like_error(output):
        return RunOutcome.ERROR_ANSWER
    if outcome is RunOutcome.ERROR and _is_model_error(error):
        return RunOutcome.MODEL_ERROR
    return outcome


def _is_model_error(error: Any) -> bool:
    if type(error).__name__ == "AgentGenerationError":
        return True
    return str(error or "").startswith("Error while generating output with the model")


def answered(outcome: str | RunOutcome | None) -> bool:
    """True when the run's answer is an answer (what `-o` stores; everything else stores `None`)."""
    return outcome == RunOutcome.SUCCESS


def outcome_message(outcome: str | RunOutcome) -> str:
    """One line naming the outcome, e.g. "max steps reached without an answer (…)"."""
    try:
        return _MESSAGES[RunOutcome(outcome)]
    except ValueError:
        return str(outcome)


def status_of(outcome: str) -> str:
    """The status a view shows for a run that ended with `outcome` (unknown outcomes show as an error)."""
    try:
        return _STATUS_OF_OUTCOME[RunOutcome(outcome)].value
    except ValueError:
        return RunStatus.ERROR.value


class StepMark(str, Enum):
    """How a step ended when it did not end in the plain way: the badge on the step (None: no badge)."""

    ERROR = "error"
    STOPPED = "stopped"
    TIMED_OUT = "timed_out"
    STUCK = "stuck"
    REJECTED = "rejected"

    def __str__(self) -> str:
        return self.value


STEP_MARKS: tuple[str, ...] = tuple(mark.value for mark in StepMark)
STEP_MARK_LABELS = {
    "error": "error",
    "stopped": "stopped",
    "timed_out": "timed out",
    "stuck": "stuck",
    "rejected": "rejected",
}

# What the model observes of a step whose code a person rejected (nbagent.loop.gates.CodeRejected): the mark's key.
REJECTED_OBSERVATION = "A person reviewed this code and rejected it, so it did not run."

# An error's class (nbagent.errors) -> the step's mark; any other error is StepMark.ERROR.
_MARK_OF_ERROR = {
    "AgentTimedOutError": StepMark.TIMED_OUT,
    "AgentStoppedError": StepMark.STOPPED,
    "AgentStuckError": StepMark.STUCK,
}


def step_mark(error: Any, stopped: bool = False, observations: str | None = None) -> str | None:
    """The mark of an action step from its `error` (an AgentError, or a dict {"type", "message"}), whether it was
    `stopped`, and its `observations` (a rejection is said there); None for a step that ended plainly."""
    kind = error.get("type") if isinstance(error, dict) else type(error).__name__
    if error is not None and kind in _MARK_OF_ERROR:
        return _MARK_OF_ERROR[kind].value
    if stopped:
        return StepMark.STOPPED.value
    if error is not None:
        return StepMark.ERROR.value
    if isinstance(observations, str) and observations.startswith(REJECTED_OBSERVATION):
        return StepMark.REJECTED.value
    return None


def mark_of_step(step: dict[str, Any]) -> str | None:
    """The mark a view shows for a step dict (nbagent/views/state.py): its own `mark`, or for a step saved before
    steps had one, "stopped" when it was stopped and "error" when it has an error (js/status.js `stepMark`)."""
    mark = step.get("mark")
    if isinstance(mark, str) and mark in STEP_MARK_LABELS:
        return mark
    if step.get("stopped"):
        return StepMark.STOPPED.value
    return StepMark.ERROR.value if step.get("error") else None
