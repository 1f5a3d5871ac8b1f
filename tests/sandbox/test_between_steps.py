"""Between steps and beyond counts (issue 29, items 4 and 5), as an attacker would try, through the public executor.

* a rewind re-makes the agent's definitions with every tool refused: a default argument, decorator or class body
  that calls a tool does not call the kernel's tool again (its call count stays 0), and the note says so;
* the worker is stopped between calls: a thread the code started burns no CPU after the call returned (read from
  ``/proc/<worker>/stat`` in the kernel), the next call works, and ``close`` still ends a stopped worker;
* threads are bounded from outside the worker (a pids cgroup, or the kernel's count): a thread bomb is cut off, the
  kernel can still start a thread, the worker still answers (or a fresh one does);
* an error carrying 10 MB of text comes back cut like printed output.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from nbagent.sandbox import IsolatedPythonExecutor
from nbagent.sandbox.boundary import tasks
from nbagent.sandbox.errors import ExecutionError

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the worker's confinement and /proc are Linux's")
GUARDS = pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])

SPIN = (
    "import threading\ndef spin():\n    while True:\n        pass\nthreading.Thread(target=spin, daemon=True).start()"
)
BOMB = """import threading
threading.stack_size(65536)
ev = threading.Event()
started, refused = 0, ''
try:
    while started < 3000:
        threading.Thread(target=ev.wait, daemon=True).start()
        started += 1
except RuntimeError as exc:
    refused = str(exc)
(started, refused)"""


def _stat(pid: int) -> tuple[str, int]:
    """(state, utime + stime in clock ticks) of the worker, read by the kernel."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return fields[0], int(fields[11]) + int(fields[12])


def _stopped(pid: int) -> bool:
    """The worker reaches the stopped state soon after the call returned (a signal is delivered asynchronously)."""
    deadline = time.monotonic() + 2
    while _stat(pid)[0] != "T" and time.monotonic() < deadline:
        time.sleep(0.01)
    return _stat(pid)[0] == "T"


def _kernel_can_start_a_thread() -> bool:
    done = threading.Event()
    thread = threading.Thread(target=done.set)
    thread.start()
    thread.join(5)
    return done.is_set()


@GUARDS
def test_a_rewind_runs_definitions_again_without_calling_a_tool(guards: bool) -> None:
    calls: list[str] = []

    def send_mail(to: str) -> str:
        calls.append(to)
        return "sent"

    namespace: dict = {}
    executor = IsolatedPythonExecutor(namespace=namespace, guards=guards)
    executor.send_tools({"send_mail": send_mail})
    try:
        executor.checkpoint(1)
        executor("def notify(receipt=send_mail('boss@example.com')):\n    return receipt\ndef plain():\n    return 5")
        executor.checkpoint(2)
        executor("x = 1")
        assert calls == ["boss@example.com"]  # the step itself called it, once
        rewound = executor.rewind(2)
        assert calls == ["boss@example.com"]  # the rewind did not call it again
        assert rewound.reran == ["notify", "plain"] and rewound.refused_tools == ["send_mail"]
        assert "no tool was called while they ran (refused: send_mail)" in rewound.note
        assert "notify" in rewound.unrestorable and "rewind re-makes" in rewound.unrestorable["notify"]
        assert executor("send_mail('me@example.com')").output == "sent"  # tools work again in the next step
        assert calls == ["boss@example.com", "me@example.com"]
    finally:
        executor.close()


@GUARDS
def test_the_worker_is_stopped_between_calls_and_close_still_ends_it(guards: bool) -> None:
    executor = IsolatedPythonExecutor(guards=guards)
    try:
        executor("x = 6")
        pid = executor.worker_pid
        assert pid is not None and _stopped(pid)
        assert executor("x * 7").output == 42
        assert _stopped(pid)
    finally:
        executor.close()
    assert not Path(f"/proc/{pid}").exists()


def test_a_thread_the_code_started_burns_no_cpu_between_calls() -> None:
    executor = IsolatedPythonExecutor(guards=False)
    try:
        executor(SPIN)
        pid = executor.worker_pid
        assert pid is not None and _stopped(pid)
        before = _stat(pid)
        time.sleep(1.0)
        assert _stat(pid) == before  # stopped, and not one tick more in a second
        assert executor("6 * 7").output == 42
    finally:
        executor.close()


@pytest.mark.parametrize("cgroup", [True, False], ids=["this machine", "no pids cgroup"])
def test_a_thread_bomb_is_bounded_and_the_kernel_can_still_start_a_thread(
    cgroup: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not cgroup:  # as where the kernel may make no cgroup: the kernel counts
        monkeypatch.setitem(tasks._found, os.getpid(), None)
    executor = IsolatedPythonExecutor(guards=False)
    try:
        executor("1")
        mode = executor.confinement["tasks"]
        try:
            started, refused = executor(BOMB).output
            assert started < tasks.DEFAULT_MAX_TASKS and refused  # the OS refused the thread past the bound
            assert tasks.count(executor.worker_pid) <= tasks.DEFAULT_MAX_TASKS
            assert "by a pids cgroup" in mode
        except ExecutionError as exc:  # the kernel counted and killed the worker
            assert "max_tasks" in str(exc) and "counted by the kernel" in mode
        assert _kernel_can_start_a_thread()
        assert executor("6 * 7").output == 42
    finally:
        executor.close()


@GUARDS
def test_an_error_of_ten_megabytes_comes_back_cut_like_printed_output(guards: bool) -> None:
    executor = IsolatedPythonExecutor(guards=guards, max_print_outputs_length=5_000)
    try:
        with pytest.raises(ExecutionError) as failure:
            executor("print('p' * 10_000_000)\nraise ValueError('m' * 10_000_000)")
        assert len(str(failure.value)) < 10_000 and "ValueError" in str(failure.value)
        assert len(failure.value.logs) < 6_000 and "truncated" in failure.value.logs
        assert executor("6 * 7").output == 42
    finally:
        executor.close()
