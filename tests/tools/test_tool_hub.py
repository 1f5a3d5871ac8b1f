"""push_to_hub / from_hub code paths against a local folder standing in for the Hub (no network)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import nbagent.tools.hub as hub
from nbagent.tools import Tool, load_tool, tool


@tool
def double(x: int) -> int:
    """Doubles a number.

    Args:
        x: The number.
    """
    return 2 * x


class FakeHub:
    """Records HfApi calls and keeps uploaded Space files in a local folder per repo."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls: list[tuple[str, dict]] = []

    def api(self, token=None):
        hub_self = self

        class FakeApi:
            def create_repo(self, **kwargs):
                hub_self.calls.append(("create_repo", {**kwargs, "token": token}))
                return type("RepoUrl", (), {"repo_id": kwargs["repo_id"]})()

            def upload_folder(self, **kwargs):
                hub_self.calls.append(("upload_folder", kwargs))
                target = hub_self.root / kwargs["repo_type"] / kwargs["repo_id"]
                shutil.copytree(kwargs["folder_path"], target, dirs_exist_ok=True)
                return "commit-info"

        return FakeApi()

    def download(self, repo_id, filename, token=None, repo_type=None, **kwargs):
        self.calls.append(("hf_hub_download", {"repo_id": repo_id, "repo_type": repo_type, **kwargs}))
        return str(self.root / repo_type / repo_id / filename)


@pytest.fixture
def fake_hub(tmp_path, monkeypatch):
    fake = FakeHub(tmp_path / "hub")
    monkeypatch.setattr(hub, "HfApi", fake.api)
    monkeypatch.setattr(hub, "hf_hub_download", fake.download)
    return fake


def test_push_then_load_round_trip(fake_hub):
    assert double.push_to_hub("me/double", token="tok", private=True) == "commit-info"
    create = dict(fake_hub.calls[0][1])
    assert fake_hub.calls[0][0] == "create_repo"
    assert create == {
        "repo_id": "me/double",
        "private": True,
        "exist_ok": True,
        "repo_type": "space",
        "space_sdk": "gradio",
        "token": "tok",
    }
    upload = fake_hub.calls[1][1]
    assert upload["commit_message"] == "Upload tool" and upload["create_pr"] is False
    files = sorted(p.name for p in (fake_hub.root / "space" / "me" / "double").iterdir())
    assert files == ["app.py", "requirements.txt", "tool.py"]

    loaded = Tool.from_hub("me/double", trust_remote_code=True, revision="main")
    assert loaded.name == "double" and loaded(21) == 42
    assert fake_hub.calls[-1] == ("hf_hub_download", {"repo_id": "me/double", "repo_type": "space", "revision": "main"})
    assert load_tool("me/double", trust_remote_code=True)(1) == 2


def test_from_hub_requires_trust(fake_hub):
    with pytest.raises(ValueError, match="runs code downloaded from the Hub.*trust_remote_code=True"):
        Tool.from_hub("me/double")
    assert fake_hub.calls == []  # nothing downloaded


def test_from_hub_splits_init_kwargs_from_hub_kwargs(fake_hub, tmp_path):
    folder = fake_hub.root / "space" / "me" / "keyed"
    folder.mkdir(parents=True)
    (folder / "tool.py").write_text(
        "from nbagent.tools import Tool\n"
        "class Keyed(Tool):\n"
        "    name = 'keyed'\n    description = 'Returns its key.'\n    inputs = {}\n    output_type = 'string'\n"
        "    def __init__(self, key='none'):\n        super().__init__()\n        self.key = key\n"
        "    def forward(self):\n        return self.key\n"
    )
    loaded = Tool.from_hub("me/keyed", trust_remote_code=True, key="secret", cache_dir=str(tmp_path / "c"))
    assert loaded() == "secret"
    assert fake_hub.calls[-1][1]["cache_dir"] == str(tmp_path / "c")


def test_tool_collection_from_hub_loads_every_space(fake_hub, monkeypatch):
    import huggingface_hub

    from nbagent.tools import ToolCollection

    double.push_to_hub("me/double")
    items = [
        type("Item", (), {"item_id": "me/double", "item_type": "space"})(),
        type("Item", (), {"item_id": "me/some-model", "item_type": "model"})(),
    ]
    monkeypatch.setattr(huggingface_hub, "get_collection", lambda slug, token=None: type("C", (), {"items": items})())
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        ToolCollection.from_hub("me/tools-123")
    collection = ToolCollection.from_hub("me/tools-123", trust_remote_code=True)
    assert [t.name for t in collection.tools] == ["double"] and collection.tools[0](2) == 4


def test_launch_gradio_demo_builds_an_interface(monkeypatch):
    import sys
    import types

    from nbagent.tools import launch_gradio_demo

    made = {}
    gradio = types.ModuleType("gradio")

    def component(kind):
        return lambda **kwargs: (kind, kwargs)

    for kind in ("Textbox", "Number", "Checkbox", "Image", "Audio", "JSON"):
        setattr(gradio, kind, component(kind))

    class Interface:
        def __init__(self, **kwargs):
            made.update(kwargs)

        def launch(self, **kwargs):
            made["launched"] = kwargs
            return "launched"

    gradio.Interface = Interface
    monkeypatch.setitem(sys.modules, "gradio", gradio)
    assert launch_gradio_demo(double, share=False) == "launched"
    assert made["title"] == "double" and made["launched"] == {"share": False}
    assert made["inputs"][0][0] == "Number" and made["outputs"][0] == "Number"
    assert made["fn"](21) == 42


def test_launch_gradio_demo_without_gradio(monkeypatch):
    import sys

    from nbagent.tools import launch_gradio_demo

    monkeypatch.setitem(sys.modules, "gradio", None)
    with pytest.raises(ImportError, match=r"pip install 'jupyter-nbagent\[gradio\]'"):
        launch_gradio_demo(double)
