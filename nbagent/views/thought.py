"""The model's thought: its text without the code blocks a view shows separately as the step's code.

One definition for every view — the console, the static HTML, gradio messages — and
`js/step.js`'s `thoughtText` for the widget (tests/views/test_parity.py keeps the two equal).
Code blocks that are not the step's code (an example the model quoted) stay in the thought.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["thought_text", "step_thought"]

# A fenced block with any language tag, or a <code> block: the same expression as js/step.js.
CODE_BLOCK = re.compile(r"```[\w+-]*[ \t]*\n([\s\S]*?)\n?```|<code>\n?([\s\S]*?)\n?</code>", re.ASCII)  # \w as in JS


def thought_text(text: str | None, codes: Iterable[str | None]) -> str:
    """`text` without the code blocks whose body is one of `codes` (the code that ran, the code the model wrote)."""
    if not text:
        return ""
    known = {code.strip() for code in codes if code}
    if not known:
        return text

    def drop(match: re.Match[str]) -> str:
        body = match.group(1) if match.group(1) is not None else match.group(2) or ""
        return "" if body.strip() in known else match.group(0)

    return CODE_BLOCK.sub(drop, text).strip()


def step_thought(step: Any) -> str:
    """The thought of an ActionStep: its model output without the code that ran (or that the model wrote)."""
    output = step.model_output
    text = output if isinstance(output, str) else str(output or "")
    return thought_text(text, (step.code_action, step.model_code_action))
