"""What a small model reads at a step: the memory's messages, compacted, failed attempts said in one line;
after failures in a row, a clean slate.

A 1.5B model copies what its prompt shows it: a failed attempt kept whole is what it writes next, and the
"Calling tools:" repeat of its own code (a Python-repr'd string full of escapes) only costs context. After
`CLEAN_SLATE_AFTER` failures in a row it reads the task again as if from the start — the task with its data
card, the variables its steps that worked made, and one line on what failed and why — not a growing list of
errors (`clean_slate`).

Measured (Qwen2.5-Coder-1.5B, 10 messy benchmark questions that fail or loop, 6 steps each, the repeat breaker
on in both): solved 1/10 either way; of the steps taken after two failures in a row, 6 of 14 repeated an earlier
failing attempt with the history kept (9 questions logged; 3 refused as repeats, one run ended stuck on them)
and 2 of 13 with the clean slate (none refused). The clean slate is the default.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from nbagent.models.base import ChatMessage, MessageRole
from nbagent.record import ActionStep, TaskStep
from nbagent.text import Truncation, truncate

from .cleaned_program import ran_in_place
from .data_card import card_first
from .repeats import same_code, same_failures

__all__ = ["small_model_messages", "clean_slate", "compact_step_messages", "text_message", "CLEAN_SLATE_AFTER"]

CLEAN_SLATE_AFTER = 2  # failed steps in a row after which a small model reads a clean slate
# the note ends with what to write: left to guess after two notes of the user's, the default model once wrote the
# task out again, as the start of a new example
_IN_PLACE_THOUGHT = "Thought: I run the code nbagent offered: my code on the data cleaned first."
_GO_ON = "Now write your next step for this task: your reasoning after 'Thought:', then the code."


def small_model_messages(memory: Any, failed: Callable[[ActionStep], bool] | None = None) -> list[ChatMessage]:
    """What a small model reads at a step: the memory's messages, compacted, with earlier failed steps
    shortened to one line each (the failing line and the error) — or, after `CLEAN_SLATE_AFTER` failed steps
    in a row of the current task, its clean slate (`clean_slate`).

    `failed(step)`: the step counts as a failure for the clean slate (default: any error but a stop).
    The latest step stays whole, so the model can fix the line its error names. A failed attempt
    kept whole in the prompt is what a 1.5B model copies next (measured: the same failing block
    written four times in a row); one line of what failed is enough to avoid it.
    """
    failed = failed or _errored
    steps = list(memory.steps)
    start = max((i for i, step in enumerate(steps) if isinstance(step, TaskStep)), default=0)
    actions = [step for step in steps[start:] if isinstance(step, ActionStep)]
    if CLEAN_SLATE_AFTER and _failures_in_a_row(actions, failed) >= CLEAN_SLATE_AFTER:
        return clean_slate(memory, failed)
    last = max((i for i, step in enumerate(steps) if isinstance(step, ActionStep)), default=-1)
    return compact_step_messages(list(memory.system_prompt.to_messages()) + _step_messages(steps, last))


def clean_slate(memory: Any, failed: Callable[[ActionStep], bool]) -> list[ChatMessage]:
    """The current task as if from its start: the system prompt, the earlier tasks as usual, the task (with its
    data card), then one note: the variables made by its steps that worked, and what failed last and why.

    The failed attempts themselves are left out: a small model that reads its errors piling up writes
    variations of them.
    """
    steps = list(memory.steps)
    start = max((i for i, step in enumerate(steps) if isinstance(step, TaskStep)), default=0)
    before = _step_messages(steps[:start], -1)
    task = [message for step in steps[start:] if not isinstance(step, ActionStep) for message in _said_by_whom(step)]
    actions = [step for step in steps[start:] if isinstance(step, ActionStep)]
    note = text_message(MessageRole.USER, slate_note(actions, failed))
    return compact_step_messages([*memory.system_prompt.to_messages(), *before, *task, note])


def slate_note(actions: list[ActionStep], failed: Callable[[ActionStep], bool]) -> str:
    """The note of a clean slate: what still holds, and one line on what failed and why."""
    tries = _failures_in_a_row(actions, failed)
    lines = [f"(Your last {tries} attempts at this task failed; they are not shown again. Start afresh.)"]
    made = _variables_made(actions, failed)
    if made:
        lines.append("Variables your steps that worked made, which you can use: " + ", ".join(made) + ".")
    lines.append(_last_failure(actions, failed))
    lines.append(_GO_ON)
    return "\n".join(lines)


def _errored(step: ActionStep) -> bool:
    return step.error is not None and not step.stopped


def _failures_in_a_row(actions: list[ActionStep], failed: Callable[[ActionStep], bool]) -> int:
    count = 0
    for step in reversed(actions):
        if not failed(step):
            break
        count += 1
    return count


def _variables_made(actions: list[ActionStep], failed: Callable[[ActionStep], bool]) -> list[str]:
    """ "`name` (type)" for each name a step that worked created, rebound or changed, and no step deleted since."""
    made: dict[str, str] = {}
    for step in actions:
        for change in step.namespace_changes or []:
            name, kind = str(change.get("name", "")), change.get("change")
            if kind == "deleted":
                made.pop(name, None)
            elif name and not failed(step):
                made.pop(name, None)  # said in the order last made
                detail = str(change.get("detail") or "") if kind == "modified" else ""
                what = ", ".join(
                    part for part in (str(change.get("type") or ""), detail and f"changed: {detail}") if part
                )
                made[name] = f"`{name}` ({what})" if what else f"`{name}`"
    return list(made.values())[-_MAX_VARIABLES:]


def _last_failure(actions: list[ActionStep], failed: Callable[[ActionStep], bool]) -> str:
    """One line: the last failure (for code refused as a repeat, the step it repeated), its error and its hint."""
    last = actions[-1]
    step, repeated = last, ""
    if _not_run(last):
        earlier = [s for s in actions[:-1] if s.code_action and same_code(s.code_action, last.code_action)]
        earlier = [s for s in earlier if not _not_run(s)]
        if earlier:
            step = earlier[-1]
            repeated = f" (step {last.step_number} sent that same code again; it was not run)"
    message = str(step.error)
    before = actions[: next(index for index, each in enumerate(actions) if each is step)]
    times = len(same_failures(message, before, failed)) + 1
    again = f" — {times} times in a row with other code" if times > 1 else ""
    hint = next((line.strip() for line in message.splitlines() if line.strip().startswith("Hint:")), "")
    said = f"The last failure: step {step.step_number}: {_what_failed(message)}{again}{repeated}."
    return truncate(f"{said} {hint}".strip(), _LINE)


def _not_run(step: ActionStep) -> bool:
    return str(step.error).startswith("Not run:")


def _what_failed(message: str) -> str:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) >= 3 and lines[0].startswith("Error on line"):
        return f"`{truncate(lines[1], _NOTE)}` raised {truncate(lines[2], _NOTE)}"
    return truncate(lines[0] if lines else "an error", _NOTE)


def _step_messages(steps: list[Any], last: int) -> list[ChatMessage]:
    """The steps' messages, each failed action step but the one at index `last` in one line."""
    messages: list[ChatMessage] = []
    for index, step in enumerate(steps):
        if isinstance(step, ActionStep) and step.error is not None and index != last and not step.stopped:
            messages.append(text_message(MessageRole.USER, _failed_step_note(step)))
        else:
            messages.extend(_said_by_whom(step))
    return messages


def _said_by_whom(step: Any) -> list[ChatMessage]:
    """A step's messages; a step nbagent ran in the model's place (`ran_in_place`) read as a turn in the model's own
    form, "Thought:" then the code, that says whose code it was. Shown its recorded reply (nbagent's words) as its
    own turn, the 1.5B model copied those words, and that code, into its next three replies; shown it as said to it,
    it left its form and wrote "Step 1:" and a filter nobody asked for."""
    if isinstance(step, TaskStep):
        return _task_messages(step)
    messages = step.to_messages()
    if isinstance(step, ActionStep) and ran_in_place(step) and messages and messages[0].role == MessageRole.ASSISTANT:
        messages[0] = text_message(MessageRole.ASSISTANT, f"{_IN_PLACE_THOUGHT}\n```python\n{step.code_action}\n```")
    return messages


def _task_messages(step: TaskStep) -> list[ChatMessage]:
    """The task as the model reads it: its data card first (`card_first`), the same prompt start at every question
    about the same frames, which a local model computes once."""
    return TaskStep(task=card_first(step.task), task_images=step.task_images).to_messages()


def _failed_step_note(step: ActionStep) -> str:
    lines = [line.strip() for line in str(step.error).splitlines() if line.strip()]
    if len(lines) >= 3 and lines[0].startswith("Error on line"):
        what = f"`{lines[1]}` raised {lines[2]}"
    else:
        what = truncate(lines[0] if lines else "an error", _NOTE)
    return f"(Your step {step.step_number} failed: {what}. That attempt is not shown again; do not repeat it.)"


def compact_step_messages(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The step messages with what a small model does not need: the "Calling tools:" repeat of the code
    it wrote just above (as a Python-repr'd string full of escapes), empty observations, call ids, and the middle
    of a long observation (a dict of dicts printed as the output of a refused answer took a 1.5B model's
    conversation to 14,590 tokens, past its 8,192-token window).
    """
    compact = []
    for message in messages:
        text = message.text if message.role in (MessageRole.TOOL_CALL, MessageRole.TOOL_RESPONSE) else None
        if text is None:
            compact.append(message)
        elif message.role == MessageRole.TOOL_CALL and text.startswith("Calling tools:"):
            continue
        elif text.strip() == "Observation:":
            continue
        elif _CALL_ID.match(text) or len(text) > _MOST_OBSERVED:
            compact.append(text_message(message.role, _middle_cut(_CALL_ID.sub("", text, count=1))))
        else:
            compact.append(message)
    return compact


def _middle_cut(text: str) -> str:
    """`text` without its middle when longer than `_MOST_OBSERVED` (the start of an output and the error or
    refusal at its end are what the model needs)."""
    if len(text) <= _MOST_OBSERVED:
        return text
    half = _MOST_OBSERVED // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters left out …]\n{text[-half:]}"


_MOST_OBSERVED = 3_000  # characters of one observation a small model reads (about 1,000 tokens)
_NOTE = Truncation(200)
_LINE = Truncation(600)
_MAX_VARIABLES = 12
_CALL_ID = re.compile(r"Call id: [^\n]*\n")


def text_message(role: MessageRole, text: str) -> ChatMessage:
    return ChatMessage(role=role, content=[{"type": "text", "text": text}])
