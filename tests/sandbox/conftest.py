"""Fixtures for the sandbox tests."""

from __future__ import annotations

import pytest

from nbagent.sandbox import LocalPythonExecutor


@pytest.fixture
def executor() -> LocalPythonExecutor:
    return LocalPythonExecutor(timeout_seconds=10)
