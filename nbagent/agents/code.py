"""`CodeAgent`: the public agent whose actions are Python code, run in nbagent's sandbox."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from typing import Any

from nbagent.loop import CodeLoop
from nbagent.models import CODEAGENT_RESPONSE_FORMAT, ChatMessage
from nbagent.record import ActionStep

from .base import MultiStepAgent

__all__ = ["CodeAgent"]


class CodeAgent(CodeLoop, MultiStepAgent):
    """An agent whose actions are Python code blocks, run natively in nbagent's sandbox.

    Args (beyond `MultiStepAgent`'s):
        additional_authorized_imports: modules the code may import (`"pandas"`, `"numpy.*"`, `"*"`).
        max_print_outputs_length: cap on the printed output kept per step.
        executor_kwargs: passed to the executor (e.g. `timeout_seconds`); a `max_print_outputs_length`
            here wins over the argument of that name, as in smolagents.
        namespace: the dict the code runs in, e.g. a notebook's `get_ipython().user_ns`;
            what the code defines stays there. Default: a private dict.
        executor_type: "isolated" (a confined worker process; the default) or "local".
        on_permission: when the sandbox refuses the code a file, a host or the network: "ask" (the default:
            the widget or the terminal asks a person; nobody there, denied), "deny", or `f(ask) -> "once" |
            "run" | "deny"`. Allowed, the step's code runs again with the grant.
        stream_outputs: stream the model's text into `run(stream=True)` (smolagents' option).
        use_structured_outputs_internally: ask the model for JSON `{"thought", "code"}`
            (`CODEAGENT_RESPONSE_FORMAT`) at each action step. Unlike smolagents, the system prompt
            stays the usual one (it asks for a code block; the JSON schema decides the form).
    """

    def __init__(self, *args: Any, use_structured_outputs_internally: bool = False, **kwargs: Any) -> None:
        self._use_structured_outputs_internally = use_structured_outputs_internally
        self._in_action_step = False
        super().__init__(*args, **kwargs)

    def _step_stream(self, memory_step: ActionStep) -> Iterator[Any]:
        self._in_action_step = True
        try:
            yield from super()._step_stream(memory_step)
        finally:
            self._in_action_step = False

    def _generate(self, messages: list[ChatMessage], **kwargs: Any) -> Generator[Any, None, ChatMessage]:
        if not (self._use_structured_outputs_internally and self._in_action_step):
            return (yield from super()._generate(messages, **kwargs))
        kwargs["response_format"] = CODEAGENT_RESPONSE_FORMAT
        message = yield from super()._generate(messages, **kwargs)
        return _as_code_block(message)


def _as_code_block(message: ChatMessage) -> ChatMessage:
    """A structured answer `{"thought": ..., "code": ...}` rewritten as the thought and a code block,
    which the code step reads as usual. Text that is not that JSON is left as it is."""
    try:
        answer = json.loads(message.text)
        thought, code = answer.get("thought", ""), answer["code"]
    except (ValueError, TypeError, KeyError, AttributeError):
        return message
    if "```" not in code:
        code = f"```python\n{code}\n```"
    message.content = f"Thought: {thought}\n{code}".strip()
    return message
