"""Should the frames a task names be copies by default (`%%agent --copy`)? What copying costs, and how often runs change
them (issue 28).

Two measurements in one run:

* **cost**: ms per step that copying a task's frame adds, for a 1 MB and a 100 MB frame (float columns), in both
  executors: the isolated worker (the default: a fork, so the agent's copy is the fork's own pages and
  nothing is copied; its changes stay there) and the local executor (the notebook's process: `InputCopies` copies
  each frame the step's code mentions: lazily now, deep-copied before issue 28's change, both measured here). Beside
  them, what one copy takes: `copy.deepcopy` (eager, every byte) and
  pandas 3's lazy copy (`DataFrame.copy(deep=False)` under copy-on-write: new objects over the same buffers, a
  column is copied only when written). A step that reads the frame (`df['a'].sum()`) and one that changes it in place
  (`df['b'] = df['a'] * 2`).
* **logs**: the default model's runs of `benchmarks/data_questions.py --log` (one JSON line per question, each step's
  code in `steps[i]['output']`): how many runs' code changed a frame the task names (`df[...] = ...`, `df.loc[...] =`,
  `df.method(..., inplace=True)`, `del df[...]`, rebinding `df = ...`) in code that ran, and how many of those
  questions asked for a change.

    .venv/bin/python benchmarks/copy_inputs.py [--logs /tmp/messy_after3.jsonl /tmp/clean_after.jsonl] [--repeat 5]
"""

from __future__ import annotations

import argparse
import ast
import copy
import functools
import json
import re
import time
from pathlib import Path

SIZES = {"1 MB": 2**20, "100 MB": 100 * 2**20}
READ = "total = df['a'].sum()"
CHANGE = "df['b'] = df['a'] * 2"
#: Words of a question that asks for a change to its data (none of the benchmark's 44 does).
ASKS_FOR_CHANGE = re.compile(
    r"\b(add|clean|fix|convert|replace|drop|remove|rename|standardi[sz]e|fill|update|change|modify|parse|overwrite|"
    r"normali[sz]e|dedupe|deduplicate|sort)\b[^?]*`",
    re.IGNORECASE,
)
_PANDAS_IN_PLACE = {"loc", "iloc", "at", "iat"}
_MUTATING_METHODS = {"insert", "pop", "update", "__setitem__", "__delitem__"}


# -- cost ------------------------------------------------------------------------------------------------------------


def frame(nbytes: int):
    """A frame of ``nbytes`` of float64 numbers in 8 columns (a copy's cost is its bytes)."""
    import numpy as np
    import pandas as pd

    rows = nbytes // (8 * 8)
    rng = np.random.default_rng(0)
    return pd.DataFrame({name: rng.random(rows) for name in "abcdefgh"})


def best_ms(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return min(times)


def step_ms(kind: str, code: str, copying: str, value) -> float:
    """One step running ``code`` on a notebook holding ``df``, in ms; ``copying``: "no" (shared), "lazy"
    (``copy_inputs``) or "deep" (``copy_inputs`` with every copy a ``copy.deepcopy``, as before)."""
    from nbagent.sandbox import IsolatedPythonExecutor, LocalPythonExecutor
    from nbagent.sandbox.guards import copies

    make = IsolatedPythonExecutor if kind == "isolated" else LocalPythonExecutor
    extra = {"max_transfer_bytes": 2**30, "memory_limit_bytes": 4 * 2**30} if kind == "isolated" else {}
    lazy = copies.private_copy
    copies.private_copy = copy.deepcopy if copying == "deep" else lazy
    namespace = {"df": value}
    executor = make(additional_authorized_imports=["pandas"], namespace=namespace, copy_inputs=copying != "no", **extra)
    try:
        executor("1")  # the worker starts (isolated); nothing to copy
        started = time.perf_counter()
        executor(code)
        elapsed = (time.perf_counter() - started) * 1000
        assert copying == "no" or namespace["df"] is value
        return elapsed
    finally:
        copies.private_copy = lazy
        if hasattr(executor, "close"):
            executor.close()


def best_steps(kind: str, code: str, ways: tuple[str, ...], value, repeat: int) -> dict[str, float]:
    """The best ms of each way, the ways taking turns (a loaded machine's drift falls on all of them alike)."""
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(repeat):
        for way in ways:
            best[way] = min(best[way], step_ms(kind, code, way, value))
    return best


def measure_cost(repeat: int) -> tuple[list[str], dict[str, float]]:
    """The table's lines, and the 100 MB frame's added ms per step by executor and copy (for the summary)."""
    lines, largest = [], {}
    for label, nbytes in SIZES.items():
        value = frame(nbytes)
        eager = best_ms(functools.partial(copy.deepcopy, value), repeat)
        lazy = best_ms(functools.partial(value.copy, deep=False), repeat)
        lines.append(
            f"{label} frame ({len(value):,} rows): one copy.deepcopy {eager:.2f} ms, one lazy copy (pandas "
            f"copy-on-write) {lazy:.3f} ms ({eager / max(lazy, 1e-6):.0f}x less)"
        )
        for kind, ways in (("isolated", ("no", "lazy")), ("local", ("no", "lazy", "deep"))):
            for what, code in (("reads it", READ), ("changes it", CHANGE)):
                ms = best_steps(kind, code, ways, value, repeat)
                added = ", ".join(f"{way} copy adds {ms[way] - ms['no']:+8.2f} ms" for way in ways[1:])
                lines.append(f"  {kind:>8} step that {what:<10}: shared {ms['no']:8.2f} ms; {added}")
                if what == "changes it":
                    largest.update({f"{kind} {way}": ms[way] - ms["no"] for way in ways[1:]})
    return lines, largest


# -- logs ------------------------------------------------------------------------------------------------------------


def code_of(output: str) -> str:
    found = re.findall(r"```(?:python|py)?\n(.*?)(?:```|$)", output or "", re.DOTALL)
    return "\n".join(found)


def ran_lines(step: dict) -> int | None:
    """The first code line that did not run to its end: None (all ran), the failing line, or 0 (the code did not run:
    no code block, cut off, refused before it ran)."""
    error = step.get("error") or ""
    if not error or "was refused" in error.split("\n")[0]:
        return None  # ran to the end (a refused final_answer or chart ran the whole code first)
    failed = re.match(r"Error on line (\d+) of the code", error)
    return int(failed.group(1)) if failed else 0


def changes_to(code: str, names: set[str], upto: int | None) -> list[str]:
    """The statements of ``code`` (before line ``upto``) that change one of ``names`` in place or rebind it."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if upto is not None and getattr(node, "lineno", 0) >= upto:  # the failing line did not finish
            continue
        kind = _change_kind(node, names)
        if kind:
            found.append(kind)
    return found


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _change_kind(node: ast.AST, names: set[str]) -> str | None:
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        for target in targets:
            bound = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            if any(isinstance(leaf, ast.Name) and leaf.id in names for leaf in bound):
                return "in place" if isinstance(node, ast.AugAssign) else "rebinds"
            if isinstance(target, (ast.Subscript, ast.Attribute)) and _root(target) in names:
                where = target.value if isinstance(target, ast.Subscript) else target
                inner = where.attr if isinstance(where, ast.Attribute) else None
                return f"{inner}[...] =" if inner in _PANDAS_IN_PLACE else "in place"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _root(node.func.value) in names:
        if any(k.arg == "inplace" and getattr(k.value, "value", False) is True for k in node.keywords):
            return "inplace=True"
        if node.func.attr in _MUTATING_METHODS and isinstance(node.func.value, ast.Name):
            return f".{node.func.attr}()"
    return None


def measure_logs(paths: list[Path]) -> tuple[list[str], dict[str, int]]:
    lines = []
    counts = {"runs": 0, "changed": 0, "asked": 0, "changed_unasked": 0}
    kinds: dict[str, int] = {}
    for path in paths:
        for raw in path.read_text().splitlines():
            run = json.loads(raw)
            named = set(re.findall(r"`([A-Za-z_]\w*)`", run["question"]))
            seen = []
            for step in run.get("steps", []):
                upto = ran_lines(step)
                if upto == 0:
                    continue
                seen += changes_to(code_of(step.get("output", "")), named, upto)
            asked = bool(ASKS_FOR_CHANGE.search(run["question"]))
            counts["runs"] += 1
            counts["asked"] += asked
            if seen:
                counts["changed"] += 1
                counts["changed_unasked"] += not asked
                for kind in set(seen):
                    kinds[kind] = kinds.get(kind, 0) + 1
                lines.append(f"  {run['set']} {run['number']:>2} ({run['kind']}): {', '.join(sorted(set(seen)))}")
    counts.update(kinds)
    return lines, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", nargs="*", type=Path, default=[], help="data_questions.py --log files")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many times per measurement")
    args = parser.parse_args()
    lines, largest = measure_cost(args.repeat)
    print("\n".join(lines))
    cost = (
        f"copying a 100 MB frame a step changes adds {largest['isolated lazy']:+.0f} ms (isolated), "
        f"{largest['local lazy']:+.0f} ms (local, lazy) vs {largest['local deep']:+.0f} ms (local, deep)"
    )
    if not args.logs:
        print(f"summary: {cost}; pass --logs to count how often runs change the task's frames")
        return
    lines, counts = measure_logs(args.logs)
    print(
        f"runs whose code (that ran) changed or rebound a frame the task names: {counts['changed']} of {counts['runs']}"
    )
    print("\n".join(lines))
    kinds = {k: v for k, v in counts.items() if k not in ("runs", "changed", "asked", "changed_unasked")}
    print("  by kind (runs): " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])))
    share = counts["changed"] / max(counts["runs"], 1)
    print(
        f"summary: {counts['changed']}/{counts['runs']} runs ({share:.0%}) changed a frame the task names, "
        f"{counts['changed_unasked']} of them unasked ({counts['asked']} of {counts['runs']} questions asked for a "
        f"change); {cost}"
    )


if __name__ == "__main__":
    main()
