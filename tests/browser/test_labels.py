"""Labels a class understands, in a real JupyterLab (Chromium): one `%%agent` run whose first step nbagent rewrote
(a small model's product of totals) and a person then edited at approval shows "rewritten by nbagent" and "edited by
you", each with its diff; a pandas deprecation raised by the code is folded in the step, not in the observation; the
task shows the frame's first rows as a table; the answer is a plain value."""

from __future__ import annotations

from pathlib import Path

import pytest
from labkit import Lab, open_notebook, picture, run_all, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAME = "labels.ipynb"
VIEW = ".nbagent-widget[data-rendered='1'] .nbagent"
WRITTEN = "r = sales['units'] * sales['unit_price'].sum()\\nsame = sales[['units']].astype(float, copy=False)"

CELLS = [
    f"""%load_ext nbagent
import pandas as pd
from nbagent import CodeAgent, ScriptedModel
F = "`" * 3
sales = pd.DataFrame({{"region": ["North", "South", "East"], "units": [1, 2, 3], "unit_price": [2.0, 3.0, 4.0]}})
model = ScriptedModel([f"Thought: total.\\n{{F}}python\\n{WRITTEN}\\n{{F}}", f"Thought: done.\\n{{F}}python\\nfinal_answer(r)\\n{{F}}"])
model.prompt_profile = "small"  # nbagent's own code fixes are for small local models
agent = CodeAgent(tools=[], model=model, namespace=get_ipython().user_ns, additional_authorized_imports=["pandas"])
agent.gates.approve_code = True""",
    "%%agent --agent agent\nWhat is the revenue of `sales`?",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab) -> str:
    write_notebook(lab.notebook_dir / NAME, CELLS)
    yield NAME
    lab.shutdown_kernels()


def test_rewritten_by_nbagent_edited_by_you_and_a_folded_warning(
    lab: Lab, page, notebook: str, artifacts: Path
) -> None:
    open_notebook(page, lab, notebook)
    run_all(page)
    view = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(VIEW)
    expect(view.locator(".nba-status")).to_have_text("awaiting approval", timeout=90_000)
    box = view.get_by_role("textbox", name="Code to run")
    expect(box).to_have_value(
        "r = (sales['units'] * sales['unit_price']).sum()\nsame = sales[['units']].astype(float, copy=False)"
    )
    box.fill(box.input_value() + "\nprint('checked by a person', r)")
    view.get_by_role("button", name="Approve", exact=True).click()
    expect(view.locator(".nba-status")).to_have_text("awaiting approval", timeout=30_000)  # the second step
    view.get_by_role("button", name="Run", exact=True).click()  # approves it as it is and goes on
    expect(view.locator(".nba-status")).to_have_text("done", timeout=30_000)

    task = view.locator(".nba-task .nba-preview table")
    expect(task.locator("thead th")).to_have_text(["", "region", "units", "unit_price"])
    expect(task.locator("tbody tr").first.locator("th, td")).to_have_text(["0", "North", "1", "2.0"])

    step = view.locator(".nba-steps > .nba-step-action").first
    expect(step.locator(".nba-code-change")).to_have_text(["rewritten by nbagent", "edited by you"])
    rewrite = step.locator(".nba-block-diff[data-by='nbagent']")
    expect(rewrite.locator(".nba-diff-del")).to_have_text(["- r = sales['units'] * sales['unit_price'].sum()"])
    expect(rewrite.locator(".nba-diff-add")).to_have_text(["+ r = (sales['units'] * sales['unit_price']).sum()"])
    expect(step.locator(".nba-block-diff[data-by='you'] .nba-diff-add")).to_have_text(
        ["+ print('checked by a person', r)"]
    )

    expect(step.locator(".nba-logs").first).to_contain_text("checked by a person 20.0")
    expect(step.locator(".nba-logs").first).not_to_contain_text("copy keyword")
    warnings = step.locator("details.nba-warnings")
    expect(warnings.locator("summary")).to_have_text("1 warning (not shown to the model)")
    expect(warnings.locator("pre")).to_be_hidden()  # folded
    warnings.locator("summary").click()
    expect(warnings.locator("pre")).to_contain_text("Pandas4Warning: The copy keyword is deprecated")

    expect(view.locator(".nba-final")).to_contain_text("20.0")
    expect(view.locator(".nba-final")).not_to_contain_text("np.float64")
    picture(view, artifacts / "labels.png")
    assert not page.console_errors
