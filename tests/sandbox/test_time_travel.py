"""Time travel in the executors (issue 23, item 1): ``checkpoint(step)`` before each step, ``rewind(step)`` back.

Through the public executors: the namespace after a rewind equals the namespace a fresh run of the earlier steps
leaves (a frame changed in place, names created, rebound and deleted); the agent's functions and classes are re-made
in a fresh worker; what cannot be restored is named; a name the notebook rebound since is left alone; the snapshot
limits drop the oldest; a worker killed while snapshots are held changes nothing; a cut-off line can be made live.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pandas as pd
import pytest

from nbagent.sandbox import IsolatedPythonExecutor, LocalPythonExecutor, RemoteObject

GUARDS = pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])
STEPS = [
    "import pandas as pd\ndef double(x):\n    return 2 * x\nclass Box:\n    size = 3\nrate = 0.5",
    "sales['total'] = sales['units'] * sales['price']\nbest = sales['total'].max()\nrate = double(rate)\ndel unused",
    "sales.loc[0, 'units'] = 99\nextra = [1, 2, 3]\nhandle = open('notes.txt', 'w')",
]


def notebook() -> dict:
    return {"sales": pd.DataFrame({"units": [1, 2, 3], "price": [10.0, 20.0, 5.0]}), "unused": "u", "kept": 1}


def isolated(namespace: dict, guards: bool = True, **kwargs) -> IsolatedPythonExecutor:
    return IsolatedPythonExecutor(
        additional_authorized_imports=["pandas", "io"], namespace=namespace, guards=guards, **kwargs
    )


def run_steps(executor, steps: list[str]) -> None:
    for number, code in enumerate(steps, start=1):
        executor.checkpoint(number)
        executor(code)


def plain(namespace: dict) -> dict:
    """The user-visible namespace: frames as their data, handles and modules by their type."""
    out = {}
    for name, value in namespace.items():
        if name.startswith("__") or name == "pd":
            continue
        if isinstance(value, pd.DataFrame):
            out[name] = ("frame", value.to_dict("list"))
        elif isinstance(value, RemoteObject) or callable(value):
            out[name] = ("handle", name)
        else:
            out[name] = value
    return out


@GUARDS
def test_a_rewind_leaves_the_namespace_a_fresh_run_of_the_earlier_steps_leaves(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, guards: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    fresh_ns = notebook()
    fresh = isolated(fresh_ns, guards)
    run_steps(fresh, STEPS[:1])
    expected = plain(fresh_ns)
    fresh.close()

    namespace = notebook()
    original = namespace["sales"]
    executor = isolated(namespace, guards, allow_write=[str(tmp_path)])
    try:
        run_steps(executor, STEPS)
        assert namespace["sales"]["units"][0] == 99 and "total" in namespace["sales"] and "unused" not in namespace
        rewound = executor.rewind(2)
        assert plain(namespace) == expected
        assert namespace["sales"] is original  # the frame as it was (the host never changed it in place)
        assert set(rewound.removed) >= {"best", "extra", "handle"} and "rate" in rewound.restored
        assert sorted(rewound.redefined) == ["Box", "double"]
        assert "Variables are as they were before step 2" in rewound.note
        # the re-made function works in the fresh worker, on the restored values
        assert executor("double(rate) + Box.size").output == 4.0
        assert executor("sales['units'].sum()").output == 6
    finally:
        executor.close()


def test_objects_only_a_worker_held_are_named_not_restorable(home: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    executor = isolated(namespace, allow_write=[str(tmp_path)])
    try:
        run_steps(executor, ["handle = open('notes.txt', 'w')\nsquares = (i * i for i in range(3))", "x = 1"])
        rewound = executor.rewind(2)
        assert set(rewound.unrestorable) == {"handle", "squares"}
        assert "lived only in the replaced worker" in rewound.unrestorable["handle"]
        assert "Not restorable: handle" in rewound.note
        assert "x" not in namespace and executor("1 + 1").output == 2  # the next call works
    finally:
        executor.close()


def test_a_name_the_notebook_rebound_since_is_left_alone(home: Path) -> None:
    namespace = notebook()
    executor = isolated(namespace)
    try:
        run_steps(executor, ["rate = 1", "rate = 2\nmine = 'agent'"])
        namespace["mine"] = "the person's"  # a cell ran between the steps
        rewound = executor.rewind(2)
        assert namespace["rate"] == 1 and namespace["mine"] == "the person's"
        assert "mine" in rewound.kept and "your notebook changed it after the agent did" in rewound.note
    finally:
        executor.close()


def test_the_snapshot_limits_drop_the_oldest_and_a_rewind_past_them_says_so(home: Path) -> None:
    namespace: dict = {}
    executor = isolated(namespace, max_snapshots=2)
    try:
        run_steps(executor, ["a = 1", "b = 2", "c = 3", "d = 4"])
        assert [s.step for s in executor.timeline.snapshots] == [3, 4]
        gone = executor.rewind(2)
        assert not gone.found and "could not be restored to before step 2" in gone.note
        assert namespace["d"] == 4  # nothing changed
        assert executor.rewind(3).found and "c" not in namespace and namespace["b"] == 2
    finally:
        executor.close()

    namespace = {"big": b"x" * 4_000_000}
    executor = isolated(namespace, max_snapshot_bytes=10_000_000)
    try:  # each step rebinds `big`: the old values only snapshots hold pass the byte limit by the fourth step
        run_steps(executor, ["big = b'y' * 4_000_000", "big = b'z' * 4_000_000", "big = b'w' * 4_000_000"])
        assert executor.timeline.held_bytes(namespace) <= 10_000_000
        assert [s.step for s in executor.timeline.snapshots] == [2, 3]
        assert executor.rewind(3).found and namespace["big"][:1] == b"z"
    finally:
        executor.close()


@GUARDS
def test_a_worker_killed_while_snapshots_are_held_changes_nothing(home: Path, guards: bool) -> None:
    namespace = notebook()
    executor = isolated(namespace, guards)
    try:
        run_steps(executor, STEPS[:2])
        os.kill(executor.worker_pid, signal.SIGKILL)
        rewound = executor.rewind(2)
        assert rewound.found and "total" not in namespace["sales"] and namespace["rate"] == 0.5
        assert executor("double(rate)").output == 1.0  # re-made in the worker that replaced the killed one
    finally:
        executor.close()


def test_a_cut_off_line_can_be_made_live_again(home: Path) -> None:
    namespace = notebook()
    executor = isolated(namespace)
    try:
        run_steps(executor, STEPS[:2])
        first_line = plain(namespace)
        rewound = executor.rewind(2)
        executor.checkpoint(2)
        executor("rate = 100\nother = True")
        back = executor.restore_branch(rewound.branch)
        assert plain(namespace) == first_line and "other" not in namespace
        assert "as that run left them" in back.note
        assert executor("double(rate)").output == 2.0
        again = executor.restore_branch(back.branch)  # and the second line once more
        assert namespace["rate"] == 100 and namespace["other"] is True and again.found
    finally:
        executor.close()


def test_the_local_executor_restores_bindings_and_names_what_it_cannot(executor: LocalPythonExecutor) -> None:
    namespace = executor.state
    namespace.update(items=[1, 2], kept=1)
    run_steps(executor, ["a = 1", "items.append(3)\nkept = 2\nb = 3"])
    rewound = executor.rewind(2)
    assert namespace["kept"] == 1 and "b" not in namespace and namespace["a"] == 1
    assert "items" in rewound.unrestorable and "changed it in place" in rewound.unrestorable["items"]
    back = executor.restore_branch(rewound.branch)
    assert namespace["kept"] == 2 and namespace["b"] == 3 and back.found


def test_a_step_tried_again_drops_its_failed_attempt(home: Path) -> None:
    namespace: dict = {}
    executor = isolated(namespace)
    try:
        run_steps(executor, ["a = 1"])
        executor.checkpoint(2)
        with pytest.raises(Exception, match="ZeroDivisionError"):
            executor("half = 'made before the error'\n1 / 0")
        assert namespace["half"] == "made before the error"
        again = executor.rewind(2, keep=False)
        assert again.found and again.branch is None and "half" not in namespace
        assert executor.timeline.branches == [] and [s.step for s in executor.timeline.snapshots] == [1, 2]
        assert executor.rewind(2).found  # the step's snapshot is still there for a later re-run
    finally:
        executor.close()


def test_snapshots_and_the_agent_s_values_share_the_held_budget(home: Path) -> None:
    """A worker that rebinds a big value at every step cannot make the kernel hold more through the snapshots than
    ``max_held_bytes`` lets the agent's values hold."""
    namespace: dict = {}
    executor = isolated(namespace, guards=False)
    executor.max_held_bytes = 25_000_000
    try:
        run_steps(executor, [f"big = b'{i}' * 8_000_000" for i in range(6)])
        held = executor._held.total(namespace) + executor.timeline.held_bytes(namespace)
        assert held <= 25_000_000 and namespace["big"][:1] == b"5"
        assert len(executor.timeline.snapshots) <= 3  # the oldest went first
        assert executor.rewind(6).found and namespace["big"][:1] == b"4"
    finally:
        executor.close()


def test_with_copy_inputs_a_change_kept_in_the_old_worker_is_named(home: Path) -> None:
    namespace = notebook()
    executor = isolated(namespace, copy_inputs=True)
    try:
        run_steps(executor, ["sales['units'] = sales['units'] * 10", "x = 1"])
        assert list(namespace["sales"]["units"]) == [1, 2, 3]  # the notebook's frame is untouched
        rewound = executor.rewind(2)
        assert "copy_inputs" in rewound.unrestorable["sales"] and "x" not in namespace
        assert executor("int(sales['units'].sum())").output == 6  # the fresh worker sees the notebook's frame
    finally:
        executor.close()


def test_the_bytes_snapshots_hold_are_counted_as_they_come_and_go_and_released_with_them() -> None:
    """The incremental count (issue 32) agrees with counting every snapshot's values afresh, through checkpoints,
    writes, rewinds, cuts, grafts and the limits; a value is let go once no snapshot points at it."""
    import random
    import weakref

    import numpy as np

    from nbagent.sandbox.wire.timeline import MISSING, Timeline

    def afresh(timeline: Timeline, namespace: dict) -> int:
        live = {id(v) for v in namespace.values()}
        values = {id(v): v for s in timeline.all_snapshots() for t in (s.bindings, s.written) for v in t.values()}
        return sum(v.nbytes for k, v in values.items() if k not in live and v is not MISSING)

    rng = random.Random(32)
    namespace = {f"a{i}": np.zeros(rng.randrange(1, 50)) for i in range(8)}
    timeline = Timeline(max_snapshots=5, max_bytes=2000, sizeof=lambda v: v.nbytes)
    step = 0
    for _ in range(300):
        action = rng.random()
        if action < 0.4:
            step += 1
            timeline.checkpoint(step, namespace)
        elif action < 0.75:
            name, value = f"a{rng.randrange(10)}", np.zeros(rng.randrange(1, 50))
            namespace[name] = value
            timeline.wrote(name, value)
        elif action < 0.85 and timeline.snapshots:
            target = rng.choice(timeline.snapshots).step
            timeline.rewind(target, namespace, keep=rng.random() < 0.5)
            step = max([s.step for s in timeline.snapshots], default=target - 1)
        elif action < 0.9 and timeline.branches:
            branch = rng.choice(timeline.branches)
            timeline.rewind(branch.start, namespace)
            timeline.graft(branch, namespace)
            step = max([s.step for s in timeline.snapshots], default=step)
        else:
            namespace[f"a{rng.randrange(10)}"] = np.zeros(rng.randrange(1, 50))  # the notebook rebinds a name
        timeline.enforce(namespace)
        assert timeline.held_bytes(namespace) == afresh(timeline, namespace) <= 2000

    old = np.zeros(100)
    namespace["a0"] = old
    timeline.checkpoint(step + 1, namespace)
    namespace["a0"] = np.zeros(1)
    assert timeline.held_bytes(namespace) == afresh(timeline, namespace) >= old.nbytes
    gone = weakref.ref(old)
    del old
    timeline.max_snapshots = 0
    timeline.enforce(namespace)
    assert timeline.count() == 0
    assert gone() is None  # nothing of the timeline keeps it alive
    assert timeline.held_bytes(namespace) == 0
