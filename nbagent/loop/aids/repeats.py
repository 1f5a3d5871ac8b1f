"""The same failing code is not run a third time.

A small model that gets one error can write the same code again and again (measured: steps 7-9 of a
20-minute run sent identical code for one `KeyError`); a note that it "ran this same code before" did not
change that. So, by the task's action steps so far:

* code that just failed once and is sent again runs, and its error says a third try will not run;
* code the same as the code that just failed twice in a row is not run: the model is told so, with the
  error it got and what exists to work with instead (the frames and their columns, the other variables);
* that same code sent once more after that ends the run (`RunStuck`): going on would repeat it forever.

"The same" is compared after normalising whitespace (`same_code`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from nbagent.errors import AgentRepeatedCodeError, RunStuck
from nbagent.record import ActionStep
from nbagent.text import Truncation, truncate

from .data_card import data_frames, shown_columns

__all__ = ["Repeat", "repeat_of", "same_code", "refusal", "ending", "AGAIN_NOTE"]

AGAIN_NOTE = (
    "This is the same code as your last step, and it failed again. The same code will not be run a third "
    "time: change the line that fails."
)
_SPACES = re.compile(r"\s+")
_AROUND_PUNCTUATION = re.compile(r" ?([^\w\s]) ?")
_MAX_NAMES = 8
_ERROR_LINE = Truncation(200)


class Repeat(Enum):
    """What the code of a step repeats of the steps just before it."""

    NEW = "new"  # not the code that just failed
    AGAIN = "again"  # the code that just failed once: it runs, and is told a third time will not
    REFUSE = "refuse"  # the code that just failed twice in a row: not run
    END = "end"  # the code just refused, sent once more: the run ends


def normalized(code: str) -> str:
    """`code` with runs of whitespace as one space and no space around punctuation: `df[ "a" ]` is `df["a"]`."""
    return _AROUND_PUNCTUATION.sub(r"\1", _SPACES.sub(" ", code).strip())


def same_code(first: str | None, second: str | None) -> bool:
    return first is not None and second is not None and normalized(first) == normalized(second)


def repeat_of(code: str, actions: Sequence[ActionStep], failed: Callable[[ActionStep], bool]) -> Repeat:
    """How `code` repeats the last steps of `actions` (the task's action steps, oldest first).

    `failed(step)`: the step's code failed (ran and raised, or was refused by a check).
    """
    if actions and isinstance(actions[-1].error, AgentRepeatedCodeError) and same_code(actions[-1].code_action, code):
        return Repeat.END
    streak = 0
    for step in reversed(actions):
        if not (same_code(step.code_action, code) and failed(step)):
            break
        streak += 1
    return Repeat.REFUSE if streak >= 2 else Repeat.AGAIN if streak == 1 else Repeat.NEW


def refusal(actions: Sequence[ActionStep], namespace: dict[str, Any]) -> AgentRepeatedCodeError:
    """The error of a step whose code was not run: what failed twice, and what exists to use instead."""
    last, before = str(actions[-1].error), str(actions[-2].error) if len(actions) > 1 else ""
    error = _error_line(last)
    differs = _error_line(before) if before and _error_line(before) != error else ""
    got = f"it failed with {error} (the time before: {differs})" if differs else f"it failed both times with {error}"
    hints = _hints(last)
    exists = [line for line in _what_exists(namespace) if not any(line in hint for hint in hints)]
    lines = [
        f"Not run: this code is the same as the code of your last two steps, and {got}. "
        "Running it again would fail the same way.",
        *hints,
        *exists,
        f"Write different code: change the line that fails{_failing_line(last)}. If you send this same code "
        "again, the run ends.",
    ]
    return AgentRepeatedCodeError("\n".join(lines))


def ending(actions: Sequence[ActionStep]) -> RunStuck:
    """The end of a run whose model sent the refused code again."""
    error = _error_line(str(actions[-2].error)) if len(actions) > 1 else "an error"
    return RunStuck(
        "The run ended: the model sent the same code again after it was told that this code, which failed with "
        f"{error} twice in a row, would not be run. Ask again with more detail (e.g. the columns to use), "
        "or try another model."
    )


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
