"""The record of a run: memory steps with smolagents' field names, and `AgentMemory`.

Memory is what is persisted, replayed and rendered; events (see `events.py`)
are only the news of it. `AgentMemory.save(path)` writes one JSON file plus a
folder of PNG images next to it; `AgentMemory.load(path)` reads them back into
equal steps.
"""

from __future__ import annotations

import io
import json
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbagent.models.base import ChatMessage, MessageRole, TokenUsage

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "Timing",
    "ToolCall",
    "MemoryStep",
    "TaskStep",
    "SystemPromptStep",
    "PlanningStep",
    "ActionStep",
    "FinalAnswerStep",
    "AgentMemory",
    "MEMORY_FORMAT_VERSION",
    "is_image",
]

MEMORY_FORMAT_VERSION = 1


@dataclass
class Timing:
    start_time: float = field(default_factory=time.time)
    end_time: float | None = None

    @property
    def duration(self) -> float | None:
        return None if self.end_time is None else self.end_time - self.start_time

    def dict(self) -> dict[str, Any]:
        return {"start_time": self.start_time, "end_time": self.end_time, "duration": self.duration}


@dataclass
class ToolCall:
    name: str
    arguments: Any
    id: str

    def dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class MemoryStep:
    def dict(self) -> dict[str, Any]:
        return {f.name: _to_plain(getattr(self, f.name)) for f in fields(self)}

    def to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        raise NotImplementedError


def _to_plain(value: Any) -> Any:
    if hasattr(value, "dict") and callable(value.dict):
        return value.dict()
    if isinstance(value, list):
        return [_to_plain(v) for v in value]
    if is_image(value):
        return "<image>"
    return value


def is_image(value: Any) -> bool:
    """True for PIL images and AgentImage (checked by name: PIL stays an optional import)."""
    return type(value).__module__.startswith("PIL.") or type(value).__name__ == "AgentImage"


def _text_message(role: MessageRole, text: str) -> ChatMessage:
    return ChatMessage(role=role, content=[{"type": "text", "text": text}])


def _image_parts(images: list[Image] | None) -> list[dict[str, Any]]:
    return [{"type": "image", "image": image} for image in images or []]


@dataclass
class TaskStep(MemoryStep):
    task: str
    task_images: list[Image] | None = None

    def to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        content = [{"type": "text", "text": f"New task:\n{self.task}"}, *_image_parts(self.task_images)]
        return [ChatMessage(role=MessageRole.USER, content=content)]


@dataclass
class SystemPromptStep(MemoryStep):
    system_prompt: str

    def to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        return [] if summary_mode else [_text_message(MessageRole.SYSTEM, self.system_prompt)]

    def __str__(self) -> str:
        return self.system_prompt


@dataclass
class PlanningStep(MemoryStep):
    model_input_messages: list[ChatMessage] = field(default_factory=list)
    model_output_message: ChatMessage | None = None
    plan: str = ""
    timing: Timing = field(default_factory=Timing)
    token_usage: TokenUsage | None = None

    def to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        if summary_mode:
            return []
        return [
            _text_message(MessageRole.ASSISTANT, self.plan.strip()),
            _text_message(MessageRole.USER, "Now proceed and carry out this plan."),
        ]


@dataclass
class ActionStep(MemoryStep):
    """One step of the ReAct loop.

    Unlike smolagents 1.26, `timing` has a default, so the documented
    `ActionStep(step_number=1, observations_images=[])` works.
    `code_action` is the code that ran; when a person edited it before it ran,
    `model_code_action` keeps what the model wrote.
    """

    step_number: int = 1
    timing: Timing = field(default_factory=Timing)
    model_input_messages: list[ChatMessage] | None = None
    tool_calls: list[ToolCall] | None = None
    error: Any = None  # an AgentError, or its message once loaded from disk
    model_output_message: ChatMessage | None = None
    model_output: str | list[dict[str, Any]] | None = None
    code_action: str | None = None
    model_code_action: str | None = None
    observations: str | None = None
    observations_images: list[Image] | None = None
    action_output: Any = None
    token_usage: TokenUsage | None = None
    is_final_answer: bool = False
    stopped: bool = False

    def to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        messages: list[ChatMessage] = []
        if self.model_output is not None and not summary_mode:
            text = self.model_output if isinstance(self.model_output, str) else str(self.model_output)
            if self.model_code_action is not None and self.code_action != self.model_code_action:
                text += f"\n(A person edited this code before it ran. The code that ran:)\n```python\n{self.code_action}\n```"
            messages.append(_text_message(MessageRole.ASSISTANT, text.strip()))
        if self.tool_calls is not None:
            calls = str([tc.dict() for tc in self.tool_calls])
            messages.append(_text_message(MessageRole.TOOL_CALL, f"Calling tools:\n{calls}"))
        if self.observations_images:
            messages.append(ChatMessage(role=MessageRole.USER, content=_image_parts(self.observations_images)))
        if self.observations is not None:
            messages.append(_text_message(MessageRole.TOOL_RESPONSE, f"Observation:\n{self.observations}"))
        if self.error is not None:
            note = (
                "Now let's retry: take care not to repeat previous errors! "
                "If you have retried several times, try a completely different approach.\n"
            )
            text = f"Error:\n{self.error}\n{note}"
            if self.tool_calls:
                text = f"Call id: {self.tool_calls[0].id}\n{text}"
            messages.append(_text_message(MessageRole.TOOL_RESPONSE, text))
        return messages


@dataclass
class FinalAnswerStep(MemoryStep):
    output: Any

    def to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        return []


STEP_TYPES: dict[str, type[MemoryStep]] = {
    cls.__name__: cls for cls in (TaskStep, SystemPromptStep, PlanningStep, ActionStep, FinalAnswerStep)
}


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
        return "\n\n".join(
            step.code_action for step in self.steps if isinstance(step, ActionStep) and step.code_action
        )

    def replay(self, logger: Any = None, detailed: bool = False) -> None:
        """Print the run step by step (model output, code, observations, errors, images, tokens, time)."""
        from nbagent.console import replay_memory

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
        from nbagent.memory_io import save_memory

        return save_memory(self, Path(path))

    @classmethod
    def load(cls, path: str | Path) -> AgentMemory:
        from nbagent.memory_io import load_memory

        return load_memory(Path(path))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentMemory):
            return NotImplemented
        from nbagent.memory_io import memory_to_json

        return memory_to_json(self, None) == memory_to_json(other, None)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any] | None:
        from nbagent.views.display import memory_mimebundle

        return memory_mimebundle(self)

    def __repr__(self) -> str:
        return f"AgentMemory({len(self.steps)} steps)"


def image_to_png(image: Any) -> bytes:
    """PNG bytes of a PIL image or AgentImage."""
    pil = image.to_raw() if hasattr(image, "to_raw") else image
    buffer = io.BytesIO()
    pil.save(buffer, format="PNG")
    return buffer.getvalue()


def json_dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, default=repr)
