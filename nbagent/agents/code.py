"""`CodeAgent`: the public agent whose actions are Python code, run in nbagent's sandbox."""

from __future__ import annotations

from nbagent.loop import CodeLoop

from .base import MultiStepAgent

__all__ = ["CodeAgent"]


class CodeAgent(CodeLoop, MultiStepAgent):
    """An agent whose actions are Python code blocks, run natively in nbagent's sandbox.

    Args (beyond `MultiStepAgent`'s):
        additional_authorized_imports: modules the code may import (`"pandas"`, `"numpy.*"`, `"*"`).
        max_print_outputs_length: cap on the printed output kept per step.
        executor_kwargs: passed to the executor (e.g. `timeout_seconds`).
        namespace: the dict the code runs in, e.g. a notebook's `get_ipython().user_ns`;
            what the code defines stays there. Default: a private dict.
        executor_type: "local" (nbagent's sandbox in this process).
    """
