"""A run's time limit in a real JupyterLab (Chromium) running a real `%%agent` cell.

The header says the limit while the run runs ("stops after 4 s"); when it passes, the code under way
is stopped, the badge says "timed out", the step is marked stopped, and one line under the widget says
why `-o` holds None.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from labkit import Lab, open_notebook, picture, run_all, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "run_limits.ipynb"
VIEW = ".nbagent-widget[data-rendered='1'] .nbagent"
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"

SETUP = """\
%load_ext nbagent
from nbagent import ScriptedModel

F = "`" * 3
m = ScriptedModel([f"Thought: wait\\n{F}py\\nimport time\\ntime.sleep(120)\\n{F}"])"""

CELLS = [SETUP, "%%agent -m m --max-time 4s -o out\nWait for two minutes."]


@pytest.fixture(scope="module")
def notebook(lab: Lab) -> str:
    write_notebook(lab.notebook_dir / NAME, CELLS)
    return NAME


def test_the_widget_says_the_limit_and_a_timed_out_run(lab: Lab, page, notebook: str, artifacts: Path) -> None:
    open_notebook(page, lab, notebook)
    run_all(page)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(1)
    view = cell.locator(VIEW)
    expect(view.locator(".nba-header .nba-limit")).to_have_text("stops after 4 s", timeout=90_000)
    expect(view.locator(".nba-status")).to_have_text("timed out", timeout=60_000)
    expect(view.locator(".nba-step-action.nba-step-stopped")).to_have_count(1)
    expect(view).to_contain_text("time limit of 4 s (max_time)")
    expect(cell.locator(STDERR)).to_have_text(
        "%%agent: timed out before an answer (the run's time limit, max_time) (out = None)\n"
    )
    picture(view, artifacts / "run_timed_out.png")
