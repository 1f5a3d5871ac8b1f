"""The repository's layout: how Node reads files of a venv made inside it, and how pytest finds test modules.

A root package.json with `"type": "module"` made every `.js` file below the repository an ES module,
including the CommonJS `yarn.js` that JupyterLab runs from a `.venv` in the checkout: `jupyter lab`
logged a Node stack trace ("Dynamic require of "util" is not supported") at start and on page loads.
The widget's sources say they are ES modules in js/package.json instead.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_only_the_widget_sources_are_es_modules() -> None:
    assert "type" not in json.loads((ROOT / "package.json").read_text())
    assert json.loads((ROOT / "js" / "package.json").read_text())["type"] == "module"


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the probe")
def test_a_commonjs_file_inside_the_checkout_runs_under_node() -> None:
    with tempfile.TemporaryDirectory(dir=ROOT, prefix=".layout-probe-") as folder:  # like a .venv in the repo
        probe = Path(folder) / "lib" / "probe.js"
        probe.parent.mkdir()
        probe.write_text('const util = require("util"); console.log(util.format("%s", "cjs ok"));\n')
        out = subprocess.run(["node", str(probe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cjs ok"


def test_every_test_module_has_its_own_basename() -> None:
    """pytest imports test modules by basename (rootdir-relative, no __init__.py): two files of one name in two folders
    stop the whole suite at collection ("import file mismatch")."""
    seen: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
