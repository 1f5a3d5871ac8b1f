"""Which executor runs a CodeAgent's code: "isolated" (the default where it works) or "local".

* "isolated" — `IsolatedPythonExecutor`: a worker process forked from this one, confined
  by the OS on Linux (no network, no process spawn, files limited, environment scrubbed),
  killed at its deadline; a crash costs the worker, never this process. The boundary.
* "local" — `LocalPythonExecutor`: the code runs in this process behind an AST rewrite
  and guards. It protects against a *mistaken* model, not a hostile one: use it for
  trusted code, and only when asked for by name.

The default is "isolated"; `NBAGENT_EXECUTOR=local` (or `executor_type="local"`, `--executor local`) chooses the
other. Where the platform cannot fork (Windows) there is no silent fallback: an agent that did not ask for the local
executor by name fails at once with `NoForkError`, which says why and how to ask (a hostile model's code would
otherwise run in the kernel's own process, next to the widget that owns the page, without the person knowing).
A person's own `PythonExecutor` (`CodeAgent(executor=...)`) runs the code where it chooses (`adopt_executor`).
"""

from __future__ import annotations

import os
from typing import Any

from nbagent.sandbox import BASE_BUILTIN_MODULES, IsolatedPythonExecutor, LocalPythonExecutor, PythonExecutor

__all__ = [
    "EXECUTOR_TYPES",
    "NoForkError",
    "adopt_executor",
    "default_executor_type",
    "make_executor",
    "resolve_executor_type",
]

EXECUTOR_TYPES = ("isolated", "local")
ENV_VAR = "NBAGENT_EXECUTOR"
_EXECUTORS = {"isolated": IsolatedPythonExecutor, "local": LocalPythonExecutor}
_NO_FORK = (
    "this platform has no os.fork, so nbagent cannot start the isolated worker that confines the agent's code. "
    "The local executor would run that code in this process (the kernel's, which owns the notebook page), behind "
    "guards that protect against a mistaken model, not a hostile one, so it is used only when asked for by name: "
    "CodeAgent(executor_type='local'), %%agent --executor local, or NBAGENT_EXECUTOR=local."
)


class NoForkError(ValueError):
    """The isolated executor was wanted (by default or by name) where the platform cannot fork: a choice this
    platform cannot honour, reported like any bad option (the CLI and the magic print it as one line)."""


def default_executor_type() -> str:
    """`$NBAGENT_EXECUTOR` if set, else "isolated"; `NoForkError` where the platform cannot fork and nothing chose."""
    chosen = os.environ.get(ENV_VAR, "").strip().lower()
    if chosen:
        return _checked(chosen, f"${ENV_VAR}")
    if not hasattr(os, "fork"):
        raise NoForkError(_NO_FORK)
    return "isolated"


def resolve_executor_type(executor_type: str | None, where: str = "executor_type") -> str:
    """The executor that runs: `executor_type` checked (None: the default); `NoForkError` for "isolated" where the
    platform cannot fork."""
    kind = default_executor_type() if executor_type is None else _checked(executor_type, where)
    if kind == "isolated" and not hasattr(os, "fork"):
        raise NoForkError(_NO_FORK)
    return kind


def make_executor(executor_type: str | None, **options: Any) -> Any:
    """The executor of that type, built with `options` (the executors share their arguments)."""
    return _EXECUTORS[resolve_executor_type(executor_type)](**options)


def adopt_executor(executor: Any, executor_type: str | None, imports: list[str]) -> tuple[Any, str]:
    """A person's own executor (`CodeAgent(executor=...)`, smolagents' option) and the `executor_type` the agent
    records: the one given, else "local" for a `LocalPythonExecutor` and "isolated" for any other (a saved agent
    is rebuilt with a type, never a person's object: the boundary is the safe guess). An executor without
    `authorized_imports` is given the agent's (`imports` over the base modules) for its prompt."""
    if not isinstance(executor, PythonExecutor):
        raise TypeError(
            f"executor= takes a PythonExecutor (subclass nbagent.PythonExecutor: send_tools, send_variables and "
            f"__call__(code) -> CodeOutput), got {type(executor).__name__}"
        )
    if getattr(executor, "authorized_imports", None) is None:
        executor.authorized_imports = sorted(set(BASE_BUILTIN_MODULES) | set(imports))
    kind = executor_type or ("local" if isinstance(executor, LocalPythonExecutor) else "isolated")
    return executor, _checked(kind, "executor_type")


def _checked(kind: str, where: str) -> str:
    if kind not in EXECUTOR_TYPES:
        raise ValueError(
            f"{where}={kind!r} is not an nbagent executor: use 'isolated' (a confined worker process, the default) "
            "or 'local' (this process, for trusted code). Remote executors (e2b, docker, modal, wasm) are not supported."
        )
    return kind
