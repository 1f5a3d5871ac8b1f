"""Saved runs everywhere: the static HTML of a run in a real JupyterLab (Chromium), untrusted and trusted,
in the light and dark themes, and in nbconvert's HTML export.

The notebook holds only what a saved notebook holds: the run's `text/html` (nbagent/views/html.py),
no widget state and no kernel. A colleague's copy is untrusted: JupyterLab sanitizes its HTML and
drops the `<style>`, so the page must read well from its structure alone ("Step 1 · 812 in · 31 out
tokens · 800 ms", not "Step 1812 in · 31 out tokens800 ms"). Trusted, in the dark theme, and in
nbconvert's page, no line of code gets a band of background of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from labkit import Lab, command, open_notebook, picture
from playwright.sync_api import expect

from nbagent import ActionStep, AgentMemory, TaskStep, Timing
from nbagent.errors import AgentExecutionError, AgentMaxStepsError
from nbagent.models.base import TokenUsage
from nbagent.views.html import memory_to_html

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STATIC = ".jp-OutputArea-output .nbagent-static"
STEP_ONE = "Step 1 · error · 812 in · 31 out tokens · 800 ms"  # the step failed: its mark, as live

# The background of each line of code, the code block's, and the contrast of the code's text on it.
CODE_BACKGROUNDS = """root => {
  const rgba = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const pre = root.querySelector('pre.nba-code');
  const lines = [pre.querySelector('code'), ...pre.querySelectorAll('code span')];
  const transparent = c => { const v = rgba(c); return v.length === 4 && v[3] === 0; };
  return {
    bands: lines.map(e => getComputedStyle(e).backgroundColor).filter(c => !transparent(c)),
    pre: rgba(getComputedStyle(pre).backgroundColor),
    text: rgba(getComputedStyle(pre.querySelector('code')).color),
  };
}"""


def luminance(rgb: list[float]) -> float:
    def channel(v: float) -> float:
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(first: list[float], second: list[float]) -> float:
    a, b = luminance(first), luminance(second)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def max_steps_memory() -> AgentMemory:
    """A run that failed once, then ran out of steps: the forced reply is not an answer."""
    memory = AgentMemory("system")
    memory.steps = [
        TaskStep(task="Which region sold most?"),
        ActionStep(
            step_number=1,
            timing=Timing(0.0, 0.8),
            model_output="Thought: look at the totals.",
            code_action="totals = sales.groupby('region')['revenue'].sum()\nprint(totals.idxmax())",
            error=AgentExecutionError("KeyError: 'revenue'"),
            token_usage=TokenUsage(812, 31),
        ),
        ActionStep(
            step_number=2,
            timing=Timing(0.8, 1.9),
            model_output="Thought: try the units.",
            code_action="print(sales.columns)",
            observations="Execution logs:\nIndex(['region', 'units'], dtype='object')\n",
            token_usage=TokenUsage(905, 12),
        ),
        ActionStep(
            step_number=3,
            timing=Timing(1.9, 2.5),
            model_output="Sorry, I could not find the answer.",
            action_output="Sorry, I could not find the answer.",
            is_final_answer=True,
            error=AgentMaxStepsError("Reached max steps."),
            token_usage=TokenUsage(990, 9),
        ),
    ]
    return memory


@pytest.fixture(scope="module")
def saved(lab: Lab) -> dict[str, str]:
    """Two copies of a notebook holding a saved run: one untrusted (as written), one signed (trusted)."""
    html = memory_to_html(max_steps_memory(), agent_name="analyst", model_id="scripted")
    names = {"untrusted": "saved_untrusted.ipynb", "trusted": "saved_trusted.ipynb"}
    for name in names.values():
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
        cell = nbformat.v4.new_code_cell("%%agent --max-steps 2\nWhich region sold most?")
        cell.outputs = [nbformat.v4.new_output("display_data", {"text/html": html, "text/plain": "AgentWidget(…)"})]
        nb.cells = [cell]
        nbformat.write(nb, lab.notebook_dir / name)
    env = {
        **os.environ,
        "JUPYTER_DATA_DIR": str(lab.run_dir / "data"),
        "JUPYTER_CONFIG_DIR": str(lab.run_dir / "config"),
    }
    subprocess.run(
        [sys.executable, "-m", "nbformat.sign", str(lab.notebook_dir / names["trusted"])], check=True, env=env
    )
    return names


def open_saved(page, lab: Lab, name: str) -> None:
    """Open the notebook without starting a kernel: the saved file alone must show the run."""
    page.route(
        "**/api/sessions**", lambda route: route.abort() if route.request.method == "POST" else route.continue_()
    )
    open_notebook(page, lab, name, wait_kernel=False)
    expect(page.locator(STATIC)).to_have_count(1, timeout=60_000)
    dialog = page.locator(".jp-Dialog")  # "Error Starting Kernel" (once per retry): no kernel, as intended
    dialog.first.wait_for(timeout=15_000)
    for _ in range(10):
        while dialog.count():
            dialog.first.locator("button.jp-mod-accept").click()
        page.wait_for_timeout(500)
    expect(dialog).to_have_count(0)


def test_an_untrusted_saved_run_reads_well_without_its_styles(lab: Lab, page, saved, artifacts: Path) -> None:
    open_saved(page, lab, saved["untrusted"])
    run = page.locator(STATIC)
    assert run.locator("style").count() == 0, "JupyterLab should sanitize an untrusted notebook's HTML"
    expect(run.locator(".nba-header")).to_have_text("analyst · scripted · max steps · run 0:02")
    expect(run.locator(".nba-step-head").first).to_have_text(STEP_ONE)
    expect(run.locator(".nba-footer")).to_have_text("2 steps · 2.7k in · 52 out tokens · 2.5 s")
    expect(run.locator("hr.nba-rule").first).to_be_visible()  # steps are divided
    expect(run.locator(".nba-final")).to_contain_text("No answer: max steps reached")
    expect(run.locator("pre.nba-code").first).to_have_text(
        "totals = sales.groupby('region')['revenue'].sum()\nprint(totals.idxmax())"
    )
    picture(run, artifacts / "saved_untrusted.png")


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_a_trusted_saved_run_has_no_bands_behind_code(lab: Lab, page, saved, artifacts: Path, theme: str) -> None:
    open_saved(page, lab, saved["trusted"])
    command(page, "apputils:change-theme", {"theme": theme}, wait=True)
    expect(page.locator("body")).to_have_attribute("data-jp-theme-name", theme, timeout=30_000)
    page.wait_for_timeout(300)
    run = page.locator(STATIC)
    assert run.locator("style").count() == 1, "a trusted notebook keeps the run's styles"
    expect(run.locator(".nba-sep").first).to_be_hidden()  # the chips separate the items themselves
    expect(run.locator("hr.nba-rule").first).to_be_hidden()
    expect(run.locator(".nba-status")).to_have_text("max steps")
    colours = run.evaluate(CODE_BACKGROUNDS)
    assert colours["bands"] == [], f"{theme}: lines of code have backgrounds of their own: {colours['bands']}"
    dark = luminance(colours["pre"]) < 0.2
    assert dark == (theme == "JupyterLab Dark"), f"{theme}: the code block's background is {colours['pre']}"
    assert contrast(colours["text"], colours["pre"]) >= 4.5
    picture(run, artifacts / f"saved_trusted_{theme.split()[-1].lower()}.png")
    command(page, "apputils:change-theme", {"theme": "JupyterLab Light"}, wait=True)


def test_nbconvert_html_keeps_the_run_readable(lab: Lab, page, saved, artifacts: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(artifacts)]
        + [str(lab.notebook_dir / saved["untrusted"])],
        check=True,
        capture_output=True,
    )
    html = artifacts / saved["untrusted"].replace(".ipynb", ".html")
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort())
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.goto(html.resolve().as_uri())
        run = page.locator(".nbagent-static")
        expect(run.locator(".nba-status")).to_have_text("max steps")
        expect(run.locator(".nba-sep").first).to_be_hidden()
        colours = run.evaluate(CODE_BACKGROUNDS)
        assert colours["bands"] == [], f"nbconvert ({scheme}): bands behind code: {colours['bands']}"
        assert contrast(colours["text"], colours["pre"]) >= 4.5
        picture(run, artifacts / f"saved_nbconvert_{scheme}.png")
