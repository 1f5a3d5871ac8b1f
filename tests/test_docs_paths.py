"""Every file path README.md, CONTRIBUTING.md and docs/architecture.md name exists (a stale path sends a newcomer
nowhere)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "CONTRIBUTING.md", "docs/architecture.md"]
# A repository path: starts at a top-level folder, after a quote, a bracket, a space or a line start.
PATH = re.compile(r"(?:(?<=[`(\[\s])|^)((?:nbagent|js|notebooks|tests|benchmarks|scripts|docs|\.ci)/[\w./*\-]*[\w*])")


def named_paths(text: str) -> set[str]:
    return {match.rstrip(".") for match in PATH.findall(text)}


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_a_doc_names_exists(doc: str) -> None:
    paths = named_paths((ROOT / doc).read_text(encoding="utf-8"))
    assert paths, f"{doc} names no path (the pattern broke)"
    missing = sorted(p for p in paths if not any(ROOT.glob(p)))
    assert not missing, f"{doc} names paths that do not exist: {missing}"


def test_the_pattern_finds_a_stale_path() -> None:
    assert named_paths("see `nbagent/control.py` and (docs/x.md), not ~/.cache/nbagent/wheels") == {
        "nbagent/control.py",
        "docs/x.md",
    }
