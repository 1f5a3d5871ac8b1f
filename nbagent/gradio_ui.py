"""`GradioUI` and `stream_to_gradio`, smolagents' Gradio chat front-end, for who has gradio installed.

nbagent's own interface is the notebook widget (`agent.widget`, the `%%agent`
magic) and the terminal (`nbagent run`); gradio is not a dependency. Without
it, both names raise an ImportError that says so and points to those.
The chat messages are built from nbagent's event stream (`gradio_messages`),
the same stream every other view reads.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbagent.views.gradio import gradio_messages

if TYPE_CHECKING:
    from nbagent.agents import MultiStepAgent

__all__ = ["GradioUI", "stream_to_gradio", "gradio_messages", "GRADIO_MISSING"]

GRADIO_MISSING = (
    "GradioUI needs the gradio package, which is not installed: `pip install gradio`. "
    "nbagent's own interface needs nothing more: in Jupyter, display `agent.widget`, or run "
    '`%load_ext nbagent` and write the task in a `%%agent` cell; in a terminal, `nbagent run "your task"`.'
)

DEFAULT_UPLOAD_TYPES = (".pdf", ".docx", ".txt")


def _gradio() -> Any:
    try:
        import gradio
    except ImportError:
        raise ImportError(GRADIO_MISSING) from None
    return gradio


def _messages_format(gr: Any) -> dict[str, str]:
    """gradio 4-5 need `type="messages"` for role/content messages; gradio 6 has only that format."""
    import inspect

    return {"type": "messages"} if "type" in inspect.signature(gr.Chatbot.__init__).parameters else {}


def stream_to_gradio(
    agent: MultiStepAgent,
    task: str,
    task_images: list[Any] | None = None,
    reset_agent_memory: bool = False,
    additional_args: dict[str, Any] | None = None,
) -> Iterator[Any]:
    """Run `agent` on `task` and yield `gradio.ChatMessage`s as the steps finish."""
    gr = _gradio()
    events = agent.event_stream(task, images=task_images, reset=reset_agent_memory, additional_args=additional_args)
    for event in events:
        for message in gradio_messages(event):
            yield gr.ChatMessage(**message)


class GradioUI:
    """A one-line chat interface to an agent (needs gradio). `launch()` starts the server.

    Each message continues the conversation (`reset=False`), as in smolagents.
    With `file_upload_folder`, files (.pdf, .docx, .txt) can be uploaded and are named to the agent.
    """

    def __init__(
        self, agent: MultiStepAgent, file_upload_folder: str | None = None, reset_agent_memory: bool = False
    ) -> None:
        self.gr = _gradio()
        self.agent = agent
        self.reset_agent_memory = reset_agent_memory
        self.file_upload_folder = Path(file_upload_folder) if file_upload_folder else None
        if self.file_upload_folder:
            self.file_upload_folder.mkdir(parents=True, exist_ok=True)

    def upload_file(
        self, file: Any, file_uploads_log: list[str], allowed_file_types: tuple[str, ...] = DEFAULT_UPLOAD_TYPES
    ) -> tuple[str, list[str]]:
        """Copy an uploaded file into `file_upload_folder`; returns (status text, updated log of paths)."""
        if file is None or self.file_upload_folder is None:
            return "No file uploaded", file_uploads_log
        source = Path(getattr(file, "name", file))
        if source.suffix.lower() not in allowed_file_types:
            return (
                f"File type {source.suffix or '(none)'} is not allowed; use {', '.join(allowed_file_types)}",
                file_uploads_log,
            )
        target = self.file_upload_folder / source.name
        shutil.copy(source, target)
        return f"File uploaded: {target}", [*file_uploads_log, str(target)]

    def task_with_files(self, prompt: str, file_uploads_log: list[str]) -> str:
        if not file_uploads_log:
            return prompt
        return prompt + f"\nYou have been provided with these files, which might be helpful or not: {file_uploads_log}"

    def interact(self, prompt: str, history: list[Any], file_uploads_log: list[str]) -> Iterator[list[Any]]:
        history = [*history, self.gr.ChatMessage(role="user", content=prompt)]
        yield history
        task = self.task_with_files(prompt, file_uploads_log)
        for message in stream_to_gradio(self.agent, task, reset_agent_memory=self.reset_agent_memory):
            history = [*history, message]
            yield history

    def build(self) -> Any:
        gr = self.gr
        with gr.Blocks(title=self.agent.name or "nbagent") as demo:
            uploads = gr.State([])
            chatbot = gr.Chatbot(label=self.agent.name or "Agent", **_messages_format(gr))
            text = gr.Textbox(lines=1, label="Your request", placeholder="Enter a task and press Enter")
            if self.file_upload_folder is not None:
                upload = gr.File(label="Upload a file")
                status = gr.Textbox(label="Upload status", interactive=False)
                upload.change(self.upload_file, [upload, uploads], [status, uploads])
            text.submit(self.interact, [text, chatbot, uploads], [chatbot])
        return demo

    def launch(self, share: bool = False, **kwargs: Any) -> Any:
        return self.build().launch(share=share, **kwargs)
