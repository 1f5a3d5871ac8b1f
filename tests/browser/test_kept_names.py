"""A name the isolated worker keeps, in a real JupyterLab (Chromium): an agent that defines `print` does not trojan
the notebook's `print` (issue 19); the widget says `[kept in the worker]`, with the reason in the tooltip, and the
notebook's own `print` still prints."""

from __future__ import annotations

from pathlib import Path

import pytest
from labkit import Lab, open_notebook, picture, run_all, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "kept_names.ipynb"
VIEW = ".nbagent-widget[data-rendered='1'] .nbagent"

CELLS = [
    """%load_ext nbagent
from nbagent import ScriptedModel
F = "`" * 3
m = ScriptedModel([f"Thought: mine\\n{F}py\\nseen = []\\ndef print(*a):\\n    seen.append(a)\\nfinal_answer(1)\\n{F}"])""",
    "%%agent -m m\nDefine print.",
    'print("the notebook\'s own print", print is __builtins__.print)',
]


@pytest.fixture(scope="module")
def notebook(lab: Lab) -> str:
    write_notebook(lab.notebook_dir / NAME, CELLS)
    return NAME


def test_a_name_kept_in_the_worker_is_said_in_the_widget(lab: Lab, page, notebook: str, artifacts: Path) -> None:
    open_notebook(page, lab, notebook)
    run_all(page)
    cells = page.locator(".jp-Notebook .jp-Cell")
    view = cells.nth(1).locator(VIEW)
    expect(view.locator(".nba-status")).to_have_text("done", timeout=90_000)
    kept = view.locator(".nba-change[data-name='print']").first
    expect(kept).to_have_text("+ print (function) [kept in the worker]")
    assert "kept in the worker: " in kept.get_attribute("title") and "builtin" in kept.get_attribute("title")
    picture(view, artifacts / "kept_in_the_worker.png")
    expect(cells.nth(2).locator(".jp-OutputArea-output")).to_have_text("the notebook's own print True\n")
