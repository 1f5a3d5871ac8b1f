"""A write-back that cannot trojan the user, and inherited shared file mappings (issue 19, item 6).

Through the public executor, with the guards on and off: the worker never binds in the notebook a name that shadows a
builtin, one of IPython's own names or a module the user imported (the value stays in the worker, the step says so);
a memmap the notebook opened ``r+`` is written only when ``allow_write`` covers its file, and its change is reported.
"""

from __future__ import annotations

import builtins
import sys
from pathlib import Path

import numpy as np
import pytest

from nbagent.sandbox import IsolatedPythonExecutor
from nbagent.sandbox.guards import policy

GUARDS = pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])
TROJANS = """
seen = []
def print(*args, **kwargs):
    seen.append(args)
def len(x):
    seen.append(x)
    return 0
def open(*args, **kwargs):
    seen.append(args)
class str:
    pass
display = print
np = 5
print("the agent's own print")
"""


@GUARDS
def test_builtins_ipython_names_and_the_user_s_modules_stay_in_the_worker(home: Path, guards: bool) -> None:
    namespace = {"np": np}
    executor = IsolatedPythonExecutor(
        namespace=namespace, guards=guards, timeout_seconds=20, additional_authorized_imports=["numpy"]
    )
    try:
        executor(TROJANS)
        for name in ("print", "len", "open", "str", "display"):
            assert name not in namespace, name
        assert namespace["np"] is np
        kept = {c["name"]: c for c in executor.last_changes if c.get("kept")}
        assert set(kept) == {"print", "len", "open", "str", "display", "np"}
        assert "builtin print" in kept["print"]["reason"] and "IPython" in kept["display"]["reason"]
        assert "module numpy" in kept["np"]["reason"]
        assert any(note.startswith("kept print in the worker") for note in executor.last_notes)
        assert namespace["seen"] == [("the agent's own print",)]  # its own data comes back as usual
        # the worker still sees its own bindings on the next call
        assert executor("print('again')\n(np, seen[-1])").output == (5, ("again",))
        assert executor("6 * 7").output == 42
    finally:
        executor.close()


def test_the_step_logs_say_what_was_kept(home: Path) -> None:
    executor = IsolatedPythonExecutor(guards=False, timeout_seconds=20)
    try:
        logs = executor("def print(*a):\n    pass\nx = 1").logs
        assert "[nbagent] kept print in the worker, not in your notebook: it would shadow the builtin print" in logs
        assert "x" in executor.state and "print" not in executor.state
    finally:
        executor.close()


@GUARDS
def test_the_agent_s_own_names_and_the_user_s_plain_variables_stay_rebindable(home: Path, guards: bool) -> None:
    namespace = {"id": 3}  # the user's own variable shadows the builtin id
    executor = IsolatedPythonExecutor(namespace=namespace, guards=guards, timeout_seconds=20)
    try:
        executor("total = 1\nid = 4")
        executor("total = 2")
        assert namespace["total"] == 2 and namespace["id"] == 4
        executor("def id():\n    return 0")  # a function where the user had plain data: never
        assert namespace["id"] == 4
    finally:
        executor.close()


def test_writeback_rule() -> None:
    assert policy.writeback_refusal("print", 1, {}, foreign=False)
    assert policy.writeback_refusal("_12", 1, {}, foreign=False)
    assert policy.writeback_refusal("display", 1, {}, foreign=False)
    assert policy.writeback_refusal("pd", 1, {"pd": sys}, foreign=False)
    assert policy.writeback_refusal("pd", sys, {"pd": sys}, foreign=False) is None  # the same module: harmless
    assert policy.writeback_refusal("sum", 5, {"sum": 4}, foreign=False) is None  # the user's own number
    assert policy.writeback_refusal("sum", 5, {"sum": 4}, foreign=True)  # a handle into the worker: never
    assert policy.writeback_refusal("total", len, {}, foreign=True) is None
    assert policy.writeback_refusal("mine", 1, {}, foreign=False, hidden={"mine"})
    assert all(policy.writeback_refusal(name, None, {}, foreign=False) for name in dir(builtins))


@pytest.fixture
def memmap_file(home: Path) -> Path:
    path = home / "data.bin"
    np.arange(8, dtype="int64").tofile(path)
    return path


@GUARDS
@pytest.mark.parametrize("copy_inputs", [False, True], ids=["shared", "copy_inputs"])
def test_a_memmap_opened_r_plus_is_not_written_without_allow_write(
    memmap_file: Path, guards: bool, copy_inputs: bool
) -> None:
    mm = np.memmap(memmap_file, dtype="int64", mode="r+")
    namespace = {"mm": mm}
    executor = IsolatedPythonExecutor(namespace=namespace, guards=guards, copy_inputs=copy_inputs, timeout_seconds=20)
    try:
        assert executor("mm[0] = 99\nint(mm[0])").output == 99  # the worker's copy changed
        assert np.fromfile(memmap_file, dtype="int64")[0] == 0  # the file did not
        assert mm[0] == 0 and namespace["mm"] is mm  # nor the user's memmap
        (change,) = executor.last_changes
        assert change["name"] == "mm" and change["change"] == "modified" and change["kept"]
        assert "allow_write" in change["reason"]
        assert any(str(memmap_file) in line and "private" in line for line in executor.confinement["shared_mappings"])
        assert executor("int(mm[0])").output == 99  # later calls see the worker's copy
        assert executor("6 * 7").output == 42
    finally:
        executor.close()
        del mm


@GUARDS
def test_a_memmap_under_allow_write_is_written_and_reported(memmap_file: Path, guards: bool) -> None:
    mm = np.memmap(memmap_file, dtype="int64", mode="r+")
    executor = IsolatedPythonExecutor(namespace={"mm": mm}, guards=guards, allow_write=[str(memmap_file)])
    try:
        executor("mm[1] = 77")
        assert np.fromfile(memmap_file, dtype="int64")[1] == 77 and mm[1] == 77
        (change,) = executor.last_changes
        assert change["change"] == "modified" and not change.get("kept"), str(change)
    finally:
        executor.close()
        del mm


def test_shared_anonymous_memory_is_copied_private(home: Path) -> None:
    import mmap

    shared = mmap.mmap(-1, 4096)  # MAP_SHARED | MAP_ANONYMOUS: the kernel's memory, in a fork too
    shared[:4] = b"user"
    executor = IsolatedPythonExecutor(namespace={"shared": shared}, guards=False, timeout_seconds=20)
    try:
        executor("shared[:4] = b'evil'")
        assert shared[:4] == b"user"
        assert executor("bytes(shared[:4])").output == b"evil"
    finally:
        executor.close()
        shared.close()
