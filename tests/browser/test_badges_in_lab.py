"""Badges and panels that say what happened, in a real JupyterLab (issue 33 items 2 and 3): the network ask as README
describes it (`%%agent --imports pandas` whose code reads a URL asks "Step 1 wants to use the network"), nothing turns
while the person is asked and the code shows once; after Deny the run goes on; code awaiting approval shows once (in
the review box), nothing turns, and a rejected step says "rejected"; a step stopped by Stop or by the run's time limit
says "stopped" / "timed out" in its own colour, not a red "error"."""

from __future__ import annotations

from pathlib import Path

import pytest
from labkit import Lab, open_notebook, picture, run_all, wait_idle, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "badges.ipynb"
VIEW = ".nbagent-widget[data-rendered='1'] .nbagent"
CELLS = [
    "%load_ext nbagent\nfrom nbagent import CodeAgent, ScriptedModel\nF = '`' * 3\n"
    "reader = ScriptedModel([\n"
    "    f\"Thought: read it.\\n{F}python\\nimport pandas as pd\\nsales = pd.read_csv('https://data.invalid/s.csv')\\n{F}\",\n"
    "    f\"{F}python\\nfinal_answer('without the network')\\n{F}\"])",
    "%%agent -m reader --imports pandas --max-steps 2\nRead the sales file.",
    "approver = CodeAgent(tools=[], max_steps=2, model=ScriptedModel([\n"
    "    f\"Thought: clean it.\\n{F}python\\nprint('dropping the table')\\n{F}\",\n"
    "    f\"{F}python\\nfinal_answer('kept')\\n{F}\"]))\n"
    "approver.gates.approve_code = True\napprover.run('Clean up.')",
    "waiter = CodeAgent(tools=[], max_time=3, model=ScriptedModel([f'Thought: wait\\n{F}python\\nimport time\\n"
    "time.sleep(60)\\n{F}']))\nwaiter.run('Wait.')",
    "sleeper = CodeAgent(tools=[], model=ScriptedModel([f'Thought: sleep\\n{F}python\\nimport time\\n"
    "time.sleep(60)\\n{F}']))\nsleeper.run('Sleep.')",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab) -> str:
    write_notebook(lab.notebook_dir / NAME, CELLS)
    return NAME


def cell_view(page, index: int):
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(VIEW)


def expect_nothing_turns_and_the_code_once(view, code: str, in_pre: int = 1) -> None:
    """No spinner while a person is asked, and `code` in `in_pre` visible <pre> (0: it is in the review box only)."""
    expect(view.locator(".nba-spinner:visible")).to_have_count(0)
    expect(view.locator("pre:visible", has_text=code)).to_have_count(in_pre)


def expect_own_mark(view, mark: str, label: str, block: str) -> None:
    step = view.locator(".nba-step-action").first
    expect(step.locator(".nba-step-head .nba-mark")).to_have_text([label])
    expect(step.locator(".nba-chip-error")).to_have_count(0)
    expect(step.locator(".nba-error")).to_have_count(0)
    expect(step.locator(f".nba-ended-{mark} .nba-label")).to_have_text(block)
    color = step.evaluate("el => getComputedStyle(el.querySelector('.nba-mark')).color")
    error_red = view.evaluate("el => getComputedStyle(el).getPropertyValue('--nba-error-fg').trim()")
    assert color not in ("rgb(211, 47, 47)", error_red)  # not the error's red


def test_the_network_ask_and_the_badges(lab: Lab, page, notebook: str, artifacts: Path) -> None:
    open_notebook(page, lab, notebook)
    run_all(page)
    view = cell_view(page, 1)
    ask = view.locator(".nba-ask")
    expect(ask).to_be_visible(timeout=90_000)
    expect(ask.locator(".nba-ask-text")).to_have_text("Step 1 wants to use the network")
    expect(view.locator(".nba-header .nba-status")).to_have_text("awaiting permission")
    expect_nothing_turns_and_the_code_once(view, "read_csv")
    picture(view, artifacts / "network_ask.png")
    ask.get_by_role("button", name="Deny", exact=True).click()
    expect(view.locator(".nba-header .nba-status")).to_have_text("done", timeout=60_000)
    expect(view.locator(".nba-permission")).to_have_attribute("data-answer", "deny")

    approver = cell_view(page, 2)
    expect(approver.locator(".nba-header .nba-status")).to_have_text("awaiting approval", timeout=60_000)
    expect(approver.get_by_role("textbox", name="Code to run")).to_have_value("print('dropping the table')")
    expect_nothing_turns_and_the_code_once(approver, "dropping the table", in_pre=0)  # the review box only
    picture(approver, artifacts / "awaiting_approval.png")
    approver.get_by_role("button", name="Reject", exact=True).click()
    box = approver.get_by_role("textbox", name="Code to run")
    expect(box).to_have_value("final_answer('kept')", timeout=30_000)  # every step awaits approval: the next one
    rejected = approver.locator(".nba-step-action").first
    expect(rejected.locator(".nba-step-head .nba-mark")).to_have_text(["rejected"])
    expect(rejected.locator(".nba-chip-error")).to_have_count(0)
    approver.get_by_role("button", name="Run", exact=True).click()  # approves the rest as it is
    expect(approver.locator(".nba-header .nba-status")).to_have_text("done", timeout=60_000)

    waiter = cell_view(page, 3)
    expect(waiter.locator(".nba-header .nba-status")).to_have_text("timed out", timeout=90_000)
    expect_own_mark(waiter, "timed_out", "timed out", "Timed out")
    picture(waiter, artifacts / "timed_out_badge.png")

    sleeper = cell_view(page, 4)
    expect(sleeper.locator(".nba-header .nba-status")).to_have_text("running", timeout=60_000)
    expect(sleeper.locator(".nba-step-action", has_text="time.sleep(60)")).to_have_count(
        1, timeout=30_000
    )  # its code runs
    sleeper.get_by_role("button", name="Stop", exact=True).click()
    expect(sleeper.locator(".nba-header .nba-status")).to_have_text("stopped", timeout=30_000)
    expect_own_mark(sleeper, "stopped", "stopped", "Stopped")
    picture(sleeper, artifacts / "stopped_badge.png")
    wait_idle(page)
