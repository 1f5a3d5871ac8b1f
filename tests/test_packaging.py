"""The distribution: `jupyter-nbagent` builds a wheel and an sdist that carry the JS, and the wheel works alone.

The wheel is installed into a fresh virtual environment (its dependencies from the package
index, llama.cpp from the set-up's wheel cache) and runs README's quickstart from there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from nbagent._version import DISTRIBUTION_NAME, __version__

ROOT = Path(__file__).resolve().parents[1]
WHEEL_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "nbagent" / "wheels"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], check=True, capture_output=True)
    return out


def test_the_wheel_carries_the_widget_js_prompts_templates_and_server_config(dist: Path) -> None:
    [wheel] = dist.glob("*.whl")
    assert wheel.name.startswith(f"{DISTRIBUTION_NAME.replace('-', '_')}-{__version__}-")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "nbagent/static/widget.js",
        "nbagent/static/widget.css",
        "nbagent/prompts/code_agent.yaml",
        "nbagent/views/templates/run.html.j2",
    ):
        assert needed in names, needed
    data = f"{DISTRIBUTION_NAME.replace('-', '_')}-{__version__}.data/data/etc/jupyter/jupyter_server_config.d/nbagent.json"
    assert data in names
    assert not any(name.startswith("tests/") for name in names)


def test_the_sdist_builds_the_same_package(dist: Path) -> None:
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(name.endswith("/nbagent/loop/engine.py") for name in names)
    assert any(name.endswith("/js/widget.js") for name in names)  # the JS source, to rebuild from


@pytest.mark.model
def test_the_wheel_alone_runs_the_quickstart(dist: Path, tmp_path: Path) -> None:
    [wheel] = dist.glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True)
    # llama.cpp has no binary wheel on the index: the set-up built one into the cache
    subprocess.run([*pip, "--find-links", str(WHEEL_CACHE), "llama-cpp-python==0.3.36"], check=True)
    run = subprocess.run(
        [str(venv / "bin" / "nbagent"), "quickstart"], capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr[-2000:]
    answer = [line for line in run.stdout.splitlines() if line.startswith("Answer:")]
    assert answer and "west" in answer[0].lower()
