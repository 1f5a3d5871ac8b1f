"""The widget in a real JupyterLab (default settings) with Debian's Chromium.

Three notebooks: a widget built from a hand-made memory (plus a second view of it), a real
`ToolCallingAgent.run()` and a real `%%agent` cell (CodeAgent), both with ScriptedModels of three
steps (an error, an image, a final answer). Each renders live (code, logs, error style, <img>,
final answer, tokens); model text streams in; after saving, the page reopened with the kernel gone
(and no new kernel) still shows the run as static HTML (nbagent.notebook.save_hook.py), and so does
nbconvert's HTML export, opened offline. A control test shows what happens without the mechanism.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from contrast import contrast
from labkit import Lab, open_notebook, picture, run_all, save
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LIVE = ".nbagent-widget[data-rendered='1'] .nbagent"
STATIC = ".jp-OutputArea-output .nbagent-static"
ANSWER = "A red square; 1/0 is undefined."


STEP_PARTS = {
    "title": ".nba-step-title", "thought": ".nba-md p", "code": "pre.nba-code", "keyword": ".nba-code .nba-b",
    "logs": ".nba-logs", "error": ".nba-error-text", "answer": ".nba-final .nba-md p", "tokens": ".nba-tokens",
}  # fmt: skip


def output_bundles(nb: dict) -> list[dict]:
    return [
        o.get("data", {})
        for c in nb["cells"]
        for o in c.get("outputs", [])
        if o["output_type"] in ("display_data", "execute_result")
    ]


def run_bundles(nb: dict) -> list[dict]:
    return [b for b in output_bundles(nb) if "nbagent-static" in "".join(b.get("text/html", ""))]


def assert_run_shown(root, *, code: bool) -> None:
    """The parts of the three-step run, in whichever rendering (live widget or static HTML)."""
    expect(root.locator(".nba-status")).to_have_text("done", timeout=60_000)
    steps = root.locator(".nba-steps > .nba-step")
    expect(steps).to_have_count(3)
    first = steps.nth(0)
    expect(first).to_have_class("nba-step nba-step-action nba-step-error")
    expect(first.locator(".nba-step-title")).to_have_text("Step 1")
    expect(first.locator(".nba-error-text")).to_contain_text("division by zero")
    if code:
        expect(first.locator("pre.nba-code")).to_have_text("print('dividing')\nx = 1/0")
        expect(first.locator("pre.nba-code .nba-b").first).to_have_text("print")  # highlighted
        expect(first.locator(".nba-logs")).to_contain_text("dividing")
        expect(steps.nth(1).locator(".nba-logs")).to_contain_text("drawn")
    else:
        expect(first.locator(".nba-tool-name")).to_have_text("divide")
    error_style = first.evaluate(
        "s => [s.querySelector('.nba-error-text'), s].map(e => getComputedStyle(e))"
        ".map(c => [c.backgroundColor, c.borderLeftColor])"
    )
    assert error_style[0][0] != error_style[1][0], "the error has no background of its own"
    red, green, blue = (int(v) for v in error_style[0][1].removeprefix("rgb(").rstrip(")").split(", ")[:3])
    assert red > 150 and red > 2 * green and red > 2 * blue, f"the error's border is not red: {error_style[0][1]}"
    image = steps.nth(1).locator("img.nba-img")
    expect(image).to_have_count(1)
    image.scroll_into_view_if_needed()
    root.page.wait_for_function("img => img.complete && img.naturalWidth === 120", arg=image.element_handle())
    expect(root.locator(".nba-final")).to_contain_text(ANSWER)
    expect(first.locator(".nba-tokens")).to_be_visible()


def export_html(lab: Lab, name: str, out_dir: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "nbconvert",
        "--to",
        "html",
        "--output-dir",
        str(out_dir),
        str(lab.notebook_dir / name),
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    return out_dir / name.replace(".ipynb", ".html")


def open_offline(page, html: Path) -> None:
    """Open an exported page with every non-file request blocked (an offline reader)."""
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort())
    page.goto(html.resolve().as_uri())


def reopen_without_kernel(page, lab: Lab, name: str) -> None:
    """Yesterday's kernel is gone, and no new one may start: the saved file alone must show the run."""
    lab.shutdown_kernels()
    page.route(
        "**/api/sessions**", lambda route: route.abort() if route.request.method == "POST" else route.continue_()
    )
    open_notebook(page, lab, name, wait_kernel=False)


CASES = {
    "hand_made.ipynb": {"code": True, "views": 2},
    "agent_run.ipynb": {"code": False, "views": 1},
    "magic_run.ipynb": {"code": True, "views": 1},
}


@pytest.mark.parametrize("name", list(CASES))
def test_run_renders_live_then_from_the_saved_file(name: str, lab: Lab, page, artifacts: Path) -> None:
    case, stem = CASES[name], name.removesuffix(".ipynb")
    open_notebook(page, lab, name)
    run_all(page)
    if name == "agent_run.ipynb":  # model text streams in while the scripted model "writes"
        expect(page.locator(".nbagent-widget .nba-streaming:not(.nba-live-thought)")).to_contain_text(
            "Thought: I will first", timeout=60_000
        )
    views = page.locator(LIVE)
    expect(views).to_have_count(case["views"], timeout=60_000)
    assert_run_shown(views.nth(0), code=case["code"])
    expect(views.nth(0).locator(".nba-streaming")).to_have_count(0)
    if case["views"] == 2:  # a second view of the same widget rebuilds from state
        assert views.nth(0).inner_text() == views.nth(1).inner_text()
    picture(views.nth(0), artifacts / f"{stem}_live.png")
    if name == "magic_run.ipynb":
        expect(page.locator(".jp-Cell").nth(2).locator(".jp-OutputArea-output")).to_contain_text(
            f"ANSWER: {ANSWER}", timeout=30_000
        )

    saved = save(page, lab, name)
    bundles = run_bundles(saved)
    assert len(bundles) == case["views"]
    assert all(WIDGET_VIEW not in b and 'data-status="done"' in "".join(b["text/html"]) for b in bundles)

    reopen_without_kernel(page, lab, name)
    static = page.locator(STATIC)
    expect(static).to_have_count(case["views"], timeout=60_000)
    assert_run_shown(static.nth(0), code=case["code"])
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    assert lab.kernels() == []
    picture(page, artifacts / f"{stem}_reopened.png", full_page=True)

    html = export_html(lab, name, artifacts)
    open_offline(page, html)
    exported = page.locator(".nbagent-static")
    expect(exported).to_have_count(case["views"])
    assert_run_shown(exported.nth(0), code=case["code"])
    picture(page, artifacts / f"{stem}_export.png", full_page=True)


def test_without_the_mechanism_a_reopened_notebook_loses_the_run(
    tmp_path: Path, notebook_sources, browser, artifacts
) -> None:
    """Control: the same flow on a server without nbagent's server extension shows JupyterLab's error."""
    hand_made = [p for p in notebook_sources if p.name == "hand_made.ipynb"]
    with Lab(tmp_path / "lab", hand_made, env={"JLAB_DISABLE_EXTENSIONS": "nbagent.notebook.save_hook"}) as plain:
        page = browser.new_page()
        open_notebook(page, plain, "hand_made.ipynb")
        run_all(page)
        expect(page.locator(LIVE)).to_have_count(2, timeout=60_000)
        saved = save(page, plain, "hand_made.ipynb")
        assert all(WIDGET_VIEW in b for b in run_bundles(saved))
        plain.shutdown_kernels()  # yesterday's kernel is gone; reopening starts a new one
        open_notebook(page, plain, "hand_made.ipynb")
        expect(page.get_by_text("Error displaying widget: model not found")).to_have_count(2, timeout=60_000)
        expect(page.locator(".nbagent")).to_have_count(0)
        picture(page, artifacts / "without_mechanism_reopened.png", full_page=True)
        page.close()


def test_light_and_dark_themes_are_readable(lab: Lab, page, artifacts: Path) -> None:
    from labkit import command

    open_notebook(page, lab, "hand_made.ipynb")
    run_all(page)
    view = page.locator(LIVE).first
    assert_run_shown(view, code=True)
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        command(page, "apputils:change-theme", {"theme": theme}, wait=True)
        expect(page.locator("body")).to_have_attribute("data-jp-theme-name", theme, timeout=30_000)
        page.wait_for_timeout(300)
        ratios, _ = contrast(view, STEP_PARTS)
        low = {part: round(r, 2) for part, r in ratios.items() if r < 4.5}
        picture(view, artifacts / f"theme_{theme.split()[-1].lower()}.png")
        assert not low, f"{theme}: contrast below 4.5:1 for {low}"
    command(page, "apputils:change-theme", {"theme": "JupyterLab Light"}, wait=True)
