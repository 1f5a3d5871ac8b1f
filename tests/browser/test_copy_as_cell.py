"""'Copy as cell' in a real JupyterLab (Chromium), issue 31 item 3: a finished run's checked program becomes a new
code cell right below the run's cell, and running that cell binds `answer` to the run's answer, without the model."""

from __future__ import annotations

from pathlib import Path

import pytest
from labkit import Lab, open_notebook, picture, run_all, wait_idle, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "copy_as_cell.ipynb"
VIEW = ".nbagent-widget[data-rendered='1'] .nbagent"

CELLS = [
    """%load_ext nbagent
import pandas as pd
from nbagent import ScriptedModel
F = "`" * 3
def code(body):
    return f"Thought: go.\\n{F}python\\n{body}\\n{F}"
marks = pd.DataFrame({"name": ["a", "b", "c"], "mark": [12, 17, 9]})
m = ScriptedModel([
    code("print(marks.head())"),
    code("best = marks['grade'].max()"),
    code("top = marks.loc[marks['mark'].idxmax(), 'name']\\nfinal_answer(top)"),
])""",
    "%%agent -m m --imports pandas\nWho has the best mark in `marks`?",
    'print("ANSWER:", globals().get("answer"))',
]


@pytest.fixture(scope="module")
def notebook(lab: Lab) -> str:
    write_notebook(lab.notebook_dir / NAME, CELLS)
    return NAME


def run_cell(page, cell) -> None:
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def test_copy_as_cell_inserts_the_program_below_and_it_binds_the_answer(
    lab: Lab, page, notebook: str, artifacts: Path
) -> None:
    open_notebook(page, lab, notebook)
    run_all(page)
    cells = page.locator(".jp-Notebook .jp-Cell")
    view = cells.nth(1).locator(VIEW)
    expect(view.locator(".nba-status")).to_have_text("done", timeout=90_000)
    wait_idle(page)
    expect(cells.nth(2).locator(".jp-OutputArea-output")).to_have_text("ANSWER: None\n")
    box = view.locator(".nba-program")
    expect(box.locator("summary .nba-label")).to_have_text("The run as code · checked: reproduces the answer")
    box.locator(".nba-btn-copy-cell").click()
    expect(box.locator(".nba-program-note")).to_have_text("Inserted as a new cell below.")
    expect(cells).to_have_count(4)
    new = cells.nth(2)
    source = new.locator(".jp-InputArea-editor .cm-content").inner_text()
    assert source.splitlines() == [
        "# checked: reproduces the answer",
        "# inputs: marks (DataFrame 3×2) — notebook variables the run read",
        "top = marks.loc[marks['mark'].idxmax(), 'name']",
        "answer = top",
    ]
    run_cell(page, new)
    wait_idle(page)
    run_cell(page, cells.nth(3))
    expect(cells.nth(3).locator(".jp-OutputArea-output")).to_have_text("ANSWER: b\n", timeout=30_000)
    picture(page, artifacts / "copy_as_cell.png", full_page=True)
    assert not page.console_errors
