"""The base install has no numpy or pandas (they are the user's, or an extra's): nbagent must import without them.

A module that imports pandas at its top breaks `nbagent quickstart` for a pip user before the set-up message can
say what to install (CI caught this once, in the slow packaging test; this finds it in a second).
"""

from __future__ import annotations

import subprocess
import sys

_IMPORT_EVERYTHING_WITHOUT_NUMPY = r"""
import importlib, importlib.abc, pkgutil, sys

class NoNumpy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("numpy", "pandas"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoNumpy())
import nbagent, nbagent.cli, nbagent.magics

for module in pkgutil.walk_packages(nbagent.__path__, "nbagent."):
    try:
        importlib.import_module(module.name)
    except ModuleNotFoundError as error:
        if error.name.split(".")[0] in ("numpy", "pandas"):
            print(module.name)
"""

#: modules whose whole job is pandas data, documented as needing it
NEEDS_PANDAS = {"nbagent.data"}


def test_nbagent_imports_without_numpy_or_pandas() -> None:
    done = subprocess.run([sys.executable, "-c", _IMPORT_EVERYTHING_WITHOUT_NUMPY], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) <= NEEDS_PANDAS
