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


def test_a_killed_kernels_scratch_directory_is_swept_by_the_next_executor_and_a_live_ones_is_kept(tmp_path) -> None:
    """A kernel killed with its executor open never cleans up; the next scratch directory made removes what no
    live kernel holds (the lock dies with its process), never a live kernel's or another user's."""
    from nbagent.sandbox.boundary.scratch import PREFIX, Scratch

    kernel = textwrap.dedent(
        """
        import os, sys
        from nbagent.sandbox import IsolatedPythonExecutor
        executor = IsolatedPythonExecutor()
        executor("x = 1")
        print(executor.scratch_dir, flush=True)
        if sys.argv[1] == "die":
            os._exit(0)  # killed: no cleanup runs
        sys.stdin.read()  # alive until the test closes its input
        """
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    died = subprocess.run([sys.executable, "-c", kernel, "die"], env=env, capture_output=True, text=True, timeout=60)
    dead_dir = died.stdout.strip()
    assert os.path.isdir(dead_dir) and dead_dir.startswith(str(tmp_path))
    live = subprocess.Popen(
        [sys.executable, "-c", kernel, "live"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        live_dir = live.stdout.readline().strip()
        foreign = tmp_path / f"{PREFIX}someone-else"
        foreign.mkdir()
        if os.getuid() == 0:
            os.chown(foreign, 65534, 65534)
        assert not os.path.exists(dead_dir)  # the next kernel's executor swept it
        scratch = Scratch(parent=str(tmp_path))
        assert os.path.isdir(live_dir) and os.path.isdir(scratch.path)
        assert foreign.is_dir() == (os.getuid() == 0)  # not ours (as root): kept; ours and unheld: swept
        scratch.remove()
        assert not os.path.exists(scratch.path)
    finally:
        live.stdin.close()
        live.wait(timeout=30)
    assert not os.path.exists(live_dir)  # it ended without closing: the finalizer at exit removed it


def test_scratch_directories_made_at_once_on_threads_all_survive_each_others_sweeps(tmp_path) -> None:
    """An evaluation on threads lost samples: a sweep between another thread's making and locking removed its
    directory (FileNotFoundError)."""
    from concurrent.futures import ThreadPoolExecutor

    from nbagent.sandbox.boundary.scratch import Scratch

    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(lambda _: Scratch(str(tmp_path)), range(200)))
    try:
        assert all(os.path.isdir(scratch.path) for scratch in made)
        assert len({scratch.path for scratch in made}) == 200 and not list(tmp_path.glob("nbagent-making-*"))
    finally:
        for scratch in made:
            scratch.remove()
