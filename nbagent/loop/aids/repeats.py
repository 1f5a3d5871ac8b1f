"""Loops broken by what they are: failing code sent again, and the same failure in other shapes.

A small model that gets one error can write the same code again and again (measured: steps 7-9 of a
20-minute run sent identical code for one `KeyError`), alternate two failing attempts (a merge on "rep",
then on "name", then on "rep" …; `.str.replace('$', '')` then `.str.replace(',', '')`, each failing on
the other character), or fail four times on one value written four ways (`astype(float)` on '-$18.46'). A
note that it "ran this same code before" did not change that. So, by the task's action steps so far:

* code that just failed once and is sent again runs, and its error says a third try will not run;
* code the same as the code that just failed twice in a row is not run (`Repeat.REFUSE`);
* code the same as any earlier failing attempt of the task is not run either (`Repeat.CYCLE`): the model
  is told which step it repeats and the error that step got, and what exists to work with instead — as
  long as that failure still holds: no later step changed a name its code uses (a step that defines the
  missing variable makes the old code worth running again);
* code the same as the last step's code, which ran without error, printed nothing, did not answer and does
  not move a value on (`x += 1`), is not run either (`Repeat.DONE`): it already did its work (measured: one `pd.to_datetime` line sent in 8 steps
  in a row, each converting the column again, until the step limit), so the model is told what that step
  made and to write the code for the rest of the task; so is code that ran twice apart and printed the same
  both times, when no other step since changed what it reads (a model's code and nbagent's offer alternating);
* code refused so, sent once more, ends the run (`RunStuck`): going on would repeat it forever;
* the same failure — the same exception naming the same key or value (`failure_signature`) — in several
  consecutive steps written differently is a loop too: its third time says so (`same_failure_note`), and a
  fourth ends the run (`same_failure_ending`).

"The same" code is compared after normalising whitespace (`same_code`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from nbagent.errors import AgentRepeatedCodeError, RunStuck
from nbagent.record import ActionStep
from nbagent.text import Truncation, truncate

from ..program.analysis import facts_of
from .bindings import root_name
from .data_card import data_frames, shown_columns

__all__ = [
    "Repeat",
    "repeat_of",
    "repeated_step",
    "same_code",
    "refusal",
    "done_refusal",
    "ending",
    "failure_signature",
    "same_failures",
    "same_failure_note",
    "same_failure_ending",
    "AGAIN_NOTE",
    "LOOP_FAILURES",
]

AGAIN_NOTE = (
    "This is the same code as your last step, and it failed again. The same code will not be run a third "
    "time: change the line that fails."
)
LOOP_FAILURES = 3  # the same failure this many times in a row is a loop, said; once more ends the run
_SPACES = re.compile(r"\s+")
_AROUND_PUNCTUATION = re.compile(r" ?([^\w\s]) ?")
_EXCEPTION = re.compile(r"(?:^|(?<=[\s:(]))([A-Za-z_][\w.]*(?:Error|Exception|Warning)):\s*")
_QUOTED = re.compile(r"""'([^']*)'|"([^"]*)\"""")
_NAME = re.compile(r"[A-Za-z_]\w*")
_MAX_NAMES = 8
_ERROR_LINE = Truncation(200)
_PRINTED = "Execution logs:"  # how a step's observation starts when its code printed (loop/code_step.py)


class Repeat(Enum):
    """What the code of a step repeats of the task's steps before it."""

    NEW = "new"  # not the code of a failure that still holds
    AGAIN = "again"  # the code that just failed once: it runs, and is told a third time will not
    REFUSE = "refuse"  # the code that just failed twice in a row: not run
    CYCLE = "cycle"  # the code of an earlier failing step (not the last one), whose failure still holds: not run
    DONE = "done"  # the code of the last step, which ran without error: it did its work already, not run
    END = "end"  # code refused before, sent once more: the run ends


def normalized(code: str) -> str:
    """`code` with runs of whitespace as one space and no space around punctuation: `df[ "a" ]` is `df["a"]`."""
    return _AROUND_PUNCTUATION.sub(r"\1", _SPACES.sub(" ", code).strip())


def same_code(first: str | None, second: str | None) -> bool:
    return first is not None and second is not None and normalized(first) == normalized(second)


def repeat_of(code: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]) -> Repeat:
    """How `code` repeats the steps of `actions` (the task's action steps, oldest first).

    `failed(step)`: the step's code failed (ran and raised, or was refused by a check).
    """
    if any(_refused(step) and same_code(step.code_action, code) for step in _holding(actions)):
        return Repeat.END
    if _just_ran(code, actions, failed):
        return Repeat.DONE
    streak = _streak(code, actions, failed)
    if streak:
        return Repeat.REFUSE if streak >= 2 else Repeat.AGAIN
    return Repeat.CYCLE if repeated_step(code, actions, failed) is not None else Repeat.NEW


def _just_ran(code: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]) -> ActionStep | None:
    """The last step with code, when its code is `code` and it ran without error and printed nothing, or printed
    what the same code printed the step before (code that prints shows something each time it runs: a model may
    mean to see it again, once; a 1.5B model ran one filter that printed 0 seven times in a row); else the step of
    `_ran_twice_apart`."""
    if _steps_a_value(code):
        return None
    ran = [step for step in actions if step.code_action]
    last = ran[-1] if ran else None
    if last is None or not _ran_clean(last, code, failed):
        return _ran_twice_apart(code, actions, failed)
    if _PRINTED not in (last.observations or ""):
        return last
    before = ran[-2] if len(ran) > 1 else None
    seen_twice = before is not None and _ran_clean(before, code, failed) and before.observations == last.observations
    return last if seen_twice else None


def _ran_twice_apart(
    code: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]
) -> ActionStep | None:
    """The later of the last two steps that ran `code` without error, apart, when both printed the same and no other
    step since the first changed a name the code reads before it binds it: a third run prints that again. The messy
    run alternated its own code and nbagent's offer, each printing what it printed two steps before, until the
    step limit."""
    runs = [index for index, step in enumerate(actions) if _ran_clean(step, code, failed)]
    if len(runs) < 2 or actions[runs[-2]].observations != actions[runs[-1]].observations:
        return None
    others = [step for step in actions[runs[-2] :] if not same_code(step.code_action, code)]
    changed = {change.get("name") for step in others for change in step.namespace_changes or []}
    return None if names_read_first(code) & changed else actions[runs[-1]]


def names_read_first(code: str) -> set[str]:
    """The names `code` reads before it binds them (what it takes from the steps before); every identifier for code
    that does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(_NAME.findall(code))
    bound: set[str] = set()
    read: set[str] = set()
    for statement in tree.body:
        facts = facts_of(statement)
        read |= facts.uses - bound
        bound |= facts.kills  # surely rebound: a name bound in one branch of an `if` may still come from before
    return read


def _ran_clean(step: ActionStep, code: str, failed: Callable[[ActionStep], bool]) -> bool:
    return step.error is None and not failed(step) and same_code(step.code_action, code)


def _steps_a_value(code: str) -> bool:
    """Code whose every run moves a value on (`x += 1`, `n = n + 1`): running it again is not the same work. A name
    the code itself made afresh first (`t = frame.sum()` then `t = t.apply(...)`) starts over at each run: the
    messy run sent such code six times in a row, each time drawing the same wrong chart."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    made: set[str] = set()
    for statement in tree.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.AugAssign) and root_name(node.target) not in made:
                return True
            if isinstance(node, ast.Assign):
                bound = {target.id for target in node.targets if isinstance(target, ast.Name)}
                read = {name.id for name in ast.walk(node.value) if isinstance(name, ast.Name)}
                if (bound & read) - made:
                    return True
        made |= {
            node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        }
    return False


def repeated_step(code: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]) -> ActionStep | None:
    """The latest step of `actions` whose code was `code` and failed, while that failure still holds, or None."""
    same = [step for step in _holding(actions) if failed(step) and same_code(step.code_action, code)]
    return same[-1] if same else None


def _streak(code: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]) -> int:
    """How many of the last steps, in a row, ran `code` and failed."""
    streak = 0
    for step in reversed(actions):
        if not (same_code(step.code_action, code) and failed(step)):
            break
        streak += 1
    return streak


def _holding(actions: Sequence[ActionStep]) -> list[ActionStep]:
    """The steps whose outcome still holds: no later step changed a name their code uses."""
    holding = []
    for index, step in enumerate(actions):
        used = names_used(step.code_action or "")
        later = {change.get("name") for after in actions[index + 1 :] for change in after.namespace_changes or []}
        if not used & later:
            holding.append(step)
    return holding


def names_used(code: str) -> set[str]:
    """The names `code` reads or binds (every identifier, for code that does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(_NAME.findall(code))
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _refused(step: ActionStep) -> bool:
    return isinstance(step.error, AgentRepeatedCodeError)


def refusal(
    code: str, actions: Sequence[ActionStep], namespace: dict[str, Any], failed: Callable[[ActionStep], bool]
) -> AgentRepeatedCodeError:
    """The error of a step whose code was not run: what it repeats and how that failed, and what exists to use
    instead."""
    if _streak(code, actions, failed) >= 2:
        last, before = str(actions[-1].error), str(actions[-2].error)
        error = _error_line(last)
        differs = _error_line(before) if _error_line(before) != error else ""
        got = (
            f"it failed with {error} (the time before: {differs})" if differs else f"it failed both times with {error}"
        )
        said = f"the same as the code of your last two steps, and {got}"
    else:
        step = repeated_step(code, actions, failed) or actions[-1]
        last = str(step.error)
        said = f"the same as the code of your step {step.step_number}, which failed with {_error_line(last)}"
    hints = _hints(last)
    exists = [line for line in _what_exists(namespace) if not any(line in hint for hint in hints)]
    lines = [
        f"Not run: this code is {said}. Running it again would fail the same way.",
        *hints,
        *exists,
        f"Write different code: change the line that fails{_failing_line(last)}. If you send this same code "
        "again, the run ends.",
    ]
    return AgentRepeatedCodeError("\n".join(lines))


def done_refusal(
    code: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]
) -> AgentRepeatedCodeError:
    """The error of a step whose code is the last step's code, which already ran without error."""
    step = _just_ran(code, actions, failed) or actions[-1]
    made = [change.get("name") for change in step.namespace_changes or [] if change.get("name")]
    did = f"; it made or changed {', '.join(f'`{name}`' for name in made[:_MAX_NAMES])}" if made else ""
    if _PRINTED in (step.observations or ""):
        did += " and printed the same twice"
    return AgentRepeatedCodeError(
        f"Not run: this code is the same as the code of your step {step.step_number}, which already ran without "
        f"error{did}. Running it again does nothing new. Use what it made: write the code for the rest of the task "
        "and end with final_answer(<the answer>). If you send this same code again, the run ends."
    )


def ending(code: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]) -> RunStuck:
    """The end of a run whose model sent refused code again."""
    step = repeated_step(code, actions, failed)
    what = f"which failed with {_error_line(str(step.error))}" if step is not None else "which had already run"
    return RunStuck(
        f"The run ended: the model sent the same code again after it was told that this code, {what}, would not "
        "be run. Ask again with more detail (e.g. the columns to use), or try another model."
    )


# ------------------------------------------------------------------------------ the same failure, other code


def failure_signature(message: str) -> str | None:
    """What makes two failures the same: the exception's type and the keys or values its message names.

    `ValueError: could not convert string to float: '-$18.46'` is "ValueError: '-$18.46'" whatever code
    raised it; `KeyError: 'rep'` is "KeyError: 'rep'". A message that quotes nothing is kept whole (without
    case or runs of spaces): `ZeroDivisionError: division by zero`. None for a message that names no exception
    (a refusal, an answer refused, code that could not be parsed). Of a chained message (`InterpreterError:
    Could not index x with 'a': KeyError: 'a'`) the last exception counts.
    """
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if lines and lines[0].startswith("Error on line"):
        lines = lines[2:]  # "Error on line N of the code:", the line itself, then the error
    for line in lines:
        found = list(_EXCEPTION.finditer(line))
        if found and found[0].start() == 0:  # a line that starts with the exception, not one that mentions it
            kind, text = found[-1].group(1).rsplit(".", 1)[-1], line[found[-1].end() :]
            quoted = [single or double for single, double in _QUOTED.findall(text)]
            named = ", ".join(repr(value) for value in quoted) if quoted else _SPACES.sub(" ", text).strip().lower()
            return f"{kind}: {named}"
    return None


def same_failures(
    message: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]
) -> list[ActionStep]:
    """The steps just before this failure (`message`) that failed the same way, in a row, oldest first.

    Steps whose code was refused (never run) are passed over; any other step ends the row.
    """
    signature = failure_signature(message)
    row: list[ActionStep] = []
    if signature is None:
        return row
    for step in reversed(actions):
        if _refused(step):
            continue
        if not (failed(step) and failure_signature(str(step.error)) == signature):
            break
        row.append(step)
    return row[::-1]


def same_failure_note(message: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]) -> str:
    """After the third failure in a row with the same error: that this is a loop, and that a fourth ends the run."""
    row = same_failures(message, actions, failed)
    if len(row) + 1 < LOOP_FAILURES:
        return ""
    steps = ", ".join(str(step.step_number) for step in row)
    return (
        f"Your steps {steps} failed with this same error ({_error_line(message)}): writing the code another way "
        "does not fix it. Look at the value the error names and deal with it first. If your next step fails "
        "this same way, the run ends."
    )


def same_failure_ending(
    message: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]
) -> RunStuck | None:
    """The end of a run whose steps failed the same way once more after they were told it is a loop, or None."""
    row = same_failures(message, actions, failed)
    if len(row) < LOOP_FAILURES:
        return None
    return RunStuck(
        f"The run ended: {len(row) + 1} steps in a row failed with {_error_line(message)}, each written another "
        "way, after the model was told the next such failure would end the run. Ask again with more detail "
        "(e.g. how to read the value the error names), or try another model."
    )


# ------------------------------------------------------------------------------------------ what is said


def _error_line(message: str) -> str:
    """The line of an error message that names the exception (`KeyError: 'value'`), else its first line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    named = [line for line in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Warning)\b", line)]
    return truncate((named or lines or ["an error"])[0], _ERROR_LINE)


def _failing_line(message: str) -> str:
    """ " (`line`)" for the line an executor error names ("Error on line N of the code:" then the line), or ""."""
    lines = message.splitlines()
    named = len(lines) > 1 and lines[0].startswith("Error on line") and lines[1].strip()
    return f" (`{truncate(lines[1].strip(), _ERROR_LINE)}`)" if named else ""


def _hints(message: str) -> list[str]:
    return [line.strip() for line in message.splitlines() if line.strip().startswith("Hint:")][:1]


def _what_exists(namespace: dict[str, Any]) -> list[str]:
    """The frames with their columns, then the names of the other variables (what working code can use)."""
    frames = data_frames(namespace)[:3]
    said = [f"`{name}` has the columns: {shown_columns(frame)}." for name, frame in frames]
    shown = {name for name, _ in frames} | ({"In", "Out"} if "_ih" in namespace else set())  # IPython's history
    others = [
        name
        for name, value in namespace.items()
        if name not in shown and not name.startswith("_") and not callable(value) and not _is_module(value)
    ]
    if others:
        extra = ", …" if len(others) > _MAX_NAMES else ""
        said.append("Other variables: " + ", ".join(f"`{name}`" for name in others[:_MAX_NAMES]) + extra + ".")
    return said


def _is_module(value: Any) -> bool:
    return type(value).__name__ == "module"
