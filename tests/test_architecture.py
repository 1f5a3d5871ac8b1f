"""The architecture, enforced: arrows point down, no cycles, plain scripts import nothing of Jupyter.

Every import counts — at module level, inside functions, under `TYPE_CHECKING` —
because an import hidden in a function is still a dependency (it only fails later).
import-linter checks the same contract in CI (`lint-imports`, see pyproject.toml);
this test is the one that explains a violation in a sentence.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nbagent"

# Lowest first. A module may import its own package and any lower layer.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "text", "media", "data", "_version"),
    ("sandbox",),
    ("tools",),
    ("models", "prompts"),
    ("record",),
    ("loop",),
    ("views",),
    ("notebook",),
    ("agents",),
    ("magics", "cli", "gradio_ui", "compat", "eval", ""),  # "" is the package root
]
# The one declared exception: smolagents' AgentMemory.replay() prints with the console.
ALLOWED_UPWARD = {("nbagent.record.memory", "nbagent.views.console")}
ROOT_FILES_AT_MOST = 8


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every nbagent module `path` imports, wherever the import statement is."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return {target for target in found if target == "nbagent" or target.startswith("nbagent.")}


def top_part(module: str) -> str:
    """The first name under nbagent ("" for the root itself)."""
    return module.split(".")[1] if module.count(".") else ""


def layer_of(module: str) -> int:
    top = top_part(module)
    return next(index for index, names in enumerate(LAYERS) if top in names)


def all_modules() -> dict[str, set[str]]:
    modules = {module_name(path): imports_of(path) for path in PACKAGE.rglob("*.py")}
    return {name: {t for t in targets if _exists(t, modules)} for name, targets in modules.items()}


def _exists(target: str, modules: dict[str, set[str]]) -> bool:
    return target in modules  # `from pkg import name` also yields pkg.name; keep only real modules


def test_every_module_has_a_layer() -> None:
    unknown = sorted({top_part(m) for m in all_modules()} - {n for names in LAYERS for n in names})
    assert not unknown, f"modules outside the layers of tests/test_architecture.py: {unknown}"


def test_imports_point_down() -> None:
    violations = []
    for importer, targets in sorted(all_modules().items()):
        for target in sorted(targets):
            same_package = top_part(importer) == top_part(target) and top_part(importer) != ""
            if same_package or (importer, target) in ALLOWED_UPWARD:
                continue
            if layer_of(target) > layer_of(importer):
                violations.append(
                    f"{importer} (layer {layer_of(importer)}) imports {target} (layer {layer_of(target)})"
                )
    assert not violations, "upward imports:\n" + "\n".join(violations)


# The sandbox's rooms, lowest first: the boundary speaks the wire and runs the guards inside the worker; the guards
# speak the wire's plain values; the wire trusts nothing and imports neither ("errors" is the sandbox's base).
SANDBOX_ROOMS = ["errors", "wire", "guards", "boundary"]


def test_the_sandbox_rooms_point_down() -> None:
    violations = []
    for importer, targets in sorted(all_modules().items()):
        room = _sandbox_room(importer)
        for target in sorted(targets):
            there = _sandbox_room(target)
            if room is not None and there is not None and SANDBOX_ROOMS.index(there) > SANDBOX_ROOMS.index(room):
                violations.append(f"{importer} ({room}) imports {target} ({there})")
    assert not violations, "upward imports inside the sandbox:\n" + "\n".join(violations)


def _sandbox_room(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["nbagent", "sandbox"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in SANDBOX_ROOMS else None


def test_sibling_modules_have_no_cycles() -> None:
    """Within each package, the modules' import graph (package __init__ left out) has no cycle."""
    graph = all_modules()
    for importer in graph:
        graph[importer] = {t for t in graph[importer] if _siblings(importer, t)}
    cycle = _find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _siblings(first: str, second: str) -> bool:
    return first != second and first.rpartition(".")[0] == second.rpartition(".")[0] and first.count(".") > 1


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_root_holds_few_modules() -> None:
    files = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(files) <= ROOT_FILES_AT_MOST, f"nbagent/ has {len(files)} modules at its root: {files}"


def test_the_checker_sees_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    source = textwrap.dedent(
        """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from nbagent.agents import MultiStepAgent
        def later():
            from ..notebook import widget
        """
    )
    probe = PACKAGE / "record" / "_probe_for_test.py"
    probe.write_text(source)
    try:
        assert {"nbagent.agents", "nbagent.notebook", "nbagent.notebook.widget"} <= imports_of(probe)
    finally:
        probe.unlink()


SCRIPT = """
import sys
from nbagent import CodeAgent, ScriptedModel
model = ScriptedModel(["```python\\nfinal_answer(6 * 7)\\n```"])
answer = CodeAgent(model=model, verbosity_level={level}).run("Six times seven?")
assert answer == 42, answer
print(sorted({{m.split('.')[0] for m in sys.modules}} & {{"IPython", "ipywidgets", "ipykernel", "anywidget", "rich"}}))
"""


@pytest.mark.parametrize(("level", "expected"), [(-1, "[]"), (1, "['rich']")])
def test_a_plain_script_run_imports_nothing_of_jupyter(level: int, expected: str) -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(level=level)], capture_output=True, text=True, timeout=120, check=True
    )
    assert run.stdout.strip().splitlines()[-1] == expected
