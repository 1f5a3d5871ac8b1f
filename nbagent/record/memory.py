"""`AgentMemory`: the system prompt and the steps of an agent — the record that is persisted and replayed.

Memory is what is persisted, replayed and rendered; events (see `events.py`)
are only the news of it. `AgentMemory.save(path)` writes one JSON file plus a
folder of PNG images next to it; `AgentMemory.load(path)` reads them back into
equal steps. In a notebook the memory displays as the step widget: the package
root registers that display with IPython by type name, so the record never
imports the notebook layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbagent.models.base import ChatMessage, TokenUsage

from .steps import ActionStep, MemoryStep, SystemPromptStep

__all__ = ["AgentMemory"]


class AgentMemory:
    """The system prompt and the list of steps of an agent."""

    def __init__(self, system_prompt: str = "") -> None:
        self.system_prompt = SystemPromptStep(system_prompt=system_prompt)
        self.steps: list[MemoryStep] = []

    def reset(self) -> None:
        self.steps = []

    def get_succinct_steps(self) -> list[dict[str, Any]]:
        return [{k: v for k, v in step.dict().items() if k != "model_input_messages"} for step in self.steps]

    def get_full_steps(self) -> list[dict[str, Any]]:
        return [step.dict() for step in self.steps]

    def write_memory_to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        messages = self.system_prompt.to_messages(summary_mode=summary_mode)
        for step in self.steps:
            messages.extend(step.to_messages(summary_mode=summary_mode))
        return messages

    def return_full_code(self) -> str:
        return "\n\n".join(step.code_action for step in self.steps if isinstance(step, ActionStep) and step.code_action)

    def replay(self, logger: Any = None, detailed: bool = False) -> None:
        """Print the run step by step (model output, code, observations, errors, images, tokens, time)."""
        from nbagent.views.console import replay_memory  # the one allowed upward import (smolagents API)

        replay_memory(self, console=getattr(logger, "console", None), detailed=detailed)

    def action_steps(self) -> list[ActionStep]:
        return [step for step in self.steps if isinstance(step, ActionStep)]

    def total_token_usage(self) -> TokenUsage:
        total = TokenUsage()
        for step in self.steps:
            total = total + getattr(step, "token_usage", None)
        return total

    # Persistence -----------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the memory to `path` (JSON) and its images to `<path stem>_images/`."""
        from .persist import save_memory

        return save_memory(self, Path(path))

    @classmethod
    def load(cls, path: str | Path) -> AgentMemory:
        from .persist import load_memory

        memory = cls()
        memory.system_prompt, memory.steps = load_memory(Path(path))
        return memory

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentMemory):
            return NotImplemented
        from .persist import memories_equal

        return memories_equal(self, other)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by content

    def __repr__(self) -> str:
        return f"AgentMemory({len(self.steps)} steps)"
