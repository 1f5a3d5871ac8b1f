"""The steps of a run, with smolagents' field names: what memory holds and events carry."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from nbagent.media import is_image
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
    "STEP_TYPES",
    "MEMORY_FORMAT_VERSION",
    "CODE_TOOL_NAME",
]

# A CodeAgent's code action is recorded as a call of this tool (as in smolagents).
CODE_TOOL_NAME = "python_interpreter"

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
    `code_action` is the code that ran and `model_code_action` what the model wrote. Between
    the two, nbagent's own fixes may have rewritten it (`rewritten_code_action`, None when they
    changed nothing) and then a person may have edited it at approval (`edited_code_action`,
    None when they did not): each is kept, so a view can say who changed what. A run saved
    before these two fields existed has neither; its code may still differ from the model's.
    `namespace_changes` (nbagent's own) lists what the code did to the shared namespace: one
    dict per name, `{"name", "change": "created" | "rebound" | "modified" | "deleted", "type",
    "detail"}` (nbagent/sandbox/changes.py); None when the step ran no code. `warnings` are
    the warnings (a library's DeprecationWarning, …) raised while the code ran, one line each:
    kept on the step for a person, out of the observations the model reads. `permissions` lists
    what the sandbox refused the code and what became of it, one dict per refusal asked about (or never
    granted): `{"kind": "read" | "write" | "connect" | "network", "target", "answer": "once" | "run" |
    "deny" | "never", "scope": "once" | "run" | None, "by": "person" | "policy" | "nobody" | "sandbox",
    "reason"?, "granted"?, "note"?, "error"?, "rewound"?}` (nbagent/loop/permissions.py); None when nothing was refused.
    `figures` (nbagent's own) summarizes each matplotlib figure the code drew, one dict per figure: `{"marks":
    int, "axes": [{"marks": int, "kind": "bar" | "line" | "scatter" | "", "ticks": [str]}]}`, the marks of the
    largest series (nbagent/media/figures.py); None when the step drew none. `code_tool_calls` (nbagent's own) lists
    the tools the step's code called, in order: `{"name", "arguments": {name: short repr}, "result"?: short text,
    "error"?: str, "seconds": float}` (nbagent/loop/tool_uses.py); None when it called none.
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
    namespace_changes: list[dict[str, Any]] | None = None
    rewritten_code_action: str | None = None
    edited_code_action: str | None = None
    warnings: list[str] | None = None
    permissions: list[dict[str, Any]] | None = None
    figures: list[dict[str, Any]] | None = None
    code_tool_calls: list[dict[str, Any]] | None = None

    def to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        messages: list[ChatMessage] = []
        if self.model_output is not None and not summary_mode:
            text = self.model_output if isinstance(self.model_output, str) else str(self.model_output)
            if self.model_code_action is not None and self.code_action != self.model_code_action:
                text += (
                    f"\n(This code was edited before it ran. The code that ran:)\n```python\n{self.code_action}\n```"
                )
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
