"""Big results on a machine's defaults (issue 32): which path they take, where they land, and what a worker can still
do to them once the kernel has them.

Where shared memory gets no huge pages (``shmem_enabled`` never, what Debian and Ubuntu ship), arrays and frame columns
over 1 MiB come through the socket into the kernel's private memory; where it does, in sealed memory files. Either
way the worker can never change a value after the kernel received it: the hostile tests keep writing, from a thread
of the worker's, after the step that returned the value (the guards off: code past the guards can do this).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sandbox_helpers import host_growth, outcome

from nbagent.sandbox import IsolatedPythonExecutor
from nbagent.sandbox.wire import shared

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the isolated worker's tests run on Linux")

MB = 1_000_000
N = 1_000_000  # 8 MB of float64: over the 1 MiB threshold

#: A thread of the worker's that keeps writing, once a later step sets ``go``, into what it still holds of a value the
#: kernel received: its own array, and (given ``kept``, descriptors a patched ``shared.fill`` duplicated) the memory
#: files the kernel mapped. ``hits`` counts the writes that landed in the worker; ``refused`` the file writes the OS
#: refused. (The later steps never name the value, so no change report of theirs brings the worker's copy back.)
SCRIBBLER = """
import os, threading, time
hits, refused = [0], [0]
go, stop = threading.Event(), threading.Event()
def scribble(array, kept, stop):
    go.wait()
    while not stop.is_set():
        array[:] = 7.0
        hits[0] += 1
        for fd in kept:
            try:
                os.pwrite(fd, b"\\x01" * 4096, 0)
            except OSError:
                refused[0] += 1
        time.sleep(0.005)
"""


def executor(**options: Any) -> IsolatedPythonExecutor:
    options.setdefault("timeout_seconds", 30)
    options.setdefault("additional_authorized_imports", ["numpy", "pandas"])
    return IsolatedPythonExecutor(**options)


def private_anonymous(address: int) -> bool:
    """Whether ``address`` lies in a private anonymous mapping of this process (no file, no other process's)."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split()
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if start <= address < end:
            return fields[1].endswith("p") and fields[4] == "0"
    return False


def memory_file_mappings() -> int:
    return sum(shared.FILE_NAME in line for line in Path("/proc/self/maps").read_text().splitlines())


@pytest.fixture
def default_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine as Debian and Ubuntu ship it: no huge pages in shared memory, the switch unset."""
    monkeypatch.delenv(shared.SWITCH_VARIABLE, raising=False)
    monkeypatch.setattr(shared, "huge_pages", lambda: False)


@pytest.fixture
def raw(home: Path, default_machine: None) -> Iterator[IsolatedPythonExecutor]:
    worker = executor(guards=False)
    yield worker
    worker.close()


# --- which path, where the bytes land --------------------------------------------------------------------------------


def test_without_huge_shared_pages_big_results_come_through_the_socket_into_private_memory(
    home: Path, default_machine: None
) -> None:
    worker = executor()
    try:
        assert worker.shared_buffers is False
        before = memory_file_mappings()
        worker(f"import numpy as np, pandas as pd\nx = np.arange({N}.0)\nf = pd.DataFrame({{'a': x * 2, 'b': x}})")
        x, f = worker.state["x"], worker.state["f"]
        np.testing.assert_array_equal(x, np.arange(float(N)))
        pd.testing.assert_frame_equal(f, pd.DataFrame({"a": np.arange(float(N)) * 2, "b": np.arange(float(N))}))
        assert memory_file_mappings() == before  # no memory file was used
        for array in (x, f["a"].to_numpy(), f["b"].to_numpy()):
            assert private_anonymous(array.ctypes.data)  # the kernel's own memory, no other process maps it
        x[0] = -1.0  # the user's array is writable, and only theirs changes
        assert worker.state["x"][0] == -1.0 and f["b"].iloc[0] == 0.0
    finally:
        worker.close()


def test_reading_a_result_from_the_socket_costs_the_kernel_its_size_once(home: Path, default_machine: None) -> None:
    worker = executor(timeout_seconds=60)
    try:
        worker("import numpy as np, pandas as pd")
        growth, _ = host_growth(lambda: worker("x = pd.DataFrame(np.ones((500_000, 16)))"))  # 64 MB
        growth_reading, total = host_growth(lambda: float(sum(worker.state["x"][c].sum() for c in range(16))))
        assert total == 8_000_000.0
        assert growth < 64 * MB * 1.3  # received once, into memory the first read finds in place
        assert growth_reading < 8 * MB  # nothing faulted or copied again by the first read
    finally:
        worker.close()


@pytest.mark.skipif(not shared.supported(), reason="no memfd here: every buffer travels inline")
def test_shared_memory_is_the_default_where_it_gets_huge_pages_and_the_switch_decides_elsewhere(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(shared.SWITCH_VARIABLE, raising=False)
    cases = [(True, None, True), (False, None, False), (False, "1", True), (True, "0", False), (False, "auto", False)]
    for huge, switch, expected in cases:
        monkeypatch.setattr(shared, "huge_pages", lambda huge=huge: huge)
        if switch is None:
            monkeypatch.delenv(shared.SWITCH_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(shared.SWITCH_VARIABLE, switch)
        worker = executor()  # (no worker starts until a call)
        assert worker.shared_buffers is expected, (huge, switch)
        worker.close()


# --- a worker that keeps writing after the step ----------------------------------------------------------------------


def kept_descriptors_patch() -> str:
    """Agent code that makes the worker's ``shared.fill`` keep a duplicate of every memory file's descriptor."""
    return """
import sys
shared = sys.modules["nbagent.sandbox.wire.shared"]
honest_fill = shared.fill
kept = []
def fill(fds, buffers, placements, **how):
    kept.extend(os.dup(fd) for fd in fds)
    return honest_fill(fds, buffers, placements, **how)
shared.fill = fill
"""


@pytest.mark.parametrize("path", ["socket", "shared memory"])
def test_a_worker_writing_after_the_step_never_changes_what_the_kernel_holds(
    raw: IsolatedPythonExecutor, path: str
) -> None:
    if path == "shared memory":
        if not shared.supported():
            pytest.skip("no memfd here")
        raw.shared_buffers = True
    patch = kept_descriptors_patch() if path == "shared memory" else "kept = []"
    raw(f"import numpy as np\n{SCRIBBLER}\n{patch}")
    raw(f"x = np.zeros({N})\nthreading.Thread(target=scribble, args=(x, kept, stop), daemon=True).start()")
    held = raw.state["x"]
    assert held.shape == (N,) and not held.any()
    assert (memory_file_mappings() > 0) == (path == "shared memory")
    raw("go.set()\ntime.sleep(0.3)")  # the worker runs again: its thread writes
    evidence = raw("stop.set()\n(hits[0], len(kept), refused[0])").output
    hits, kept, refused = evidence
    assert hits > 0  # the thread did write, in the worker
    if path == "shared memory":
        assert kept > 0 and refused >= hits  # every write through a kept descriptor was refused: the file is sealed
    assert raw.state["x"] is held and not held.any()  # what the kernel received is as it was


def test_a_fresh_worker_writing_into_what_it_inherited_never_changes_the_kernels_value(
    raw: IsolatedPythonExecutor,
) -> None:
    """A value received through the socket lives in the kernel's private memory: a worker forked later gets it
    copy-on-write, and its writes (from a thread, after its step, so no change report rebinds anything) stay its own."""
    raw(f"import numpy as np\nx = np.zeros({N})")
    held = raw.state["x"]
    assert private_anonymous(held.ctypes.data)
    pid = raw.worker_pid
    os.kill(pid, signal.SIGKILL)  # a fresh worker forks from the kernel as it is now
    outcome(raw, "pass")  # (this call may find the killed one and say so)
    raw(f"import numpy as np\n{SCRIBBLER}\nthreading.Thread(target=scribble, args=(x, [], stop), daemon=True).start()")
    assert raw.worker_pid != pid
    raw("go.set()\ntime.sleep(0.3)")
    assert raw("stop.set()\nhits[0]").output > 0
    assert raw.state["x"] is held and not held.any()
