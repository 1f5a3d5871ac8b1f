"""The worker dies with the kernel, whatever its code does: the tie is the OS's (parent-death SIGKILL, armed by a
forking thread that lives as long as the kernel), and seccomp keeps agent code from undoing it.

A subprocess stands in for the kernel: it runs hostile agent code (``os._exit`` patched, every catchable signal
ignored, ``setsid``/``setpgid``/``prctl(PR_SET_PDEATHSIG, 0)`` tried, a 256 MiB System V segment asked for, threads
that never end), then the test SIGKILLs it and its process group, as a crashing or killed Jupyter kernel.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from nbagent.sandbox import IsolatedPythonExecutor

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")

HOSTILE = """
import ctypes, os, signal, threading, time
os._exit = lambda *args: None
os.abort = lambda: None
for number in signal.valid_signals():
    try:
        signal.signal(number, signal.SIG_IGN)
    except (OSError, ValueError, RuntimeError):
        pass
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(call):
    return "allowed" if call() >= 0 else ctypes.get_errno()
tried = {
    "setsid": errno_of(libc.setsid),
    "setpgid": errno_of(lambda: libc.setpgid(0, 0)),
    "pdeathsig": errno_of(lambda: libc.prctl(1, 0, 0, 0, 0)),
    "shmget": errno_of(lambda: libc.shmget(0, 256 << 20, 0o1600)),
}
def forever():
    while True:
        time.sleep(0.05)
for _ in range(3):
    threading.Thread(target=forever).start()
tried
"""

POLITE = """
import os
tried = {}
for name, call in (("setsid", lambda: os.setsid()), ("setpgid", lambda: os.setpgid(0, 0))):
    try:
        call()
        tried[name] = 0
    except Exception:
        tried[name] = "refused"
tried
"""

KERNEL = """
import json, sys
from nbagent.sandbox import IsolatedPythonExecutor
executor = IsolatedPythonExecutor(guards={guards}, timeout_seconds=30, additional_authorized_imports=["os"])
tried = executor({code!r}).output
print(json.dumps({{"worker": executor.worker_pid, "tried": tried}}), flush=True)
sys.stdin.read()  # until the test kills this "kernel"
"""


def _sysv_objects() -> set[str]:
    found = set()
    for kind in ("shm", "sem", "msg"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        found |= {f"{kind}:{line.split()[1]}" for line in lines}
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting to be reaped is gone too
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("guards", [False, True], ids=["guards off", "guards on"])
def test_the_worker_dies_within_two_seconds_of_a_sigkilled_kernel(guards: bool) -> None:
    before = _sysv_objects()
    script = KERNEL.format(guards=guards, code=HOSTILE if not guards else POLITE)
    kernel = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
    )
    try:
        line = kernel.stdout.readline()
        assert line, "the kernel stand-in did not run the agent's code"
        report = json.loads(line)
        worker = report["worker"]
        assert _alive(worker)
        if not guards:
            assert report["tried"] == {"setsid": 1, "setpgid": 1, "pdeathsig": 1, "shmget": 1}  # EPERM, all four
    finally:
        os.killpg(kernel.pid, signal.SIGKILL)  # the kernel and its process group
        kernel.wait()
    deadline = time.monotonic() + 2
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(worker)
    assert _sysv_objects() <= before


def test_the_tie_is_set_in_the_confined_worker_whichever_thread_forked_it() -> None:
    executor = IsolatedPythonExecutor(guards=False)
    try:
        thread = threading.Thread(target=executor, args=("x = 1",))  # an async or prepared run's thread
        thread.start()
        thread.join()
        code = (
            "import ctypes, os, threading\n"
            "value = ctypes.c_int()\n"
            "ctypes.CDLL(None).prctl(2, ctypes.byref(value), 0, 0, 0)\n"  # PR_GET_PDEATHSIG
            "(value.value, os.getppid(), sorted(t.name for t in threading.enumerate()))"
        )
        signal_number, parent, threads = executor(code).output
        assert signal_number == signal.SIGKILL and parent == os.getpid()
        assert "nbagent-worker-parent" not in threads  # no Python watch needed (or defeatable)
    finally:
        executor.close()


def test_a_worker_forked_from_a_forked_kernel_is_tied_to_that_kernel(tmp_path: Path) -> None:
    """The forker thread belongs to one process: a kernel forked after it existed makes its own."""
    executor = IsolatedPythonExecutor()
    executor("1")  # the forker thread exists in this process now
    executor.close()
    script = textwrap.dedent(
        f"""
        import os
        from nbagent.sandbox.boundary import lifetime
        lifetime.fork(lambda: os._exit(0))
        pid = os.fork()
        if pid == 0:
            from nbagent.sandbox import IsolatedPythonExecutor
            executor = IsolatedPythonExecutor()
            assert executor("6 * 7").output == 42
            open({str(tmp_path / "pid")!r}, "w").write(str(executor.worker_pid))
            os._exit(0)
        os.waitpid(pid, 0)
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    worker = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 2
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(worker)


def test_a_signal_held_for_the_child_cannot_kill_it_before_it_handles_it() -> None:
    """Stop is SIGUSR1 to the worker; sent while the worker starts (before its handler exists) it used to take the
    default action, and the stopped step read as a crash. ``held`` signals start blocked in the child."""
    from nbagent.sandbox.boundary import lifetime

    def child() -> None:
        time.sleep(0.3)  # the signal arrives now, blocked
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
        os._exit(7)

    pid = lifetime.fork(child, held=frozenset({signal.SIGUSR1}))
    os.kill(pid, signal.SIGUSR1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 7
    assert signal.SIGUSR1 not in signal.pthread_sigmask(signal.SIG_BLOCK, set())  # the kernel's mask is untouched


def _crash_first_starts(monkeypatch: pytest.MonkeyPatch, marks: Path, crashes: int) -> None:
    """Workers die of SIGSEGV while confining themselves, the first ``crashes`` times (each is a fork: they count in
    files)."""
    from nbagent.sandbox.boundary import confine

    apply = confine.apply

    def crashing_while_confining(*args: object) -> object:
        if len(list(marks.iterdir())) < crashes:
            (marks / str(os.getpid())).touch()
            os.kill(os.getpid(), signal.SIGSEGV)
        return apply(*args)

    monkeypatch.setattr(confine, "apply", crashing_while_confining)


def test_a_worker_that_crashes_while_starting_is_started_once_more_and_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _crash_first_starts(monkeypatch, tmp_path, crashes=1)
    executor = IsolatedPythonExecutor(timeout_seconds=10)
    try:
        with pytest.warns(
            RuntimeWarning, match=r"SIGSEGV.*started again; where it crashed: .*crashing_while_confining"
        ):
            assert executor("x = 6 * 7\nx").output == 42
        assert "SIGSEGV" in executor.confinement["start"]
        assert len(list(tmp_path.iterdir())) == 1
    finally:
        executor.close()


def test_a_worker_that_crashes_twice_while_starting_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _crash_first_starts(monkeypatch, tmp_path, crashes=2)
    executor = IsolatedPythonExecutor(timeout_seconds=10)
    try:
        with pytest.raises(Exception, match=r"crashed while starting \(SIGSEGV: Segmentation fault\)"):
            executor("1")
        assert executor("1 + 1").output == 2  # the next step starts a worker of its own
    finally:
        executor.close()
