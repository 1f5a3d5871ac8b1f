"""A real JupyterLab on 127.0.0.1 and Debian's Chromium, for browser tests and benchmarks.

`Lab` starts `jupyter lab` with a free port, a fixed token, config/data/runtime/workspace/settings
dirs under its own folder, and a scratch copy of the notebooks it serves; JupyterLab's settings are
its defaults (widget state is not saved). The server's config path includes this repository's
`jupyter-config/` (what the wheel installs into etc/jupyter), and PYTHONPATH the repository, so
kernels and the server import this checkout's nbagent. `chromium()` launches /usr/bin/chromium
through Playwright with a fresh profile. Used by tests/browser/conftest.py and benchmarks/widget.py.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("NBAGENT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "nbagent-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """One JupyterLab server; `start()` / `stop()`, or use as a context manager."""

    def __init__(
        self,
        run_dir: Path,
        notebooks: list[Path] | None = None,
        env: dict[str, str] | None = None,
        args: list[str] | None = None,
    ) -> None:
        self.run_dir = Path(run_dir)
        self.args = args or []
        self.notebook_dir = self.run_dir / "nbs"
        self.notebooks = notebooks or []
        self.extra_env = env or {}
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log_path = self.run_dir / "lab.log"

    # -- lifecycle --------------------------------------------------------------

    def start(self, timeout: float = 90) -> Lab:
        for sub in ("config", "data", "runtime", "workspaces", "user-settings", "nbs"):
            (self.run_dir / sub).mkdir(parents=True, exist_ok=True)
        for notebook in self.notebooks:
            shutil.copy(notebook, self.notebook_dir / notebook.name)
        news = self.run_dir / "user-settings/@jupyterlab/apputils-extension"
        news.mkdir(parents=True, exist_ok=True)  # only the "fetch news?" toast is silenced
        (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
        env = {
            **os.environ,
            "JLAB_RUN": str(self.run_dir),
            "JLAB_PORT": str(self.port),
            "JLAB_TOKEN": TOKEN,
            "JLAB_NOTEBOOK_DIR": str(self.notebook_dir),
            "JUPYTER_CONFIG_DIR": str(self.run_dir / "config"),
            "JUPYTER_DATA_DIR": str(self.run_dir / "data"),
            "JUPYTER_RUNTIME_DIR": str(self.run_dir / "runtime"),
            "JUPYTER_CONFIG_PATH": str(ROOT / "jupyter-config"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            **self.extra_env,
        }
        log = self.log_path.open("w")
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--config",
            str(ROOT / "scripts/jupyter_server_config.py"),
            *self.args,
        ]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.run_dir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited early (code {self.proc.returncode}); see {self.log_path}")
            try:
                if self.api("GET", "/api/status") is not None:
                    return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer within {timeout} s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def __enter__(self) -> Lab:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- REST -------------------------------------------------------------------

    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.base}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return json.loads(text) if text else {}

    def kernels(self) -> list[dict[str, Any]]:
        return self.api("GET", "/api/kernels")

    def shutdown_kernels(self) -> None:
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")
        for kernel in self.kernels():
            self.api("DELETE", f"/api/kernels/{kernel['id']}")

    def read_notebook(self, name: str) -> dict[str, Any]:
        """The notebook as saved on disk."""
        return json.loads((self.notebook_dir / name).read_text())

    def url(self, name: str) -> str:
        return f"{self.base}/lab/tree/{name}?reset&token={TOKEN}"


@contextmanager
def chromium(playwright: Any, viewport: dict[str, int] | None = None):
    """A persistent Chromium context (fresh profile) from Debian's /usr/bin/chromium."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} not found: apt-get install chromium (or set NBAGENT_CHROMIUM)")
    profile = tempfile.mkdtemp(prefix="nbagent-chromium-")
    context = playwright.chromium.launch_persistent_context(
        profile,
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport=viewport or {"width": 1280, "height": 1000},
    )
    try:
        yield context
    finally:
        context.close()
        shutil.rmtree(profile, ignore_errors=True)


# -- JupyterLab page helpers ----------------------------------------------------------------------


def write_notebook(path: Path, sources: list[str] | tuple[str, ...]) -> Path:
    """A notebook of code cells with the python3 kernel, written to ``path`` (for a test to open in the lab)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nb, path)
    return path


def open_notebook(page: Any, lab: Lab, name: str, *, wait_kernel: bool = True) -> None:
    from playwright.sync_api import expect

    page.goto(lab.url(name))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
    if wait_kernel:
        expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=90_000)


def command(page: Any, name: str, args: dict[str, Any] | None = None, *, wait: bool = False) -> Any:
    """Run a JupyterLab command (window.jupyterapp is exposed by scripts/jupyter_server_config.py).

    By default the command is started and not awaited: "run cell" commands resolve only when the cell
    has finished, which would block a test that wants to act while the cell runs. `wait=True` awaits it.
    """
    if wait:
        return page.evaluate("([name, args]) => window.jupyterapp.commands.execute(name, args)", [name, args or {}])
    page.evaluate("([name, args]) => { window.jupyterapp.commands.execute(name, args); }", [name, args or {}])
    return None


def cell(page: Any, index: int) -> Any:
    """The notebook's cell `index` (0-based), as a locator."""
    return page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(index)


def run_all(page: Any) -> None:
    command(page, "notebook:run-all-cells")


def wait_idle(page: Any, timeout: float = 120_000) -> None:
    """Wait until the kernel is idle (no cell executing)."""
    page.wait_for_function(
        "() => !document.querySelector('.jp-Cell .jp-InputPrompt')?.textContent.includes('*')"
        " && ![...document.querySelectorAll('.jp-InputPrompt')].some(p => p.textContent.includes('[*]'))",
        timeout=timeout,
    )


def save(page: Any, lab: Lab, name: str, timeout: float = 30) -> dict[str, Any]:
    """Save the open notebook and return it as written on disk."""
    path = lab.notebook_dir / name
    before = path.stat().st_mtime_ns if path.exists() else 0
    command(page, "docmanager:save")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_mtime_ns != before:
            time.sleep(0.2)
            return lab.read_notebook(name)
        time.sleep(0.1)
    raise TimeoutError(f"{name} was not saved within {timeout} s")


def picture(view: Any, path: Path, *, full_page: bool = False) -> None:
    """Keep a picture of `view` (a locator, or the page with `full_page`) for a person to look at; never a check.

    A finished run's widget is drawn anew (its display is refreshed with the final static HTML), so the element
    a test located may leave the page while Chromium takes its picture: take the new one, and after three tries
    keep the whole page instead rather than fail a test over an artifact."""
    from playwright.sync_api import Error as PlaywrightError

    page = getattr(view, "page", view)
    for _ in range(3):
        try:
            if full_page or view is page:
                page.screenshot(path=str(path), full_page=full_page)
            else:
                view.screenshot(path=str(path))
            return
        except PlaywrightError:
            page.wait_for_timeout(500)
    page.screenshot(path=str(path), full_page=True)
