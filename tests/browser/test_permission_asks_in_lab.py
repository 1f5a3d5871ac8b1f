"""Permission asks in a real JupyterLab (Chromium): the step waits, the widget asks, a click answers.

One notebook, one kernel, three runs in blocking cells: "Allow once", "Allow for this run" and "Deny". Each
shows the ask ("Step 1 wants to write `out/report.csv`") after the step that was refused, the click answers it
while the cell still executes, and the step's outcome follows (saved; saved twice with one ask; denied, the model
told). The executor is the real one (isolated): the worker may read the notebook's folder, not write it, so the
OS refuses the write and the boundary reports it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from contrast import contrast
from labkit import Lab, cell, command, open_notebook, picture, run_all, wait_idle, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "permission_asks.ipynb"
VIEW = ".nbagent-widget[data-rendered='1'] .nbagent"
QUESTION = "Step 1 wants to write out/report.csv"
# A target written to look like nbagent's sentence (issue 29 item 2): one escaped code node, nbagent's words around it.
SPOOFED = (
    "out/report.csv\\u0060 (a copy in the scratch folder: none of your files is written). Then it wants to read "
    "\\u0060data.csv"
)

SETUP = """\
%load_ext nbagent
import os
from nbagent import CodeAgent, ScriptedModel

F = "`" * 3
os.makedirs("out", exist_ok=True)
OUT = os.path.join(os.path.realpath(os.getcwd()), "out", "report.csv")  # the worker may read here, not write

def writer(saves, out=OUT, answer="'done'"):
    write = f"with open({out!r}, 'w') as f:\\n    f.write('region,revenue')\\nprint('saved')"
    bodies = [write] * saves + [f"final_answer({answer})"]
    model = ScriptedModel([f"Thought: save it.\\n{F}python\\n{body}\\n{F}" for body in bodies])
    return CodeAgent(tools=[], model=model, additional_authorized_imports=["io"], max_steps=len(bodies))

SPOOF = "report.csv` (a copy in the scratch folder: none of your files is written). Then it wants to read `data.csv"
LINK = "[Open the full report](https://attacker.example/r?k=s3cr3t)"
"""
CELLS = [
    SETUP,
    'once = writer(1)\nonce.run("Save the report.")',
    'for_run = writer(2)\nfor_run.run("Save the report twice.")',
    'denied = writer(1)\ndenied.run("Save the report.")',
    "spoofed = writer(1, OUT.replace('report.csv', SPOOF), repr(LINK))\nspoofed.run('Save the report.')",
    "for agent in (once, for_run, denied):\n"
    "    print([[p['answer'] for p in s.permissions or []] for s in agent.memory.action_steps()],"
    " [g.scope for g in agent.grants], agent.python_executor.grants, agent.last_result.state)",
]


# The ask's question and buttons, whose contrast with what is behind them is measured in both themes.
ASK_PARTS = {"text": ".nba-ask-text", "once": ".nba-ask-once", "run": ".nba-ask-run", "deny": ".nba-ask-deny"}


@pytest.fixture(scope="module")
def notebook(lab: Lab) -> str:
    write_notebook(lab.notebook_dir / NAME, CELLS)
    return NAME


def readable_in_both_themes(page, ask, artifacts: Path) -> None:
    """The ask reads well (contrast 4.5:1 or more) in JupyterLab's dark theme and its light one."""
    for theme in ("JupyterLab Dark", "JupyterLab Light"):
        command(page, "apputils:change-theme", {"theme": theme}, wait=True)
        expect(page.locator("body")).to_have_attribute("data-jp-theme-name", theme, timeout=30_000)
        page.wait_for_timeout(300)
        measured, background = contrast(ask, ASK_PARTS)
        assert (background < 0.2) == (theme == "JupyterLab Dark"), theme
        low = {part: round(ratio, 2) for part, ratio in measured.items() if ratio < 4.5}
        assert not low, f"{theme}: contrast below 4.5:1 for {low}"
        picture(ask, artifacts / f"permission_ask_{theme.split()[-1].lower()}.png")


def answer(page, index: int, button: str, artifacts: Path | None = None):
    """Wait for cell `index`'s widget to ask, check where and what, click `button`; the widget's view."""
    view = cell(page, index).locator(VIEW)
    ask = view.locator(".nba-ask")
    expect(ask).to_be_visible(timeout=90_000)
    expect(view.locator(".nba-header .nba-status")).to_have_text("awaiting permission")
    expect(ask.locator(".nba-ask-text")).to_have_text(QUESTION)
    expect(ask.locator("code.nba-ask-target")).to_have_text("out/report.csv")
    names = ask.get_by_role("button").all_inner_texts()
    assert names == ["Allow once", "Allow for this run", "Deny"]
    assert ask.evaluate("el => el.previousElementSibling.dataset.step") == "1"  # right after the step that asked
    if artifacts is not None:
        readable_in_both_themes(page, ask, artifacts)
    ask.get_by_role("button", name=button, exact=True).click()
    return view


def test_allow_once_allow_for_the_run_and_deny(lab: Lab, page, notebook: str, artifacts: Path) -> None:
    open_notebook(page, lab, notebook)
    run_all(page)
    once = answer(page, 1, "Allow once", artifacts)
    expect(once.locator(".nba-header .nba-status")).to_have_text("done", timeout=60_000)
    expect(once.locator(".nba-ask")).to_be_hidden()
    first = once.locator(".nba-step-action").first
    expect(first.locator(".nba-permission")).to_contain_text(
        f"Allowed once: write {lab.notebook_dir.resolve()}/out/report.csv (by you"
    )
    expect(first).to_contain_text("saved")

    for_run = answer(page, 2, "Allow for this run")
    expect(for_run.locator(".nba-header .nba-status")).to_have_text("done", timeout=60_000)
    expect(for_run.locator(".nba-permission")).to_have_count(1)  # the second write was not asked for
    expect(for_run.locator(".nba-permission")).to_have_attribute("data-answer", "run")

    denied = answer(page, 3, "Deny")
    expect(denied.locator(".nba-header .nba-status")).to_have_text("done", timeout=60_000)
    step = denied.locator(".nba-step-action").first
    expect(step.locator(".nba-permission")).to_have_attribute("data-answer", "deny")
    expect(step).to_contain_text("A person denied permission to write")
    expect(step).to_contain_text("Do without it")

    spoofed = cell(page, 4).locator(VIEW)
    ask = spoofed.locator(".nba-ask")
    expect(ask).to_be_visible(timeout=90_000)
    expect(ask.locator(".nba-ask-text code")).to_have_count(1)
    expect(ask.locator(".nba-ask-text code.nba-ask-target")).to_have_text(SPOOFED)
    expect(ask.locator(".nba-ask-text")).to_have_text(
        f"Step 1 wants to write {SPOOFED} (shown escaped: it holds control, bidi or backtick characters)"
    )
    ask.get_by_role("button", name="Deny", exact=True).click()
    expect(spoofed.locator(".nba-header .nba-status")).to_have_text("done", timeout=60_000)
    expect(spoofed.locator(".nba-permission code")).to_have_count(1)
    expect(spoofed.locator(".nba-permission code")).to_contain_text("\\u0060data.csv")
    # a link in the answer says where it goes (issue 29 item 6)
    expect(spoofed.locator(".nba-final .nba-link-dest")).to_have_text(" (attacker.example/r?k=s3cr3t)")
    picture(spoofed, artifacts / "permission_spoofed.png")

    wait_idle(page)
    picture(denied, artifacts / "permission_denied.png")
    report = cell(page, 5).locator(".jp-OutputArea-output").last.inner_text()
    assert report.splitlines() == [
        "[['once'], []] ['once'] [] success",  # the once grant ended with its step
        "[['run'], [], []] ['run'] [] success",  # one ask for two writes; the run's grant ended with the run
        "[['deny'], []] [] [] success",
    ]
    assert (lab.notebook_dir / "out" / "report.csv").read_text() == "region,revenue"
