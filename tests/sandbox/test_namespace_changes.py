"""What a call did to the shared namespace (``executor.last_changes``), and ``copy_inputs``, for both executors.

The report is what the widget's "what changed" line shows, so each kind is checked by its words: a new frame's
shape, a column added in place, a list's length, a dict's keys, a rebinding, a deletion, an imported module.
"""

from __future__ import annotations

import warnings

import pytest

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, LocalPythonExecutor
from nbagent.sandbox.wire.changes import NamespaceSnapshot, describe, difference, snapshot

pd = pytest.importorskip("pandas")

EXECUTORS = ["local", "isolated"]


def make(kind: str, namespace: dict, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls = LocalPythonExecutor if kind == "local" else IsolatedPythonExecutor
        return cls(additional_authorized_imports=["pandas", "math"], namespace=namespace, timeout_seconds=20, **options)


def by_name(changes: list[dict]) -> dict[str, dict]:
    return {c["name"]: c for c in changes}


@pytest.fixture
def notebook() -> dict:
    return {
        "sales": pd.DataFrame({"units": [1, 2, 3], "price": [2.0, 3.0, 4.0]}),
        "x": 1,
        "items": [1],
        "config": {"a": 1},
        "tmp": "gone soon",
        "untouched": [9, 9],
    }


@pytest.fixture(params=EXECUTORS)
def kind(request) -> str:
    return request.param


def test_every_kind_of_change_is_reported_in_words(kind: str, notebook: dict) -> None:
    executor = make(kind, notebook)
    try:
        executor(
            "sales['revenue'] = sales.units * sales.price\n"
            "region = sales[sales.units > 1]\n"
            "x = 2\n"
            "items.append(5)\n"
            "config['b'] = 2\n"
            "del tmp\n"
            "import math\n"
            "print(untouched)"
        )
        changes = by_name(executor.last_changes)
    finally:
        getattr(executor, "close", lambda: None)()
    assert changes["sales"] == {
        "name": "sales",
        "change": "modified",
        "type": "DataFrame 3×3",
        "detail": "+1 column revenue",
        "yours": True,  # the notebook's frame: the views warn
    }
    assert changes["region"] == {"name": "region", "change": "created", "type": "DataFrame 2×3", "detail": ""}
    assert changes["x"]["change"] == "rebound" and changes["x"]["type"] == "int"
    assert changes["items"]["detail"] == "length 1 → 2"
    assert changes["config"]["detail"] == "+1 key 'b'"
    assert changes["tmp"] == {"name": "tmp", "change": "deleted", "type": "", "detail": "", "yours": True}
    assert changes["math"]["type"] == "module"
    assert "untouched" not in changes  # read, not changed
    assert list(notebook["sales"].columns) == ["units", "price", "revenue"]  # without copy_inputs: changed


def test_a_failing_call_still_reports_what_it_changed(kind: str, notebook: dict) -> None:
    executor = make(kind, notebook)
    try:
        with pytest.raises(ExecutionError):
            executor("partial = 1\nitems.append(2)\n1 / 0")
        changes = by_name(executor.last_changes)
        executor("print('nothing')")
        assert executor.last_changes == []  # a call that changes nothing reports nothing
    finally:
        getattr(executor, "close", lambda: None)()
    assert changes["partial"]["change"] == "created"
    assert changes["items"]["change"] == "modified"


def test_the_isolated_worker_proves_an_in_place_change_of_values(notebook: dict) -> None:
    """Same shape, other values: the worker's checksum sees it, and the host's comparison says which column."""
    executor = make("isolated", notebook)
    try:
        executor("sales.loc[0, 'units'] = 100")
        changes = by_name(executor.last_changes)
    finally:
        executor.close()
    assert changes["sales"] == {
        "name": "sales",
        "change": "modified",
        "type": "DataFrame 3×2",
        "detail": "column units changed",
        "yours": True,
    }


def test_copy_inputs_leaves_the_notebooks_objects_alone(kind: str, notebook: dict) -> None:
    original, items = notebook["sales"], notebook["items"]
    executor = make(kind, notebook, copy_inputs=True)
    try:
        executor("sales['revenue'] = sales.units * sales.price\nx = 5\nitems.append(2)\ntotal = sales.revenue.sum()")
        first = by_name(executor.last_changes)
        executor("columns = list(sales.columns)\nseen_x = x")  # the agent goes on with its own versions
        second = by_name(executor.last_changes)
        assert notebook["columns"] == ["units", "price", "revenue"]
        assert notebook["seen_x"] == 5
    finally:
        getattr(executor, "close", lambda: None)()
    assert notebook["sales"] is original and list(original.columns) == ["units", "price"]
    assert notebook["items"] is items and items == [1]
    assert notebook["x"] == 1
    assert notebook["total"] == 20.0  # what it created comes back
    assert first["sales"]["kept"] is True and first["sales"]["detail"] == "+1 column revenue"
    assert first["x"]["kept"] is True
    assert "kept" not in first["total"]
    assert set(second) == {"columns", "seen_x"}


def test_copy_inputs_keeps_a_frame_through_every_in_place_write(kind: str, notebook: dict) -> None:
    """The local executor's copy of a frame is lazy (pandas copy-on-write): no write of the code reaches the notebook's
    frame, and the agent's next call sees its own writes."""
    original = notebook["sales"]
    before = original.copy(deep=True)
    executor = make(kind, notebook, copy_inputs=True)
    try:
        executor(
            "sales.loc[0, 'units'] = 100\n"
            "sales.iloc[1, 1] = -1.0\n"
            "sales['price'] = sales.price * 2\n"
            "sales.rename(columns={'units': 'n'}, inplace=True)\n"
            "sales.index.name = 'row'\n"
            "sales.sort_values('price', ascending=False, inplace=True)"
        )
        executor("seen = [int(v) for v in sales.n]")
    finally:
        getattr(executor, "close", lambda: None)()
    assert notebook["sales"] is original
    pd.testing.assert_frame_equal(original, before)
    assert notebook["seen"] == [3, 100, 2]


def test_a_private_copy_of_a_frame_shares_its_buffers_until_written() -> None:
    import numpy as np

    from nbagent.sandbox.guards.copies import private_copy

    frame = pd.DataFrame({"a": np.arange(1000.0), "b": np.ones(1000)})
    mine = private_copy(frame)
    assert np.shares_memory(frame["a"].to_numpy(), mine["a"].to_numpy())  # nothing copied yet
    mine.loc[0, "a"] = -5.0
    assert frame.loc[0, "a"] == 0.0 and mine.loc[0, "a"] == -5.0
    assert not np.shares_memory(frame["a"].to_numpy(), mine["a"].to_numpy())
    assert np.shares_memory(frame["b"].to_numpy(), mine["b"].to_numpy())  # the column not written stays shared
    items = [[1]]
    assert private_copy(items) == items and private_copy(items)[0] is not items[0]  # anything else: a deep copy


def test_copy_inputs_lets_the_agent_change_what_it_created(kind: str, notebook: dict) -> None:
    executor = make(kind, notebook, copy_inputs=True)
    try:
        executor("result = [1]")
        executor("result.append(2)")
        changes = by_name(executor.last_changes)
    finally:
        getattr(executor, "close", lambda: None)()
    assert notebook["result"] == [1, 2]
    assert changes["result"]["change"] == "modified" and "kept" not in changes["result"]


def test_local_copy_inputs_follows_the_notebook_rebinding_a_name(notebook: dict) -> None:
    executor = make("local", notebook, copy_inputs=True)
    executor("x = 5")
    notebook["x"] = 10  # a cell rebinds x between two calls: the agent sees the notebook's new value
    executor("seen = x")
    assert notebook["seen"] == 10 and notebook["x"] == 10


def test_outline_words() -> None:
    frame = pd.DataFrame({"a": [1, 2]})
    before = snapshot(frame)
    frame["b"] = 1
    del frame["a"]
    assert difference(before, snapshot(frame)) == "+1 column b; −1 column a"
    assert difference(snapshot([1]), snapshot([1, 2, 3])) == "length 1 → 3"
    assert describe(frame) == "DataFrame 2×1" and describe([1, 2]) == "list of 2" and describe({}) == "dict of 0 keys"
    assert describe(len) == "function" and describe(3.5) == "float"
    assert snapshot(3) is None  # immutable values are seen by identity alone
    many = {i: i for i in range(500)}
    shot = snapshot(many)
    many[1000] = 1
    assert "keys" not in shot and difference(shot, snapshot(many)) == "length 500 → 501"


def test_snapshot_ignores_names_the_namespace_does_not_share() -> None:
    namespace = {"__name__": "__main__", "_": 1, "_i3": "code", "In": [], "value": 1}
    before = NamespaceSnapshot(namespace, lambda name: not name.startswith("_") and name != "In")
    namespace.update(_=2, _i4="more", value=2)
    assert [c["name"] for c in before.report(namespace)] == ["value"]


def test_the_local_snapshot_outlines_only_the_objects_the_code_mentions() -> None:
    """Outlining every frame of a big notebook on every call would be slow: only the names the code uses can change
    in place (short of a function from an earlier call doing it, which the report then misses)."""
    namespace = {"a": [1], "b": [2], "n": 3}
    before = NamespaceSnapshot(namespace, str.isidentifier, code="a.append(2)\nb = [5]")
    assert set(before.outlines) == {"a"}  # b is rebound (seen by identity), n is not mutable
    namespace["a"].append(2)
    namespace["b"] = [5]
    assert [(c["name"], c["change"]) for c in before.report(namespace)] == [("a", "modified"), ("b", "rebound")]
