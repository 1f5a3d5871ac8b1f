"""Gradio chat messages built from a run's events (what `stream_to_gradio` yields and `GradioUI` shows)."""

from __future__ import annotations

import json
from typing import Any

from nbagent.media import image_to_png, is_image
from nbagent.record import CODE_TOOL_NAME, ActionStep, ChildEvent, FinalAnswerStep, PlanningStep

from .thought import step_thought

__all__ = ["gradio_messages"]


def _footer(step: ActionStep | PlanningStep) -> str:
    parts = [f"Step {step.step_number}"] if isinstance(step, ActionStep) else []
    if step.token_usage is not None:
        parts.append(
            f"Input tokens: {step.token_usage.input_tokens:,} | Output tokens: {step.token_usage.output_tokens:,}"
        )
    if step.timing.duration is not None:
        parts.append(f"Duration: {step.timing.duration:.2f} s")
    return f'<span style="color: #bbbbc2; font-size: 12px;">{" | ".join(parts)}</span>'


def _message(content: Any, title: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if title:
        message["metadata"] = {"title": title}
    return message


def _action_messages(step: ActionStep) -> list[dict[str, Any]]:
    out = [_message(f"**Step {step.step_number}**")]
    thought = step_thought(step)
    if thought:
        out.append(_message(thought))
    if step.code_action:
        out.append(_message(f"```python\n{step.code_action}\n```", f"🛠️ Used tool {CODE_TOOL_NAME}"))
    else:
        for call in step.tool_calls or []:
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments, default=str)
            out.append(_message(arguments, f"🛠️ Used tool {call.name}"))
    if step.observations and step.observations.strip():
        out.append(_message(f"```bash\n{step.observations.strip()}\n```", "📝 Execution Logs"))
    out.extend(_message(_image_content(image), "🖼️ Image") for image in step.observations_images or [])
    if step.error is not None:
        out.append(_message(str(step.error), "💥 Error"))
    out.append(_message(_footer(step)))
    return out


def _image_content(image: Any) -> dict[str, str]:
    """Gradio shows files: the image is written to a temporary PNG."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".png", delete=False) as file:
        file.write(image_to_png(image))
    return {"path": file.name, "mime_type": "image/png"}


def gradio_messages(event: Any) -> list[dict[str, Any]]:
    """The chat messages (role, content, optional metadata title) that show one event of a run."""
    if isinstance(event, ActionStep):
        return _action_messages(event)
    if isinstance(event, PlanningStep):
        return [_message(event.plan, "🧠 Planning"), _message(_footer(event))]
    if isinstance(event, FinalAnswerStep):
        output = event.output
        return [_message(_image_content(output) if is_image(output) else f"**Final answer:** {output}")]
    if isinstance(event, ChildEvent):
        return []  # a managed agent's steps: its report reaches the manager's observations
    return []
