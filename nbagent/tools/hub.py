"""Sharing tools through the Hugging Face Hub (a Space holding tool.py, app.py, requirements.txt)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huggingface_hub import HfApi, hf_hub_download

if TYPE_CHECKING:
    from .base import Tool

__all__ = ["push_tool_to_hub", "load_tool_from_hub", "load_tool", "gradio_app_code"]

_HUB_DOWNLOAD_KEYS = ("revision", "cache_dir", "repo_type", "local_files_only", "subfolder", "force_download")


def gradio_app_code(tool_module: str = "tool") -> str:
    """A small Gradio app that demos the tool in a Space."""
    return f'''"""Gradio demo of the tool in {tool_module}.py (written by nbagent)."""

from pathlib import Path

import gradio as gr

from nbagent.tools import Tool

tool = Tool.from_code(Path(__file__).with_name("{tool_module}.py").read_text())
gr.Interface(
    fn=tool,
    inputs=[gr.Textbox(label=name, info=spec["description"]) for name, spec in tool.inputs.items()],
    outputs=gr.Textbox(label="output"),
    title=tool.name,
    description=tool.description,
).launch()
'''


def push_tool_to_hub(
    tool: Tool,
    repo_id: str,
    commit_message: str = "Upload tool",
    private: bool | None = None,
    token: bool | str | None = None,
    create_pr: bool = False,
) -> Any:
    """Create (or reuse) the Space `repo_id` and upload the saved tool to it; returns the commit info."""
    api = HfApi(token=token)
    repo_url = api.create_repo(repo_id=repo_id, private=private, exist_ok=True, repo_type="space", space_sdk="gradio")
    with tempfile.TemporaryDirectory() as folder:
        tool.save(folder, make_gradio_app=True)
        return api.upload_folder(
            repo_id=getattr(repo_url, "repo_id", repo_id),
            folder_path=folder,
            commit_message=commit_message,
            repo_type="space",
            create_pr=create_pr,
        )


def load_tool_from_hub(repo_id: str, token: str | None = None, trust_remote_code: bool = False, **kwargs: Any) -> Tool:
    """Download `tool.py` from a Space (or the repo type given) and build the tool it defines."""
    from .base import Tool

    if not trust_remote_code:
        raise ValueError(
            f"Loading the tool {repo_id!r} runs code downloaded from the Hub. Read it first, then pass "
            f"trust_remote_code=True to load it."
        )
    hub_kwargs = {k: kwargs.pop(k) for k in _HUB_DOWNLOAD_KEYS if k in kwargs}
    hub_kwargs.setdefault("repo_type", "space")
    path = hf_hub_download(repo_id, "tool.py", token=token, **hub_kwargs)
    return Tool.from_code(Path(path).read_text(encoding="utf-8"), **kwargs)


def load_tool(repo_id: str, token: str | None = None, trust_remote_code: bool = False, **kwargs: Any) -> Tool:
    """smolagents' `load_tool`: a tool from the Hub (needs `trust_remote_code=True`)."""
    return load_tool_from_hub(repo_id, token=token, trust_remote_code=trust_remote_code, **kwargs)
