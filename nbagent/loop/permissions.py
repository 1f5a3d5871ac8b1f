"""Asking for what the sandbox refused: the run's policy (`on_permission`), who answers, what the step records.

When the code of a step is refused a file, a host, the network or a notebook variable the task did not give it (the
executor lists what in `last_refusals`), the code step asks, one question per refusal and at most `MAX_ASKS_PER_STEP`
per step:

* ``on_permission="ask"`` (the default) asks a person: the widget when one shows the run (the gates'
  `answerer`), else the terminal when stdin is one and the run is on the main thread ("a/r/d"), else
  nobody can be asked and the answer is "deny", said so in the step (scripts, `evaluate()`, threads:
  never a hang);
* ``on_permission="deny"`` denies without asking;
* ``on_permission=callable``: `callable(ask) -> "once" | "run" | "deny"` decides (`ask` is a
  `PermissionAsk`); one that raises or answers anything else denies, with the reason in the step.

"once" grants last for the step's re-run, "run" grants until the run ends (`RunPermissions.end_run`).
Each answer is recorded on the step (`ActionStep.permissions`, one dict per ask) and a denial becomes
the step's error, with what the model should do instead.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nbagent.sandbox.wire.capabilities import Grant, RefusedCapability

from .gates import ANSWERS, RunGates, ask_text

__all__ = [
    "POLICIES",
    "MAX_ASKS_PER_STEP",
    "PermissionAsk",
    "Decision",
    "check_policy",
    "decide",
    "RunPermissions",
    "StepAsks",
    "grants_of",
]

POLICIES = ("ask", "deny")
MAX_ASKS_PER_STEP = 3
_TERMINAL_KEYS = {"a": "once", "r": "run", "d": "deny"}
_TERMINAL_TRIES = 3

# What the model can do without a refused capability, by kind.
_INSTEAD = {
    "write": "keep the result in a variable, or write into the scratch directory (tempfile.gettempdir())",
    "read": "use the data you already have (the variables in the namespace)",
    "connect": "work without that host: use the data you already have",
    "network": "work without the network: use the data you already have",
    "variable": "use the variables the task gave you and what you create; do not guess other names",
}


@dataclass(frozen=True)
class PermissionAsk:
    """What a policy is asked: step `step` was refused `refused`; `text` is the question a person reads."""

    step: int
    refused: RefusedCapability
    text: str

    @property
    def kind(self) -> str:
        return self.refused.kind

    @property
    def target(self) -> str:
        return self.refused.target


@dataclass(frozen=True)
class Decision:
    """An answer (one of `ANSWERS`), who gave it ("person", "policy", "nobody") and why, for a denial."""

    answer: str
    by: str
    reason: str = ""


def check_policy(policy: Any) -> Any:
    """`policy` if it is "ask", "deny" or a callable; else a `ValueError` of one line."""
    if callable(policy) or (isinstance(policy, str) and policy in POLICIES):
        return policy
    raise ValueError(f'on_permission takes "ask", "deny" or a callable(ask) -> "once" | "run" | "deny", got {policy!r}')


def decide(policy: Any, gates: RunGates, ask: PermissionAsk) -> Decision:
    """The answer to `ask` under `policy`; only a person's answer can wait (on the gates, until Stop)."""
    if policy == "deny":
        return Decision("deny", "policy", 'the run\'s policy is on_permission="deny"')
    if callable(policy):
        return _callable_decision(policy, ask)
    if gates.can_ask_person():
        return Decision(gates.ask_permission(ask.step, ask.refused), "person")
    if terminal_available():
        return Decision(_ask_on_terminal(gates, ask), "person")
    return Decision("deny", "nobody", "nobody could be asked (no widget shows this run and stdin is no terminal)")


def _callable_decision(policy: Callable[[PermissionAsk], Any], ask: PermissionAsk) -> Decision:
    try:
        answer = policy(ask)
    except Exception as failure:  # the user's function: its failure is a denial, said in the step
        return Decision("deny", "policy", f"on_permission raised {type(failure).__name__}: {failure}")
    if isinstance(answer, str) and answer in ANSWERS:
        return Decision(answer, "policy")
    return Decision("deny", "policy", f"on_permission answered {answer!r}, not one of {', '.join(ANSWERS)}")


def terminal_available() -> bool:
    """A person can answer on the terminal: stdin is a TTY and the run is on the main thread (never a thread's
    hang on a prompt nobody sees)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    try:
        return bool(sys.stdin is not None and sys.stdin.isatty())
    except (AttributeError, ValueError, OSError):  # a closed or replaced stdin
        return False


def _ask_on_terminal(gates: RunGates, ask: PermissionAsk) -> str:
    """Ask on the terminal: "a" allows once, "r" for the run, "d" denies (anything else asks again, then denies)."""
    with gates.waiting_for_person(ask.step, ask.refused):
        for _ in range(_TERMINAL_TRIES):
            print(f"{ask.text}. Allow once [a], allow for this run [r], or deny [d]? ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:  # end of input
                break
            answer = _TERMINAL_KEYS.get(line.strip().lower()[:1])
            if answer:
                return answer
    return "deny"


class RunPermissions:
    """The run's policy, the grants held until the run ends, and what a person denied in this run."""

    def __init__(self, policy: Any = "ask") -> None:
        self.policy = check_policy(policy)
        self.held: list[Grant] = []  # "run" grants the executor holds now
        self.denied: set[tuple[str, str]] = set()  # (kind, target) denied in this run: not asked again

    def end_run(self, executor: Any) -> None:
        """The run ended: its "run" grants are revoked; what was denied may be asked again next run."""
        held, self.held = self.held, []
        self.denied.clear()
        _revoke_all(executor, held)


class StepAsks:
    """The asks of one step: `grant_refused(executor)` after a failed attempt, `finish()` when the step ends."""

    def __init__(self, run: RunPermissions, gates: RunGates, step_number: int) -> None:
        self.run = run
        self.gates = gates
        self.step_number = step_number
        self.records: list[dict[str, Any]] = []
        self.notes: list[str] = []  # for the step's error: what was denied or never granted, and what to do
        self._once: list[Grant] = []
        self._asked = 0
        self._granted: set[tuple[str, str]] = set()

    def grant_refused(self, executor: Any) -> bool:
        """Ask about what the last call was refused and grant it; True when all was granted (run the code again)."""
        refusals = [r for r in getattr(executor, "last_refusals", None) or [] if isinstance(r, RefusedCapability)]
        never = [r for r in refusals if not r.grantable]
        if never:  # the code would be refused again whatever a person said: nobody is asked
            for refused in never:
                self._record(refused, Decision("never", "sandbox", refused.reason))
                why = f" ({refused.reason})" if refused.reason else ""
                self.notes.append(
                    f"The sandbox never grants permission to {refused.describe()}{why}. {_do_without(refused)}"
                )
            return False
        granted = False
        for refused in refusals:
            if not self._grant(executor, refused):
                return False
            granted = True
        return granted

    def _grant(self, executor: Any, refused: RefusedCapability) -> bool:
        key = (refused.kind, refused.target)
        if key in self._granted:  # allowed, and still refused: asking again would not help
            self.notes.append(f"Permission to {refused.describe()} was granted, and the code was still refused it.")
            return False
        if key in self.run.denied:
            self.notes.append(
                f"A person denied permission to {refused.describe()} earlier in this run. {_do_without(refused)}"
            )
            return False
        if self._asked >= MAX_ASKS_PER_STEP:
            self.notes.append(
                f"The step asked {MAX_ASKS_PER_STEP} times already, so {refused.describe()} was not asked for."
            )
            return False
        self._asked += 1
        decision = decide(
            self.run.policy, self.gates, PermissionAsk(self.step_number, refused, ask_text(self.step_number, refused))
        )
        if decision.answer == "deny":
            self._record(refused, decision)
            if decision.by == "person":
                self.run.denied.add(key)
            self.notes.append(_denial(refused, decision))
            return False
        try:
            grant = executor.grant(refused, decision.answer)
        except Exception as failure:  # e.g. the local executor, which has no confinement to widen
            self._record(refused, decision, error=f"{type(failure).__name__}: {failure}")
            self.notes.append(f"Permission to {refused.describe()} was allowed but could not be granted: {failure}")
            return False
        self._record(refused, decision, grant=grant)
        self._granted.add(key)
        (self._once if decision.answer == "once" else self.run.held).append(grant)
        return True

    def _record(
        self, refused: RefusedCapability, decision: Decision, grant: Grant | None = None, error: str = ""
    ) -> None:
        entry: dict[str, Any] = {
            "kind": refused.kind,
            "target": refused.target,
            "answer": decision.answer,
            "scope": decision.answer if decision.answer in ("once", "run") and grant is not None else None,
            "by": decision.by,
        }
        if refused.detail:
            entry["detail"] = refused.detail  # what a variable is (str, 14 chars), never its value
        if decision.reason:
            entry["reason"] = decision.reason
        if grant is not None and grant.target != refused.target:
            entry["granted"] = grant.target  # e.g. the nearest existing folder of a file to be created
        if getattr(grant, "note", ""):  # what the grant did beyond the question's words (the executor says)
            entry["note"] = grant.note  # type: ignore[union-attr]
        if error:
            entry["error"] = error
        self.records.append(entry)

    def rewound(self, note: str) -> None:
        """Say on the last record what rewinding the failed attempt restored (or could not)."""
        if note and self.records:
            self.records[-1]["rewound"] = note

    def error_note(self) -> str:
        """What the step's error adds: the denials and what the model should do instead."""
        return "\n".join(self.notes)

    def finish(self, executor: Any) -> list[dict[str, Any]] | None:
        """The step ended: its "once" grants are revoked; returns what it records (None: nothing was refused)."""
        once, self._once = self._once, []
        _revoke_all(executor, once)
        return list(self.records) or None


def grants_of(steps: list[Any]) -> list[Grant]:
    """The grants recorded on `steps` (a memory's, saved or live), in order."""
    grants = []
    for step in steps:
        for entry in getattr(step, "permissions", None) or []:
            if entry.get("scope") in ("once", "run"):
                said = {"note": entry["note"]} if entry.get("note") else {}
                grants.append(Grant(entry["kind"], entry.get("granted") or entry["target"], entry["scope"], **said))
    return grants


def _revoke_all(executor: Any, grants: list[Grant]) -> None:
    revoke = getattr(executor, "revoke", None)
    for grant in grants:
        try:
            revoke(grant)  # type: ignore[misc]
        except Exception:  # a worker already gone holds no grant; never fail a run's end on it
            pass


def _denial(refused: RefusedCapability, decision: Decision) -> str:
    if decision.by == "person":
        said = f"A person denied permission to {refused.describe()}."
    elif decision.by == "nobody":
        said = f"Permission to {refused.describe()} was denied: {decision.reason}."
    else:
        why = f" ({decision.reason})" if decision.reason else ""
        said = f"The run's permission policy (on_permission) denied permission to {refused.describe()}{why}."
    return f"{said} {_do_without(refused)}"


def _do_without(refused: RefusedCapability) -> str:
    return f"Do without it: {_INSTEAD.get(refused.kind, 'use what you already have')}."
