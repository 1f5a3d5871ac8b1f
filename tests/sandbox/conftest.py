"""Fixtures for the sandbox tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagent.sandbox import LocalPythonExecutor


@pytest.fixture
def executor() -> LocalPythonExecutor:
    return LocalPythonExecutor(timeout_seconds=10)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory of the test's own (set before a worker forks); a test module may plant secrets in its own."""
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path
