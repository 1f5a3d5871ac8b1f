"""The one answer to "are we in a Jupyter kernel?" — without importing IPython when it is not loaded."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["in_kernel", "current_kernel", "current_shell"]


def current_shell() -> Any:
    """The running IPython shell, or None (IPython is never imported here: no shell if it is not loaded)."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    return get_ipython() if get_ipython is not None else None


def current_kernel() -> Any:
    """The ipykernel kernel this code runs in, or None (a terminal IPython or a script has none)."""
    shell = current_shell()
    return getattr(shell, "kernel", None) if shell is not None else None


def in_kernel() -> bool:
    """True inside a Jupyter kernel (where widgets can be displayed)."""
    return current_kernel() is not None
