"""Badges and panels that say what happened, in a real JupyterLab (issue 33 items 2 and 3): the network ask as README
describes it (code that reads a URL with `--imports pandas` asks "Step 1 wants to use the network"), nothing turns
while the person is asked and the code shows once; after Deny the run goes on; a step stopped by the run's time limit
says "timed out" in its own colour, not a red "error"."""

from __future__ import annotations

from pathlib import Path

import pytest
from labkit import Lab, open_notebook, run_all, wait_idle, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "badges.ipynb"
VIEW = ".nbagent-widget[data-rendered='1'] .nbagent"
CELLS = [
    "%load_ext nbagent\nfrom nbagent import CodeAgent, ScriptedModel\nF = '`' * 3",
    "reader = CodeAgent(tools=[], additional_authorized_imports=['pandas'], max_steps=2, model=ScriptedModel([\n"
    "    f\"Thought: read it.\\n{F}python\\nimport pandas as pd\\nsales = pd.read_csv('https://data.invalid/s.csv')\\n{F}\",\n"
    "    f\"{F}python\\nfinal_answer('without the network')\\n{F}\"]))\n"
    "reader.run('Read the sales file.')",
    "waiter = CodeAgent(tools=[], max_time=3, model=ScriptedModel([f'Thought: wait\\n{F}python\\nimport time\\n"
    "time.sleep(60)\\n{F}']))\nwaiter.run('Wait.')",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab) -> str:
    write_notebook(lab.notebook_dir / NAME, CELLS)
    return NAME


def test_the_network_ask_and_the_badges(lab: Lab, page, notebook: str, artifacts: Path) -> None:
    open_notebook(page, lab, notebook)
    run_all(page)
    view = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(VIEW)
    ask = view.locator(".nba-ask")
    expect(ask).to_be_visible(timeout=90_000)
    expect(ask.locator(".nba-ask-text")).to_have_text("Step 1 wants to use the network")
    expect(view.locator(".nba-header .nba-status")).to_have_text("awaiting permission")
    expect(view.locator(".nba-spinner:visible")).to_have_count(0)  # nobody works while a person is asked
    expect(view.locator("pre:visible", has_text="read_csv")).to_have_count(1)  # the code, once
    view.screenshot(path=str(artifacts / "network_ask.png"))
    ask.get_by_role("button", name="Deny", exact=True).click()
    expect(view.locator(".nba-header .nba-status")).to_have_text("done", timeout=60_000)
    expect(view.locator(".nba-permission")).to_have_attribute("data-answer", "deny")

    waiter = page.locator(".jp-Notebook .jp-Cell").nth(2).locator(VIEW)
    expect(waiter.locator(".nba-header .nba-status")).to_have_text("timed out", timeout=90_000)
    step = waiter.locator(".nba-step-action").first
    expect(step.locator(".nba-step-head .nba-mark")).to_have_text(["timed out"])
    expect(step.locator(".nba-chip-error")).to_have_count(0)
    expect(step.locator(".nba-ended-timed_out .nba-label")).to_have_text("Timed out")
    colors = step.evaluate(
        "el => [getComputedStyle(el.querySelector('.nba-mark')).color,"
        " getComputedStyle(el.querySelector('.nba-ended-text')).backgroundColor]"
    )
    error_red = waiter.evaluate("el => getComputedStyle(el).getPropertyValue('--nba-error-fg').trim()")
    assert colors[0] not in ("rgb(211, 47, 47)", error_red)  # not the error's red
    waiter.screenshot(path=str(artifacts / "timed_out_badge.png"))
    wait_idle(page)
