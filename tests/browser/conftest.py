"""A real JupyterLab (127.0.0.1, default settings) and Debian's Chromium via Playwright.

Session fixtures start one server and one browser for all browser tests; each test gets a fresh
page. Screenshots go to artifacts/browser/ (gitignored; CI keeps them).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).parent))

from labkit import CHROMIUM, Lab, chromium  # noqa: E402

from notebooks import write_notebooks  # noqa: E402


@pytest.fixture(scope="session")
def artifacts() -> Path:
    path = ROOT / "artifacts" / "browser"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def notebook_sources(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_notebooks(tmp_path_factory.mktemp("notebooks"))


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory, notebook_sources: list[Path]):
    if not (ROOT / "nbagent/static/widget.js").is_file():
        pytest.fail("nbagent/static/widget.js is missing: run `npm ci && npm run build` first")
    with Lab(tmp_path_factory.mktemp("lab"), notebook_sources) as server:
        yield server


@pytest.fixture(scope="module")  # not the session: one sync Playwright at a time, and tests/eval starts its own
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, chromium(playwright) as context:
        yield context


@pytest.fixture
def page(browser, artifacts: Path, request: pytest.FixtureRequest):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.console_errors = errors
    yield page
    if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
        page.screenshot(path=str(artifacts / f"{request.node.name}-failed.png"), full_page=True)
    page.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report
