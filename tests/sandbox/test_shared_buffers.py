"""Large buffers come back in sealed memory files (issue 22): honest values at memory speed, hostile workers refused.

Everything goes through the public executor and a real worker, with ``shared_buffers`` set (the default only where
shared memory gets huge pages, issue 32; tests/sandbox/test_big_results.py covers the socket path taken elsewhere). The honest tests run with the guards on and off; the
hostile ones turn the worker's own code against the protocol (the guards off: the agent's code patches the worker's
``shared`` module or its ``Worker``, which is what code past the guards can do), and check that the host survives with
its memory and descriptors bounded, and that the next call works.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sandbox_helpers import TO_THE_HOST, assert_next_call_works, assert_protocol_anomaly, host_growth, outcome

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, RemoteObject
from nbagent.sandbox.wire import shared

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the isolated worker's tests run on Linux"),
    pytest.mark.skipif(not shared.supported(), reason="no memfd here: every buffer travels inline"),
]

MB = 1_000_000

VALUES = """
import numpy as np, pandas as pd
n = 300_000
arr = np.arange(2 * n, dtype=np.float64).reshape(n, 2)
view = arr[::2, 1]
empty = np.zeros((0, 5), dtype=np.int16)
small = np.arange(10, dtype=np.uint8)
frame = pd.DataFrame({
    "f": np.linspace(0, 1, n),
    "i": np.arange(n),
    "t": pd.date_range("2024-01-01", periods=n, freq="min", tz="Europe/Paris"),
    "d": pd.to_timedelta(np.arange(n), unit="s"),
    "c": pd.Categorical(np.where(np.arange(n) % 2, "a", "b")),
    "n": pd.array(np.where(np.arange(n) % 5, np.arange(n), 0), dtype="Int64"),
    "s": np.where(np.arange(n) % 2, "x", "y").tolist(),
    "b": np.arange(n) % 3 == 0,
})
frame.loc[7, "n"] = None
series = frame["f"] * 2
"""
#: The buffers over 1 MiB in VALUES: arr, view (a copy of the strided view), frame's f, i, t, d and n's data, series.
SHARED_IN_VALUES = 8


def through_shared_memory(**options: Any) -> IsolatedPythonExecutor:
    """An isolated executor whose large buffers come back in memory files, whatever the machine's huge pages."""
    executor = IsolatedPythonExecutor(**options)
    executor.shared_buffers = True
    return executor


def shared_mappings() -> int:
    """The host's mappings of shared buffers' files."""
    return sum(shared.FILE_NAME in line for line in Path("/proc/self/maps").read_text().splitlines())


def wait_until_dead(pid: int) -> None:
    """Until every thread of ``pid`` has ended (a zombie leader with threads still exiting cannot be reaped yet)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return
        if state == "Z" and len(threads) <= 1:
            return
        assert time.monotonic() < deadline
        time.sleep(0.01)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def expected_values() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(VALUES, namespace)
    return namespace


def assert_values_equal(state: dict, expected: dict) -> None:
    for name in ("arr", "view", "empty", "small"):
        np.testing.assert_array_equal(state[name], expected[name])
        assert state[name].dtype == expected[name].dtype and state[name].shape == expected[name].shape
    pd.testing.assert_frame_equal(state["frame"], expected["frame"])
    pd.testing.assert_series_equal(state["series"], expected["series"])


@pytest.fixture
def raw(home: Path) -> Iterator[IsolatedPythonExecutor]:
    executor = through_shared_memory(guards=False, timeout_seconds=30, additional_authorized_imports=["numpy"])
    yield executor
    executor.close()


# --- honest values ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("huge", [False, True], ids=["pwrite", "huge-page mappings"])
@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no guards"])
def test_arrays_and_frames_come_back_equal_through_shared_memory(
    home: Path, guards: bool, huge: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both ways the worker fills the files: ``pwrite``, or mappings asking for huge pages (where the kernel allows
    them; elsewhere the same mappings in small pages, which this checks on a machine set to "never")."""
    monkeypatch.setattr(shared, "huge_pages", lambda: huge)
    executor = through_shared_memory(
        guards=guards, timeout_seconds=30, additional_authorized_imports=["numpy", "pandas"]
    )
    try:
        before = shared_mappings()
        executor(VALUES)
        assert shared_mappings() - before == SHARED_IN_VALUES
        assert_values_equal(executor.state, expected_values())
        arr = executor.state["arr"]
        arr[0, 0] = -1.0  # copy-on-write: the user's array is writable, and only theirs changes
        executor.state["frame"].loc[0, "f"] = -2.0
        assert arr[0, 0] == -1.0 and executor.state["frame"].loc[0, "f"] == -2.0
        del arr
        for name in ("arr", "view", "frame", "series"):
            del executor.state[name]
        executor("pass")
        assert shared_mappings() == before  # dropped by the notebook: unmapped
    finally:
        executor.close()


def test_without_memfd_every_buffer_travels_inline(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(shared.SWITCH_VARIABLE, "0")
    executor = IsolatedPythonExecutor(timeout_seconds=30, additional_authorized_imports=["numpy", "pandas"])
    try:
        assert executor.shared_buffers is False
        before = shared_mappings()
        executor(VALUES)
        assert shared_mappings() == before
        assert_values_equal(executor.state, expected_values())
    finally:
        executor.close()


def test_a_final_answer_comes_back_through_shared_memory(home: Path) -> None:
    executor = through_shared_memory(timeout_seconds=30, additional_authorized_imports=["numpy", "pandas"])
    try:
        result = executor(
            "import numpy as np, pandas as pd\nx = pd.DataFrame({'a': np.arange(500_000.0)})\nfinal_answer(x)"
        )
        assert result.is_final_answer and result.output is executor.state["x"]  # sent once, named twice
        assert float(result.output["a"].sum()) == float(np.arange(500_000.0).sum())
        assert shared_mappings() >= 1
    finally:
        executor.close()


def test_reading_a_returned_frame_costs_the_host_its_size_once(home: Path) -> None:
    executor = through_shared_memory(timeout_seconds=60, additional_authorized_imports=["numpy", "pandas"])
    try:
        executor("import numpy as np, pandas as pd")
        growth, _ = host_growth(
            lambda: executor("x = pd.DataFrame(np.ones((500_000, 16)))")  # 64 MB
        )
        growth_reading, total = host_growth(lambda: float(executor.state["x"].to_numpy().sum()))
        assert total == 8_000_000.0
        assert growth < 20 * MB  # mapped, not copied: pages come when read
        assert growth_reading < 64 * MB + 64 * MB + 20 * MB  # the pages once, and to_numpy's own copy
    finally:
        executor.close()


def test_the_budget_counts_what_the_host_maps_per_call_and_over_steps(home: Path) -> None:
    executor = through_shared_memory(
        timeout_seconds=30, max_transfer_bytes=10 * MB, additional_authorized_imports=["numpy"]
    )
    try:
        executor("import numpy as np\nbig = np.ones(2_000_000)")  # 16 MB: over the call's budget
        assert isinstance(executor.state["big"], RemoteObject)
        assert any("`big`" in note and "transfer budget" in note for note in executor.last_notes)
        executor.max_transfer_bytes = 100 * MB
        executor.max_held_bytes = 30 * MB
        executor("a = np.ones(2_500_000)")  # 20 MB
        assert isinstance(executor.state["a"], np.ndarray)
        executor("b = np.ones(2_500_000)")
        assert isinstance(executor.state["b"], RemoteObject)  # a's 20 MB still count
        del executor.state["a"], executor.state["b"]
        executor("c = np.ones(2_500_000)")
        assert isinstance(executor.state["c"], np.ndarray) and float(executor.state["c"].sum()) == 2_500_000.0
    finally:
        executor.close()


def test_a_buffer_over_the_workers_file_size_limit_travels_inline(home: Path) -> None:
    executor = through_shared_memory(
        timeout_seconds=30, file_limit_bytes=3 * MB, additional_authorized_imports=["numpy"]
    )
    try:
        before = shared_mappings()
        executor("import numpy as np\nsmall = np.arange(250_000.0)\nlarge = np.arange(500_000.0)")  # 2 MB, 4 MB
        assert float(executor.state["large"][-1]) == 499_999.0 and float(executor.state["small"][-1]) == 249_999.0
        assert shared_mappings() - before == 1  # the 2 MB one; the 4 MB one came through the socket
    finally:
        executor.close()


def test_a_killed_worker_leaves_the_users_data_valid(home: Path) -> None:
    executor = through_shared_memory(timeout_seconds=30, additional_authorized_imports=["numpy"])
    try:
        executor("import numpy as np\nx = np.arange(2_000_000, dtype=np.float64)")
        x = executor.state["x"]
        pid = executor.worker_pid
        os.kill(pid, signal.SIGKILL)
        wait_until_dead(pid)
        assert float(x.sum()) == float(np.arange(2_000_000, dtype=np.float64).sum())
        x[0] = 42.0
        assert executor("float(x[0] + x[1])").output == 43.0  # a fresh worker, sent the user's data
        assert_next_call_works(executor)
    finally:
        executor.close()


# --- hostile workers -------------------------------------------------------------------------------------------------

PATCH = """
import sys, os, mmap
import numpy as np
shared = sys.modules["nbagent.sandbox.wire.shared"]
Worker = sys.modules["nbagent.sandbox.boundary.worker"].Worker
honest_plan, honest_fill, honest_ask = shared.plan, shared.fill, Worker._ask_files
kept = []
def asking(change):
    def plan(*args):
        return change(*honest_plan(*args))
    return plan
def lying(change):
    def fill(fds, buffers, placements, **how):
        emptied = honest_fill(fds, buffers, placements, **how)
        placements[:] = change(placements)
        return emptied
    return fill
"""

LIES = {
    "a buffer longer than its file": "shared.fill = lying(lambda p: [[i, f, o, n + 4096] for i, f, o, n in p])",
    "a buffer shorter than its shape": "shared.fill = lying(lambda p: [[i, f, o, n - 8] for i, f, o, n in p])",
    "a file the host did not create": "shared.fill = lying(lambda p: [[i, f + 64, o, n] for i, f, o, n in p])",
    "one file range for two buffers": "shared.fill = lying(lambda p: [[i, 0, 0, p[-1][3]] for i, f, o, n in p])",
    "a buffer placed twice": "shared.fill = lying(lambda p: p + p[:1])",
    "a buffer on no page boundary": "shared.fill = lying(lambda p: [[i, f, o + 8, n - 8] for i, f, o, n in p])",
    "more files than allowed": "shared.plan = asking(lambda s, p: (s + [4096] * 64, p))",
    "files over the budget": "shared.plan = asking(lambda s, p: (s + [2**40], p))",
    "a second request before the first was used": (
        "Worker._ask_files = lambda self, sizes: (honest_ask(self, sizes), honest_ask(self, sizes))[1]"
    ),
    "shared buffers without a request": (
        "Worker._ask_files = lambda self, sizes: [-1]\n"
        "shared.fill = lambda fds, buffers, p, **how: [b'' if i in {x[0] for x in p} else b for i, b in enumerate(buffers)]"
    ),
    "a writable mapping kept": (
        "def fill(fds, buffers, placements, **how):\n"
        "    kept.extend(mmap.mmap(fd, os.fstat(fd).st_size) for fd in fds)\n"
        "    return honest_fill(fds, buffers, placements, **how)\n"
        "shared.fill = fill"
    ),
}


@pytest.mark.parametrize("lie", list(LIES), ids=list(LIES))
def test_a_worker_that_breaks_the_shared_buffer_protocol_is_replaced(raw: IsolatedPythonExecutor, lie: str) -> None:
    raw.max_transfer_bytes = 50 * MB
    raw("import numpy as np")
    fds = open_fds()
    code = f"{PATCH}\n{LIES[lie]}\nx = np.arange(1_000_000.0)\ny = np.ones(500_000)"
    growth, result = host_growth(lambda: outcome(raw, code))
    assert "x" not in raw.state and "y" not in raw.state  # an anomaly binds nothing
    assert growth < 40 * MB
    assert_protocol_anomaly(raw, result)
    assert open_fds() <= fds + 2 and shared_mappings() == 0  # (the fresh worker's socket)


def test_files_asked_for_and_never_used_are_closed(raw: IsolatedPythonExecutor) -> None:
    raw("import numpy as np")
    fds = open_fds()
    code = f"{PATCH}\nshared.plan = asking(lambda s, p: (s + [1 << 20], p))\nx = np.arange(1_000_000.0)"
    raw(code)
    assert float(raw.state["x"][-1]) == 999_999.0
    assert open_fds() <= fds
    assert_next_call_works(raw)


def test_descriptors_a_worker_sends_are_dropped(home: Path) -> None:
    """Unconfined (sendmsg allowed), the worker attaches its own memory files to a frame: the host reads frames
    without ancillary data, so the kernel drops them."""
    executor = IsolatedPythonExecutor(guards=False, confine=False, timeout_seconds=30)
    try:
        executor("pass")
        fds = open_fds()
        code = (
            TO_THE_HOST
            + """
import struct, json, array
evil = os.memfd_create("evil")
os.ftruncate(evil, 1 << 30)
body = json.dumps({"t": "out", "text": "hello"}).encode()
data = struct.pack("<II", len(body), 0) + body
to_the_host(lambda s: s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [evil] * 8))]))
"""
        )
        result = outcome(executor, code)
        assert not isinstance(result, ExecutionError) or result.cause_type != "WorkerCrash", result
        assert open_fds() <= fds + 2
        assert not any("evil" in os.readlink(f"/proc/self/fd/{fd}") for fd in _fds())
        assert_next_call_works(executor)
    finally:
        executor.close()


def _fds() -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        found.append(fd)
    return found
