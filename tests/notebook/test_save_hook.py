"""Saved notebooks keep finished runs as static HTML (the server pre-save hook), live runs as widgets."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from jupyter_server.services.contents.filemanager import FileContentsManager

from nbagent import AgentMemory
from nbagent.notebook import save_hook as saving
from nbagent.notebook.save_hook import WIDGET_STATE, WIDGET_VIEW, pre_save_hook, strip_finished_runs
from nbagent.notebook.widget import AgentWidget

ROOT = Path(__file__).resolve().parents[2]


def output(bundle: dict) -> dict:
    return nbformat.v4.new_output("display_data", data=bundle)


def notebook(memory: AgentMemory) -> tuple[dict, AgentWidget, AgentWidget]:
    done = AgentWidget.from_memory(memory)
    running = AgentWidget(run={"steps": [], "status": "running"})
    foreign = {WIDGET_VIEW: {"version_major": 2, "version_minor": 1, "model_id": "other"}, "text/html": "<b>x</b>"}
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("run", outputs=[output(done.mimebundle()), output(running.mimebundle())]),
        nbformat.v4.new_code_cell("other", outputs=[output(foreign), nbformat.v4.new_output("stream", text="hi")]),
        nbformat.v4.new_markdown_cell("text"),
    ]
    nb.metadata["widgets"] = {
        WIDGET_STATE: {
            "version_major": 2,
            "version_minor": 0,
            "state": {done.model_id: {"state": {}}, running.model_id: {"state": {}}, "other": {"state": {}}},
        }
    }
    return json.loads(nbformat.writes(nb)), done, running


def test_finished_runs_lose_their_widget_view_only(memory: AgentMemory) -> None:
    nb, done, running = notebook(memory)
    assert strip_finished_runs(nb) == 1
    first, second = nb["cells"][0]["outputs"]
    assert set(first["data"]) == {"text/html", "text/plain"}
    assert second["data"][WIDGET_VIEW]["model_id"] == running.model_id  # still running: stays live
    assert WIDGET_VIEW in nb["cells"][1]["outputs"][0]["data"]  # not ours
    assert set(nb["metadata"]["widgets"][WIDGET_STATE]["state"]) == {running.model_id, "other"}
    assert strip_finished_runs(nb) == 0  # idempotent
    nbformat.validate(nbformat.from_dict(nb))


def test_state_referenced_by_another_widget_is_kept(memory: AgentMemory) -> None:
    nb, done, _ = notebook(memory)
    nb["metadata"]["widgets"][WIDGET_STATE]["state"]["box"] = {"state": {"children": [f"IPY_MODEL_{done.model_id}"]}}
    strip_finished_runs(nb)
    assert done.model_id in nb["metadata"]["widgets"][WIDGET_STATE]["state"]


def test_html_given_as_a_list_of_lines(memory: AgentMemory) -> None:
    bundle = AgentWidget.from_memory(memory).mimebundle()
    bundle["text/html"] = bundle["text/html"].splitlines(keepends=True)
    nb = {"cells": [{"cell_type": "code", "outputs": [output(bundle)]}]}
    assert strip_finished_runs(nb) == 1


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="notebook"):
        strip_finished_runs({"no": "cells"})


def test_hook_runs_in_a_real_contents_manager(memory: AgentMemory, tmp_path: Path) -> None:
    manager = FileContentsManager(root_dir=str(tmp_path))

    class Server:
        contents_manager = manager
        log = __import__("logging").getLogger("test")

    saving._load_jupyter_server_extension(Server())
    nb, _, _ = notebook(memory)
    manager.save({"type": "notebook", "format": "json", "content": nb}, "run.ipynb")
    saved = json.loads((tmp_path / "run.ipynb").read_text())
    assert WIDGET_VIEW not in saved["cells"][0]["outputs"][0]["data"]
    assert "Final answer" in "".join(saved["cells"][0]["outputs"][0]["data"]["text/html"])


def test_hook_ignores_other_files() -> None:
    model = {"type": "file", "content": "x"}
    pre_save_hook(model)
    assert model == {"type": "file", "content": "x"}


def test_shipped_server_config_enables_the_extension() -> None:
    config = json.loads((ROOT / "jupyter-config/jupyter_server_config.d/nbagent.json").read_text())
    assert config["ServerApp"]["jpserver_extensions"] == {"nbagent.notebook.save_hook": True}
    assert saving._jupyter_server_extension_points() == [{"module": "nbagent.notebook.save_hook"}]
