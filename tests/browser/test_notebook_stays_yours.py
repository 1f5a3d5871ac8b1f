"""The notebook stays yours (issue 28), in a real JupyterLab (Chromium): the agent asks before reading a variable the
task did not name, a change to your frame is a warning that says what changed, and "Undo this run" puts it back.

One notebook, one kernel, three `%%agent` runs of ScriptedModel agents in blocking cells, in the isolated worker
(the default executor):

* the task names only `orders`; the code reads `internal_memo`. The widget asks ("Step 1 wants to read your variable
  internal_memo (str, 22 chars)"): Allow once runs the step again with it and the grant ends with the step (step 2
  asks again), Deny tells the model to do without, and Allow for this run shares it until the run ends (one ask for
  two steps);
* the code adds a column to `orders` in place, then rebinds it to fewer rows: each step says "⚠ changed your
  orders: +1 column total" / "⚠ replaced your orders (...): rows 3 → 2", and the run's end names it;
* "Undo this run" restores `orders` and says so; the notebook's next cell sees the frame as it was.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from labkit import Lab, cell, open_notebook, picture, run_all, wait_idle, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "stays_yours.ipynb"
VIEW = ".nbagent-widget[data-rendered='1'] .nbagent"
MEMO = "Q3 plan: keep it quiet"
ASKED = f"wants to read your variable internal_memo (str, {len(MEMO)} chars)"

SETUP = f"""\
%load_ext nbagent
import pandas as pd
from nbagent import CodeAgent, ScriptedModel

F = "`" * 3
orders = pd.DataFrame({{"price": [2.0, 3.0, 3.0], "qty": [1, 2, 2]}})
internal_memo = {MEMO!r}

def scripted(*bodies):
    model = ScriptedModel([f"Thought: go.\\n{{F}}python\\n{{body}}\\n{{F}}" for body in bodies])
    return CodeAgent(tools=[], model=model, namespace=globals(), additional_authorized_imports=["pandas"],
                     max_steps=len(bodies))

once = scripted("print(internal_memo)", "print(internal_memo)", "final_answer(len(orders))")
for_run = scripted("print(internal_memo)", "print(internal_memo.upper())", "final_answer(len(orders))")
changer = scripted("orders['total'] = orders.price * orders.qty\\nprint('added')",
                   "orders = orders.drop_duplicates()\\nprint(len(orders))", "final_answer(orders.total.sum())")
"""
CELLS = [
    SETUP,
    "%%agent --agent once\nHow many rows has `orders`?",
    "%%agent --agent for_run\nHow many rows has `orders`?",
    "%%agent --agent changer\nAdd a total to `orders` and drop the repeated rows.",
    "print(sorted(orders.columns), len(orders))",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab) -> str:
    write_notebook(lab.notebook_dir / NAME, CELLS)
    return NAME


def answer(view, step: int, button: str) -> None:
    """Wait for the view's ask about step `step`, check its words and buttons, click `button`."""
    ask = view.locator(".nba-ask")
    expect(ask).to_be_visible(timeout=90_000)
    expect(ask).to_have_attribute("data-step", str(step))
    expect(ask.locator(".nba-ask-text")).to_have_text(f"Step {step} {ASKED}")
    expect(ask.locator("code.nba-ask-target")).to_have_text("internal_memo")
    assert ask.get_by_role("button").all_inner_texts() == ["Allow once", "Allow for this run", "Deny"]
    ask.get_by_role("button", name=button, exact=True).click()


def steps(view):
    return view.locator(".nba-steps > .nba-step-action")


def run_again(page, index: int) -> str:
    """Run cell `index` once more; its output."""
    prompt = cell(page, index).locator(".jp-InputPrompt")
    prompt.evaluate("p => p.textContent = ''")
    page.evaluate(
        "i => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = i;"
        " void window.jupyterapp.commands.execute('notebook:run-cell'); }",
        index,
    )
    expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=30_000)
    return cell(page, index).locator(".jp-OutputArea-output").last.inner_text()


def test_the_variable_ask_the_change_warning_and_undo(lab: Lab, page, notebook: str, artifacts: Path) -> None:
    open_notebook(page, lab, notebook)
    run_all(page)

    once = cell(page, 1).locator(VIEW)
    answer(once, 1, "Allow once")
    answer(once, 2, "Deny")  # the once grant ended with step 1: step 2 asks again
    expect(once.locator(".nba-header .nba-status")).to_have_text("done", timeout=60_000)
    expect(steps(once).nth(0)).to_contain_text(MEMO)  # the step ran again with the variable
    expect(steps(once).nth(0).locator(".nba-permission")).to_have_attribute("data-answer", "once")
    expect(steps(once).nth(1)).to_contain_text("A person denied permission to read your variable")
    expect(steps(once).nth(1)).not_to_contain_text(MEMO)

    for_run = cell(page, 2).locator(VIEW)
    ask = for_run.locator(".nba-ask")
    expect(ask).to_be_visible(timeout=90_000)
    picture(ask, artifacts / "variable_ask.png")
    answer(for_run, 1, "Allow for this run")
    expect(for_run.locator(".nba-header .nba-status")).to_have_text("done", timeout=60_000)
    expect(for_run.locator(".nba-permission")).to_have_count(1)  # step 2 read it without an ask
    expect(steps(for_run).nth(1)).to_contain_text(MEMO.upper())

    changer = cell(page, 3).locator(VIEW)
    expect(changer.locator(".nba-header .nba-status")).to_have_text("done", timeout=90_000)
    added = steps(changer).nth(0).locator(".nba-change-yours[data-name='orders']")
    expect(added).to_have_text("⚠ changed your orders: +1 column total")
    replaced = steps(changer).nth(1).locator(".nba-change-yours[data-name='orders']")
    expect(replaced).to_have_text("⚠ replaced your orders (DataFrame 2×3): rows 3 → 2")
    summary = changer.locator(".nba-run-changes .nba-change-yours")  # the run's whole change to it, step by step
    expect(summary).to_have_text("⚠ replaced your orders (DataFrame 2×3): +1 column total; rows 3 → 2")
    expect(changer.locator(".nba-yours-changed")).to_contain_text("The run changed your variable: orders")
    wait_idle(page)
    assert cell(page, 4).locator(".jp-OutputArea-output").last.inner_text().strip() == "['price', 'qty', 'total'] 2"
    picture(changer, artifacts / "change_warning.png")

    changer.get_by_role("button", name="Undo this run", exact=True).click()
    expect(changer.locator(".nba-control-message")).to_contain_text(
        "Undone: your variables are as they were before the run (restored orders)", timeout=30_000
    )
    expect(changer.locator(".nba-yours-changed")).to_be_hidden()  # no warning about a change the undo took back
    picture(changer, artifacts / "undo_this_run.png")
    assert run_again(page, 4).strip() == "['price', 'qty'] 3"
