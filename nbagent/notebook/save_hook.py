"""Saved notebooks show finished runs without the kernel: a Jupyter server pre-save hook.

The problem (measured with JupyterLab 4.6 and its default settings, where
"Save Jupyter widget state in notebooks" is off): a reopened notebook renders an
output holding `application/vnd.jupyter.widget-view+json` with the widget renderer
(it outranks `text/html`), finds no widget model, and shows "Error displaying
widget: model not found" — the `text/html` in the same output is ignored.

The mechanism: `AgentWidget` outputs carry a static `text/html` rendering of the run,
refreshed when the run ends (marked by a `data-nbagent-run` attribute and the run's
`data-status`). When the server saves a notebook, this hook removes the widget view
from those outputs whose run is over (done, error, stopped, idle), so the file holds
the static HTML as the output's richest content. The page in the browser keeps its
live widget (the front-end's copy is not touched); a reopened notebook, nbconvert's
HTML, GitHub and nbviewer show the static run, with no kernel, JavaScript or network.
Runs still in progress keep their widget view (a page reloaded while the kernel runs
them reconnects to the live widget). If the widget state was saved too (the setting
on), the state of the removed views' models is dropped from the notebook metadata.

The hook is a server extension, enabled by the file the wheel installs as
`etc/jupyter/jupyter_server_config.d/nbagent.json` (repository: `jupyter-config/`).
We do not flip JupyterLab's "save widget state" default instead: that changes every
widget of every notebook, and nbconvert then prefers the widget view, which needs
three CDNs to render (an offline HTML export shows nothing).
"""

from __future__ import annotations

import json
import re
from typing import Any

from nbagent.record.status import LIVE_STATUSES

__all__ = ["strip_finished_runs", "pre_save_hook", "LIVE_STATUSES"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_MARKER = re.compile(r'<div class="nbagent nbagent-static" data-nbagent-run="[^"]*" data-status="([a-z_]*)"')


def _html(data: dict[str, Any]) -> str:
    html = data.get("text/html", "")
    return "".join(html) if isinstance(html, list) else str(html)


def _finished_run_view(output: dict[str, Any]) -> str | None:
    """The model id of an nbagent widget view whose run is over, else None."""
    data = output.get("data")
    if output.get("output_type") not in ("display_data", "execute_result", "update_display_data") or not data:
        return None
    view = data.get(WIDGET_VIEW)
    match = _MARKER.search(_html(data)[:2000])
    if not isinstance(view, dict) or match is None or match.group(1) in LIVE_STATUSES:
        return None
    return str(view.get("model_id", ""))


def strip_finished_runs(nb: dict[str, Any]) -> int:
    """Remove the widget views of finished nbagent runs from a notebook (nbformat 4 dict), in place.

    Returns how many outputs changed.
    """
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise TypeError("strip_finished_runs() takes a notebook as a dict (nbformat 4) with a 'cells' list")
    removed: set[str] = set()
    changed = 0
    for cell in nb["cells"]:
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            model_id = _finished_run_view(output)
            if model_id is None:
                continue
            del output["data"][WIDGET_VIEW]
            removed.add(model_id)
            changed += 1
    if removed:
        _drop_widget_state(nb, removed)
    return changed


def _drop_widget_state(nb: dict[str, Any], model_ids: set[str]) -> None:
    """Forget saved state of removed views' models, unless another saved model refers to one of them."""
    state = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state")
    if not isinstance(state, dict):
        return
    for model_id in model_ids & set(state):
        others = json.dumps([v for k, v in state.items() if k != model_id])
        if f"IPY_MODEL_{model_id}" not in others:
            del state[model_id]


def pre_save_hook(model: dict[str, Any], **_kwargs: Any) -> None:
    """Jupyter server pre-save hook: applies `strip_finished_runs` to notebooks."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        strip_finished_runs(model["content"])


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "nbagent.notebook.save_hook"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    serverapp.contents_manager.register_pre_save_hook(pre_save_hook)
    serverapp.log.info("nbagent: finished runs are saved as static HTML (pre-save hook registered)")
