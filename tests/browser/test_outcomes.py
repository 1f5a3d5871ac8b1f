"""Honest outcomes and clean input in a real JupyterLab (Chromium) running real `%%agent` cells.

One notebook: a run that reaches max steps (badge "max steps", a warning box that is not a final
answer, 2 steps not 3, `-o` None with one line saying why, no Out[]), its memory displayed (no
"null"), a first run whose model loads slowly (the widget says "loading the offline model…" at
once), a `%agent …?` line, and a run whose model fails (badge "failed", the error shown once in the
widget and once as the cell's one-line error).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from labkit import Lab, open_notebook, picture, run_all, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "outcomes.ipynb"
VIEW = ".nbagent-widget[data-rendered='1'] .nbagent"
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"

SETUP = """\
%load_ext nbagent
import time
import nbagent.models.spec as spec
from nbagent import ScriptedModel

F = "`" * 3
def code(body):
    return f"Thought: go\\n{F}py\\n{body}\\n{F}"

m = ScriptedModel([code("x = 1"), code("y = 2"), "Sorry, I could not finish."])

def broken(messages, **kwargs):
    raise ConnectionError("is the server running?")

bad = ScriptedModel(broken)

def slow_load(spec_text, n_ctx=None):  # stands in for loading the offline model
    time.sleep(6)
    return ScriptedModel([code("final_answer('Paris')")])

spec.model_from_spec = slow_load"""

CELLS = [
    SETUP,
    "%%agent -m m --max-steps 2 -o best\nWhich region sold most?",
    "print(repr(best))",
    'get_ipython().magics_manager.registry["AgentMagics"].last_agent.memory',
    "%agent -m default -o capital What is the capital of France? Paris?",
    "%%agent -m bad\nAnything?",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab) -> str:
    write_notebook(lab.notebook_dir / NAME, CELLS)
    return NAME


def test_outcomes_drive_the_widget_o_and_the_cell(lab: Lab, page, notebook: str, artifacts: Path) -> None:
    open_notebook(page, lab, notebook)
    run_all(page)
    cells = page.locator(".jp-Notebook .jp-Cell")

    max_steps = cells.nth(1)
    view = max_steps.locator(VIEW)
    expect(view.locator(".nba-status")).to_have_text("max steps", timeout=90_000)
    expect(view.locator(".nba-final.nba-final-warn")).to_contain_text("Sorry, I could not finish.")
    expect(view.locator(".nba-final .nba-label")).to_have_text(
        "No answer: max steps reached. The model's closing reply"
    )
    expect(view.locator(".nba-footer")).to_contain_text("2 steps")
    expect(view.locator(".nba-steps > .nba-step-action")).to_have_count(2)  # the forced reply is not a step
    expect(max_steps.locator(STDERR)).to_have_text("%%agent: max steps reached, no answer (best = None)\n")
    expect(max_steps.locator(".jp-OutputArea-executeResult")).to_have_count(0)  # no Out[] echo
    picture(view, artifacts / "outcome_max_steps.png")
    expect(cells.nth(2).locator(".jp-OutputArea-output")).to_have_text("None\n")

    memory = cells.nth(3).locator(VIEW)
    expect(memory.locator(".nba-status")).to_have_text("max steps", timeout=30_000)
    assert "null" not in memory.locator(".nba-header").inner_text()

    loading = cells.nth(4)
    expect(loading.locator(".nba-message")).to_have_text("loading the offline model…", timeout=90_000)
    picture(loading.locator(VIEW), artifacts / "outcome_loading.png")
    expect(loading.locator(f"{VIEW} .nba-status")).to_have_text("done", timeout=60_000)
    expect(loading.locator(".nba-message")).to_have_count(0)
    expect(loading.locator(".nba-final")).to_contain_text("Paris")  # `%agent …?` ran the task

    failed = cells.nth(5)
    expect(failed.locator(f"{VIEW} .nba-status")).to_have_text("failed", timeout=60_000)
    widget_text = failed.locator(VIEW).inner_text()
    assert widget_text.count("is the server running?") == 1, widget_text
    error = failed.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").last
    expect(error).to_contain_text("AgentRunFailed: Error while generating output with the model")
    assert error.inner_text().strip().count("\n") == 0, "the cell should end in one line"
    picture(failed, artifacts / "outcome_failed.png")
