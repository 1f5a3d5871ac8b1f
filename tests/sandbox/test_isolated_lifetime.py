"""The isolated worker lives as long as the kernel process: not tied to the thread that forked it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the isolated executor forks")


def test_the_worker_outlives_the_thread_that_forked_it() -> None:
    from nbagent.sandbox import IsolatedPythonExecutor

    executor = IsolatedPythonExecutor()
    try:
        thread = threading.Thread(target=executor, args=("total = 40",))  # an async or prepared run's thread
        thread.start()
        thread.join()
        pid = executor.worker_pid
        time.sleep(1.0)  # the forking thread has ended (PR_SET_PDEATHSIG would have killed the worker by now)
        assert executor("total + 2").output == 42
        assert executor.worker_pid == pid  # the same worker: its state was kept
    finally:
        executor.close()


def test_the_worker_ends_soon_after_the_kernel_process_dies(tmp_path) -> None:
    script = textwrap.dedent(
        f"""
        import os
        from nbagent.sandbox import IsolatedPythonExecutor
        executor = IsolatedPythonExecutor()
        executor("x = 1")
        open({str(tmp_path / "pid")!r}, "w").write(str(executor.worker_pid))
        os._exit(0)  # the "kernel" dies without cleaning up
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    pid = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for init to reap it is gone too
        return stat.read().split(")")[-1].split()[0] != "Z"
