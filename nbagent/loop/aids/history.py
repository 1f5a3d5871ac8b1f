"""What a small model reads at a step: the memory's messages, compacted, failed attempts said in one line.

A 1.5B model copies what its prompt shows it: a failed attempt kept whole is what it writes next, and the
"Calling tools:" repeat of its own code (a Python-repr'd string full of escapes) only costs context.
"""

from __future__ import annotations

import re
from typing import Any

from nbagent.models.base import ChatMessage, MessageRole
from nbagent.record import ActionStep
from nbagent.text import Truncation, truncate

__all__ = ["small_model_messages", "compact_step_messages", "text_message"]


def small_model_messages(memory: Any) -> list[ChatMessage]:
    """What a small model reads at a step: the memory's messages, compacted, with earlier failed steps
    shortened to one line each (the failing line and the error).

    The latest step stays whole, so the model can fix the line its error names. A failed attempt
    kept whole in the prompt is what a 1.5B model copies next (measured: the same failing block
    written four times in a row); one line of what failed is enough to avoid it.
    """
    steps = list(memory.steps)
    last = max((i for i, step in enumerate(steps) if isinstance(step, ActionStep)), default=-1)
    messages = list(memory.system_prompt.to_messages())
    for index, step in enumerate(steps):
        if isinstance(step, ActionStep) and step.error is not None and index != last and not step.stopped:
            messages.append(text_message(MessageRole.USER, _failed_step_note(step)))
        else:
            messages.extend(step.to_messages())
    return compact_step_messages(messages)


def _failed_step_note(step: ActionStep) -> str:
    lines = [line.strip() for line in str(step.error).splitlines() if line.strip()]
    if len(lines) >= 3 and lines[0].startswith("Error on line"):
        what = f"`{lines[1]}` raised {lines[2]}"
    else:
        what = truncate(lines[0] if lines else "an error", _NOTE)
    return f"(Your step {step.step_number} failed: {what}. That attempt is not shown again; do not repeat it.)"


def compact_step_messages(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The step messages with what a small model does not need: the "Calling tools:" repeat of the code
    it wrote just above (as a Python-repr'd string full of escapes), empty observations, and call ids.
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
        elif _CALL_ID.match(text):
            compact.append(text_message(message.role, _CALL_ID.sub("", text, count=1)))
        else:
            compact.append(message)
    return compact


_NOTE = Truncation(200)
_CALL_ID = re.compile(r"Call id: [^\n]*\n")


def text_message(role: MessageRole, text: str) -> ChatMessage:
    return ChatMessage(role=role, content=[{"type": "text", "text": text}])
