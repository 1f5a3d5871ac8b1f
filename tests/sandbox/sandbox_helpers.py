"""Run a snippet natively (the reference) and in the sandbox, for the semantics tests.

A module of its own, not conftest: several conftest modules exist and only one can be imported by that name.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import io
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, LocalPythonExecutor

#: Stdlib modules the semantics snippets use beyond smolagents' base set.
SEMANTICS_IMPORTS = [
    "asyncio", "contextlib", "dataclasses", "enum", "functools", "operator", "typing", "abc", "string", "fractions",
    "decimal", "json", "textwrap", "heapq", "bisect",
]  # fmt: skip


@dataclass
class Outcome:
    value: Any
    logs: str
    error: str | None  # exception class name


def run_native(code: str) -> Outcome:
    """CPython running the code like a notebook cell: the value of a trailing expression is the output.

    It runs in a fresh thread, so that state other tests leave in the main thread (an event loop
    marked as running, say) cannot change the reference result.
    """
    outcome: list[Outcome] = []
    thread = threading.Thread(target=lambda: outcome.append(_run_native_here(code)))
    thread.start()
    thread.join()
    return outcome[0]


def _run_native_here(code: str) -> Outcome:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    value, error = None, None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(tree, "<native>", "exec", dont_inherit=True), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<native>", "eval", dont_inherit=True), namespace)
        except Exception as exc:
            error = type(exc).__name__
    return Outcome(value, out.getvalue(), error)


def run_sandboxed(code: str, **kwargs: Any) -> Outcome:
    kwargs.setdefault("additional_authorized_imports", SEMANTICS_IMPORTS)
    executor = LocalPythonExecutor(**kwargs)
    try:
        result = executor(code)
    except ExecutionError as exc:
        return Outcome(None, exc.logs, exc.cause_type)
    return Outcome(result.output, result.logs, None)


# --- the boundary's tests ----------------------------------------------------------------------------------------


def outcome(executor: IsolatedPythonExecutor, code: str) -> Any:
    """The code's value, or the ExecutionError it ended with (an attack test asserts on either)."""
    try:
        return executor(code).output
    except ExecutionError as exc:
        return exc


def assert_next_call_works(executor: IsolatedPythonExecutor) -> None:
    """After an attack: the executor still answers, with a plain value that is not a final answer."""
    result = executor("6 * 7")
    assert result.output == 42 and not result.is_final_answer


def assert_protocol_anomaly(executor: IsolatedPythonExecutor, result: Any) -> None:
    """The worker broke the protocol: the step says so, a fresh worker took over, and it answers."""
    assert isinstance(result, ExecutionError) and result.cause_type == "WorkerProtocolError", result
    assert any("fresh worker" in note for note in executor.last_notes)
    assert "[nbagent]" in (result.logs or "")
    assert_next_call_works(executor)


def _status(key: str) -> int:
    return int(re.search(rf"{key}:\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) * 1024


def host_growth(run: Callable[[], Any]) -> tuple[int, Any]:
    """The host's peak RSS growth (bytes) while ``run`` runs, and its result or the ExecutionError it raised."""
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # resets the peak (VmHWM) to the current RSS
    base = _status("VmRSS")
    try:
        result = run()
    except ExecutionError as exc:
        result = exc
    return _status("VmHWM") - base, result


#: Agent code (guards off) that finds the worker's socket to the host: ``to_the_host(act)`` calls ``act(sock)`` on each
#: Unix stream socket among the worker's descriptors (the host's channel among them), as a hijacked worker would.
TO_THE_HOST = """
import os, socket
def to_the_host(act):
    for fd in range(3, 256):
        try:
            s = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            if s.family == socket.AF_UNIX and s.type == socket.SOCK_STREAM:
                act(s)
        except OSError:
            pass
        finally:
            s.close()
"""
