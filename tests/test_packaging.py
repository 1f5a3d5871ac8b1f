"""The distribution: `jupyter-nbagent` builds a wheel and an sdist that carry the JS, and the wheel works alone.

The wheel is installed into a fresh virtual environment with an empty pip cache (its dependencies from the
package index), then `nbagent setup` and `nbagent quickstart` run from a directory outside the checkout.
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
@pytest.mark.timeout(1200)  # a fresh venv's dependencies from the index with an empty cache, then two model loads
def test_a_pip_user_gets_the_quickstarts_answer_with_nbagent_setup(dist: Path, tmp_path: Path) -> None:
    """README's three commands, from the wheel alone: a fresh venv, an empty pip cache, outside the checkout.

    Honest about what is reused: `nbagent setup` finds the llama-cpp-python wheel and the assembled GGUF that
    scripts/setup.sh left in ~/.cache/nbagent (building and downloading them again would add ~5 CPU-minutes and
    1.1 GB); it still checks the GGUF's sha256, installs the wheel and runs its smoke test.
    """
    [wheel] = dist.glob("*.whl")
    venv, run_dir = tmp_path / "venv", tmp_path / "elsewhere"
    run_dir.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "PIP_CACHE_DIR": str(tmp_path / "pip-cache"), "PYTHONPATH": ""}
    env.pop("NBAGENT_MODEL", None)

    def nbagent(*args: str) -> subprocess.CompletedProcess[str]:
        command = [str(venv / "bin" / "nbagent"), *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=run_dir, env=env)

    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], check=True, capture_output=True, env=env)
    before = nbagent("quickstart")  # no runtime yet: one message naming the set-up, no traceback
    assert before.returncode == 1 and "nbagent setup" in before.stderr and "Traceback" not in before.stderr
    setup = nbagent("setup")
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]
    assert "default model works" in setup.stdout
    run = nbagent("quickstart")
    assert run.returncode == 0, run.stderr[-2000:]
    answer = [line for line in run.stdout.splitlines() if line.startswith("Answer:")]
    assert answer and "west" in answer[0].lower()
