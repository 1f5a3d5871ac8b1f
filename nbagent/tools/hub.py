"""Sharing tools through the Hugging Face Hub (a Space holding tool.py, app.py, requirements.txt).

Duck-typed on purpose: nothing here imports `Tool` (base.py builds on this module, not the reverse).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from huggingface_hub import HfApi, hf_hub_download

__all__ = ["push_tool_to_hub", "download_tool_code", "HUB_DOWNLOAD_KEYS"]

HUB_DOWNLOAD_KEYS = ("revision", "cache_dir", "repo_type", "local_files_only", "subfolder", "force_download")


def push_tool_to_hub(
    tool: Any,
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


def download_tool_code(
    repo_id: str, token: str | None = None, trust_remote_code: bool = False, **kwargs: Any
) -> tuple[str, dict[str, Any]]:
    """`tool.py` of a Space (or the repo type given), and the keywords left for the tool's `__init__`."""
    if not trust_remote_code:
        raise ValueError(
            f"Loading the tool {repo_id!r} runs code downloaded from the Hub. Read it first, then pass "
            f"trust_remote_code=True to load it."
        )
    hub_kwargs = {k: kwargs.pop(k) for k in HUB_DOWNLOAD_KEYS if k in kwargs}
    hub_kwargs.setdefault("repo_type", "space")
    path = hf_hub_download(repo_id, "tool.py", token=token, **hub_kwargs)
    return Path(path).read_text(encoding="utf-8"), kwargs
