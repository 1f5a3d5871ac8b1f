"""The widget in a real JupyterLab (default settings) with Debian's Chromium.

A run renders (code, logs, error style, image, final answer, tokens), a second view matches, model
text streams in live, and after saving, a reloaded page with the old kernel gone still shows the
run (as static HTML: see nbagent/views/saving.py), as does nbconvert's HTML export, offline.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from labkit import Lab, open_notebook, run_all, save
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LIVE = ".nbagent-widget[data-rendered='1'] .nbagent"
STATIC = ".jp-OutputArea-output .nbagent-static"


def output_bundles(nb: dict, cell: int) -> list[dict]:
    return [
        o.get("data", {})
        for o in nb["cells"][cell]["outputs"]
        if o["output_type"] in ("display_data", "execute_result")
    ]


def assert_run_shown(root, *, code: bool) -> None:
    """The parts of the hand-made / scripted run, in whichever rendering (live widget or static HTML)."""
    expect(root.locator(".nba-status")).to_have_text("done")
    steps = root.locator(".nba-steps > .nba-step")
    expect(steps).to_have_count(3)
    first = steps.nth(0)
    expect(first).to_have_class("nba-step nba-step-action nba-step-error")
    expect(first.locator(".nba-error-text")).to_contain_text("division by zero")
    expect(first.locator(".nba-step-title")).to_have_text("Step 1")
    if code:
        expect(first.locator("pre.nba-code")).to_have_text("print('dividing')\nx = 1/0")
        expect(first.locator(".nba-logs")).to_contain_text("dividing")
        expect(steps.nth(1).locator(".nba-logs")).to_contain_text("drawn")
    else:
        expect(first.locator(".nba-tool-name")).to_have_text("divide")
    # error style: the error block is red-ish, not the normal text colour
    colors = first.evaluate(
        "s => [getComputedStyle(s.querySelector('.nba-error-text')).color, getComputedStyle(s.querySelector('.nba-step-title')).color]"
    )
    assert colors[0] != colors[1]
    image = steps.nth(1).locator("img.nba-img")
    expect(image).to_have_count(1)
    image.scroll_into_view_if_needed()
    root.page.wait_for_function("img => img.complete && img.naturalWidth === 120", arg=image.element_handle())
    expect(root.locator(".nba-final")).to_contain_text("A red square; 1/0 is undefined.")
    expect(first.locator(".nba-tokens")).to_be_visible()


def export_html(lab: Lab, name: str, out_dir: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(out_dir), str(lab.notebook_dir / name)],
        check=True,
        capture_output=True,
    )
    return out_dir / name.replace(".ipynb", ".html")


def open_offline(page, html: Path) -> list[str]:
    """Open an exported page with every non-file request blocked (an offline reader)."""
    blocked: list[str] = []

    def handle(route):
        if route.request.url.startswith("file://"):
            return route.continue_()
        blocked.append(route.request.url)
        return route.abort()

    page.route("**/*", handle)
    page.goto(html.resolve().as_uri())
    return blocked


def test_hand_made_run_renders_saves_and_exports(lab: Lab, page, artifacts: Path) -> None:
    open_notebook(page, lab, "hand_made.ipynb")
    run_all(page)
    views = page.locator(LIVE)
    expect(views).to_have_count(2, timeout=60_000)
    assert_run_shown(views.nth(0), code=True)
    assert views.nth(0).inner_text() == views.nth(1).inner_text()  # a second view rebuilds from state
    expect(views.nth(0).locator(".nba-task strong")).to_have_text("red square")
    views.nth(0).screenshot(path=str(artifacts / "hand_made_live.png"))

    saved = save(page, lab, "hand_made.ipynb")
    bundles = output_bundles(saved, 0) + output_bundles(saved, 1)
    assert len(bundles) == 2 and all(
        WIDGET_VIEW not in b and "nbagent-static" in "".join(b["text/html"]) for b in bundles
    )

    lab.shutdown_kernels()  # yesterday's kernel is gone
    open_notebook(page, lab, "hand_made.ipynb", wait_kernel=False)
    static = page.locator(STATIC)
    expect(static).to_have_count(2, timeout=60_000)
    assert_run_shown(static.nth(0), code=True)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    page.screenshot(path=str(artifacts / "hand_made_reopened.png"), full_page=True)

    html = export_html(lab, "hand_made.ipynb", artifacts)
    blocked = open_offline(page, html)
    exported = page.locator(".nbagent-static")
    expect(exported).to_have_count(2)
    assert_run_shown(exported.nth(0), code=True)
    page.screenshot(path=str(artifacts / "hand_made_export.png"), full_page=True)
    assert not any("nbagent" in url for url in blocked)


def test_agent_run_streams_live_and_survives_reload(lab: Lab, page, artifacts: Path) -> None:
    open_notebook(page, lab, "agent_run.ipynb")
    run_all(page)
    streaming = page.locator(".nbagent-widget .nba-streaming")
    expect(streaming).to_contain_text("Thought: I will first", timeout=60_000)  # tokens arrive while the model "writes"
    view = page.locator(LIVE)
    expect(view.locator(".nba-status")).to_have_text("done", timeout=60_000)
    assert_run_shown(view, code=False)
    expect(view.locator(".nba-streaming")).to_have_count(0)
    expect(page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output")).to_contain_text("RESULT: A red square")
    view.screenshot(path=str(artifacts / "agent_run_live.png"))

    saved = save(page, lab, "agent_run.ipynb")
    [bundle] = output_bundles(saved, 0)
    assert WIDGET_VIEW not in bundle and 'data-status="done"' in "".join(bundle["text/html"])

    # reload with the kernel still alive: the page shows the saved (static) run
    open_notebook(page, lab, "agent_run.ipynb", wait_kernel=False)
    assert_run_shown(page.locator(STATIC), code=False)

    lab.shutdown_kernels()
    open_notebook(page, lab, "agent_run.ipynb", wait_kernel=False)
    assert_run_shown(page.locator(STATIC), code=False)

    html = export_html(lab, "agent_run.ipynb", artifacts)
    open_offline(page, html)
    assert_run_shown(page.locator(".nbagent-static"), code=False)
    page.screenshot(path=str(artifacts / "agent_run_export.png"), full_page=True)
