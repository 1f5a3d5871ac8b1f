"""The evaluation table in a real JupyterLab with Debian's Chromium: live progress, then a click on a
row opens that sample's run in the step widget below the table; saved, the static table remains.
Two agents compared: the paired difference and the one-epoch note, a live table that fits its cell, and
in the saved notebook (reopened without a kernel) a task column that reads, not "What is …"."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from labkit import CHROMIUM, Lab, chromium, open_notebook, run_all, save  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

NAME = "evaluation_table.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
EVALUATE = """\
import re
from nbagent import CodeAgent, ScriptedModel
from nbagent.eval import evaluate

def answer(messages, **kwargs):
    content = messages[1].content
    text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
    a, b = (int(x) for x in re.search(r"What is (\\d+) \\+ (\\d+)", text).groups())
    return f"Thought: I add {a} and {b}.\\n```python\\nprint('adding')\\nfinal_answer({a + b + (a == 3)})\\n```"

tasks = [
    {"id": f"t{i}", "task": f"What is {i} + {i + 1}? Answer with the number only, as an integer.", "answer": 2 * i + 1}
    for i in range(8)
]
results = evaluate({"scripted": lambda: CodeAgent(tools=[], model=ScriptedModel(answer, latency=0.3))}, tasks, max_workers=2)"""
COMPARE = """\
def also_wrong_on_5(messages, **kwargs):
    text = answer(messages)
    return text.replace("final_answer(11)", "final_answer(12)")

compared = evaluate(
    {
        "max_steps_3": lambda: CodeAgent(tools=[], model=ScriptedModel(answer), max_steps=3),
        "max_steps_6": lambda: CodeAgent(tools=[], model=ScriptedModel(also_wrong_on_5), max_steps=6),
    },
    tasks,
    max_workers=2,
)"""
# Where the table's last column ends against its cell's output area, and how wide the task column is.
GEOMETRY = """out => {
  const wrap = out.querySelector(".nbe-table-wrap");
  const heads = out.querySelectorAll("table.nbe-table th");
  return {
    overflow: wrap.scrollWidth - wrap.clientWidth,
    lastRight: heads[heads.length - 1].getBoundingClientRect().right,
    outRight: out.getBoundingClientRect().right,
    task: out.querySelector("td.nbe-c-task").getBoundingClientRect().width,
  };
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not (ROOT / "nbagent/static/eval.js").is_file():
        pytest.fail("nbagent/static/eval.js is missing: run `npm ci && npm run build` first")
    source = tmp_path_factory.mktemp("notebooks") / NAME
    cells = [new_code_cell(EVALUATE), new_code_cell("results"), new_code_cell(COMPARE), new_code_cell("print('READY')")]
    notebook = new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, source)
    with Lab(tmp_path_factory.mktemp("lab"), [source]) as server:
        yield server


@pytest.fixture(scope="module")
def page(lab):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    with playwright_api.sync_playwright() as playwright, chromium(playwright) as context:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        yield page
        assert not errors, f"errors in the page: {errors}"


def test_click_a_row_to_see_that_run(lab, page):
    artifacts = ROOT / "artifacts" / "browser"
    artifacts.mkdir(parents=True, exist_ok=True)
    open_notebook(page, lab, NAME)
    run_all(page)
    cells = page.locator(".jp-NotebookPanel .jp-Cell")
    expect(cells.nth(3).locator(".jp-OutputArea-output")).to_contain_text("READY", timeout=120_000)

    live = cells.nth(0).locator(".nbagent-eval[data-rendered='1']")
    expect(live.locator(".nbe-progress")).to_have_attribute("data-status", "done", timeout=60_000)
    expect(live.locator("tr.nbe-row")).to_have_count(8)
    expect(live.locator(".nbe-counts")).to_contain_text("8/8 samples")
    expect(live.locator(".nbe-epoch-note")).to_have_count(0)  # one agent: nothing is compared

    shown = cells.nth(1)
    table = shown.locator(".nbagent-eval[data-rendered='1']")
    expect(table.locator("tr.nbe-row")).to_have_count(8)
    expect(shown.locator("table.nbe-summary")).to_contain_text("scripted")
    expect(shown.locator("svg.nbe-plot")).to_have_count(1)
    expect(table.locator("tr.nbe-failing")).to_have_count(1)

    table.locator("tr.nbe-row", has_text="What is 3 + 4?").click()
    run = shown.locator(".nbagent-widget[data-rendered='1'] .nbagent")
    expect(run).to_have_count(1, timeout=30_000)
    expect(run.locator(".nba-task")).to_contain_text("What is 3 + 4?")
    expect(run.locator(".nba-steps > .nba-step")).to_have_count(1)
    expect(run.locator("pre.nba-code")).to_contain_text("final_answer(8)")
    expect(run.locator(".nba-logs")).to_contain_text("adding")
    expect(run.locator(".nba-final")).to_contain_text("8")
    expect(table.locator("tr.nbe-selected")).to_contain_text("What is 3 + 4?")
    shown.screenshot(path=str(artifacts / "eval_table_opened.png"))

    table.locator("tr.nbe-row", has_text="What is 1 + 2?").click()  # another row: its run replaces the first
    expect(run.locator(".nba-task")).to_contain_text("What is 1 + 2?", timeout=30_000)
    expect(run.locator(".nba-final")).to_contain_text("3")
    table.locator("tr.nbe-row", has_text="What is 1 + 2?").click()  # the same row again closes it
    expect(shown.locator(".nbagent-widget")).to_have_count(0, timeout=30_000)

    live.locator("tr.nbe-row", has_text="What is 0 + 1?").click()  # the live table's rows open runs too
    expect(cells.nth(0).locator(".nbagent-widget[data-rendered='1'] .nba-task")).to_contain_text(
        "What is 0 + 1?", timeout=30_000
    )

    compared = cells.nth(2).locator(".nbagent-eval[data-rendered='1']")  # two agents, one epoch
    expect(compared.locator(".nbe-progress")).to_have_attribute("data-status", "done", timeout=60_000)
    comparison = compared.locator("table.nbe-comparisons tbody tr")
    expect(comparison).to_have_count(1)
    expect(comparison.locator(".nbe-c-pair")).to_have_text("max_steps_6 − max_steps_3")
    expect(comparison.locator(".nbe-c-difference")).to_contain_text("-0.12 [")
    expect(comparison.locator(".nbe-c-conclusion")).to_have_text("not significant")
    expect(compared.locator(".nbe-epoch-note")).to_contain_text("Run with epochs=3 or more")
    geometry = cells.nth(2).locator(".jp-OutputArea-output").first.evaluate(GEOMETRY)
    assert geometry["overflow"] <= 1 and geometry["lastRight"] <= geometry["outRight"] + 1, geometry  # no cut column
    cells.nth(2).screenshot(path=str(artifacts / "eval_compared_live.png"))

    saved = save(page, lab, NAME)
    outputs = [o for cell in saved["cells"][:3] for o in cell.get("outputs", []) if "data" in o]
    evaluation = [o["data"] for o in outputs if "nbe-static" in "".join(o["data"].get("text/html", ""))]
    assert len(evaluation) == 3  # the live tables and the results display
    assert all(WIDGET_VIEW not in data and 'data-status="done"' in "".join(data["text/html"]) for data in evaluation)


def test_the_saved_notebook_reads_well(lab, page):
    """Reopened from disk: what was saved is the static tables, trusted (the notebook was run and saved here)."""
    artifacts = ROOT / "artifacts" / "browser"
    open_notebook(page, lab, NAME)
    cells = page.locator(".jp-NotebookPanel .jp-Cell")
    static = cells.nth(2).locator(".nbagent-static")
    expect(static.locator("tr.nbe-row")).to_have_count(16, timeout=60_000)
    assert static.locator("style").count() == 1, "the notebook was run and saved here: it is trusted"
    expect(static.locator(".nbe-epoch-note")).to_contain_text("cannot be told from sampling noise")
    expect(static.locator("table.nbe-comparisons .nbe-c-conclusion")).to_have_text("not significant")
    for i in (0, 1, 2):
        geometry = cells.nth(i).locator(".jp-OutputArea-output").first.evaluate(GEOMETRY)
        assert geometry["task"] >= 140, f"cell {i}: the task column is squeezed to {geometry['task']:.0f} px"
        assert geometry["overflow"] <= 1 and geometry["lastRight"] <= geometry["outRight"] + 1, geometry
    cells.nth(2).screenshot(path=str(artifacts / "eval_compared_saved.png"))
