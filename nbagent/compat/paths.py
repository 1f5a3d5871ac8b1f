"""smolagents' module paths under `nbagent.`: `from nbagent.memory import ActionStep` works as in smolagents.

Each alias names the module where the real code lives, or a re-export module of
this package gathering names nbagent keeps in several places (one place for the
code, no copies); the first import of `nbagent.<alias>` loads that module and
registers it under the alias too. Only the paths smolagents users import are aliased
(docs/smolagents-compat.md lists them).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

__all__ = ["MODULE_ALIASES", "install_module_aliases"]

MODULE_ALIASES: dict[str, str] = {
    # smolagents' modules whose names live in one nbagent module
    "nbagent.agent_types": "nbagent.media.agent_types",
    "nbagent.monitoring": "nbagent.loop.monitoring",
    "nbagent.remote_executors": "nbagent.sandbox.remote",
    "nbagent.mcp_client": "nbagent.tools.mcp_client",
    # smolagents' modules whose names nbagent keeps in several places: a re-export module each
    "nbagent.memory": "nbagent.compat.memory",
    "nbagent.utils": "nbagent.compat.utils",
    "nbagent.default_tools": "nbagent.compat.default_tools",
    "nbagent.local_python_executor": "nbagent.compat.local_python_executor",
    "nbagent.tool_validation": "nbagent.compat.tool_validation",
    "nbagent._function_type_hints_utils": "nbagent.compat.function_type_hints_utils",
    # nbagent's own short path to the built-in scorers
    "nbagent.scorers": "nbagent.eval.scorers",
}
# `nbagent.agents`, `nbagent.models` and `nbagent.tools` are real packages with smolagents' names.


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target
        self._real_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self._real_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The module is already executed; the import system set its __spec__ to the alias's: put it back.
        module.__spec__ = self._real_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        real = MODULE_ALIASES.get(fullname)
        if real is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real))


def install_module_aliases() -> None:
    """Make the aliases importable (once per process)."""
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
