"""Which executor runs a CodeAgent's code: "isolated" (the default where it works) or "local".

* "isolated" — `IsolatedPythonExecutor`: a worker process forked from this one, confined
  by the OS on Linux (no network, no process spawn, files limited, environment scrubbed),
  killed at its deadline; a crash costs the worker, never this process. The boundary.
* "local" — `LocalPythonExecutor`: the code runs in this process behind an AST rewrite
  and guards. It protects against a *mistaken* model, not a hostile one: use it for
  trusted code, or where there is no `fork` (Windows).

The default is "isolated" wherever the platform can fork; `NBAGENT_EXECUTOR=local` (or
`executor_type="local"`) chooses the other.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from nbagent.sandbox import IsolatedPythonExecutor, LocalPythonExecutor

__all__ = ["EXECUTOR_TYPES", "default_executor_type", "make_executor"]

EXECUTOR_TYPES = ("isolated", "local")
ENV_VAR = "NBAGENT_EXECUTOR"
_EXECUTORS = {"isolated": IsolatedPythonExecutor, "local": LocalPythonExecutor}
_NO_FORK_NOTICE = (
    "this platform cannot fork a worker process, so the agent's code runs in this process "
    "(executor_type='local'): its guards protect against a mistaken model, not a hostile one."
)


def default_executor_type() -> str:
    """`$NBAGENT_EXECUTOR` if set, else "isolated" where the platform can fork, else "local"."""
    chosen = os.environ.get(ENV_VAR, "").strip().lower()
    if chosen:
        return _checked(chosen, f"${ENV_VAR}")
    return "isolated" if hasattr(os, "fork") else "local"


def make_executor(executor_type: str | None, **options: Any) -> Any:
    """The executor of that type, built with `options` (the executors share their arguments)."""
    kind = default_executor_type() if executor_type is None else _checked(executor_type, "executor_type")
    if kind == "isolated" and not hasattr(os, "fork"):
        warnings.warn(f"nbagent: {_NO_FORK_NOTICE}", RuntimeWarning, stacklevel=3)
        kind = "local"
    return _EXECUTORS[kind](**options)


def _checked(kind: str, where: str) -> str:
    if kind not in EXECUTOR_TYPES:
        raise ValueError(
            f"{where}={kind!r} is not an nbagent executor: use 'isolated' (a confined worker process, the default) "
            "or 'local' (this process, for trusted code). Remote executors (e2b, docker, modal, wasm) are not supported."
        )
    return kind
