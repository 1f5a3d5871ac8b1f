"""Results cross the worker's boundary as values, not handles (issue 27, item 1).

Each kind a data answer takes round-trips through the real codec (encoded here, decoded here) to an equal object of
the same type; a few go through the real isolated executor; a malformed node of each new kind is a clear WireError;
and what still stays in the worker is recognised (``is_worker_handle``) with a line to write instead.
"""

from __future__ import annotations

import datetime
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from nbagent.sandbox import IsolatedPythonExecutor, RemoteObject, handle_advice, is_worker_handle
from nbagent.sandbox.wire import codec, shared
from nbagent.sandbox.wire.encoding import Encoder

PARIS = datetime.timezone(datetime.timedelta(hours=2))


def round_trip(value: Any, **options: Any) -> Any:
    tree, buffers = codec.encode(value, **options)
    json.dumps(tree)  # the tree is JSON, as the channel sends it
    return codec.decode(tree, [bytes(b) for b in buffers], lambda node: None, lambda node: None)


def assert_same(value: Any, out: Any) -> None:
    """``out`` is an equal object of ``value``'s own type (dtype, unit, names, freq and missing values included)."""
    assert type(out) is type(value), (type(value), type(out))
    if isinstance(value, pd.DataFrame):
        pd.testing.assert_frame_equal(out, value, check_exact=True, check_freq=True)
    elif isinstance(value, pd.Series):
        pd.testing.assert_series_equal(out, value, check_exact=True, check_freq=True)
    elif isinstance(value, pd.Index):
        pd.testing.assert_index_equal(out, value, exact=True, check_exact=True)
        assert getattr(out, "freq", None) == getattr(value, "freq", None)
    elif isinstance(value, pd.api.extensions.ExtensionArray):
        pd.testing.assert_extension_array_equal(out, value, check_dtype=True, check_exact=True)
    elif isinstance(value, np.ndarray):
        assert out.dtype == value.dtype and out.shape == value.shape and out.tolist() == value.tolist()
    elif value is pd.NA or value is pd.NaT:
        assert out is value
    elif isinstance(value, np.generic):
        assert out.dtype == value.dtype and repr(out) == repr(value)  # (NaN and NaT too; longdouble's padding aside)
    else:
        assert out == value and str(out) == str(value)
        assert getattr(out, "unit", None) == getattr(value, "unit", None)
        assert getattr(out, "tz", None) == getattr(value, "tz", None)


# --- the codec: every kind, standalone and as columns ----------------------------------------------------------------

STRINGS = {
    "StringArray": pd.array(["a", None, "é"], dtype="string"),
    "str array (pandas 3)": pd.array(["a", None], dtype="str"),
    "str Series": pd.Series(["a", None, "c"], name="s"),
    "string Series": pd.Series(["a", None], dtype="string"),
    "str unique()": pd.Series(["x", "y", "x"]).unique(),
}
CATEGORICAL = {
    "Categorical": pd.Categorical(["a", "b", "a", None]),
    "ordered Categorical": pd.Categorical([3, 1, 2], categories=[3, 2, 1], ordered=True),
    "categorical Series": pd.Series(["a", "b"], dtype="category"),
    "CategoricalIndex": pd.CategoricalIndex(["a", "b"], name="c"),
    "categorical unique()": pd.Series(["a", "b", "a"], dtype="category").unique(),
}
PERIODS_AND_INTERVALS = {
    "Period": pd.Period("2024-01", "M"),
    "quarterly Period": pd.Period("2024Q3", "Q-NOV"),
    "15min Period": pd.Period("2024-01-01 10:15", "15min"),
    "Interval": pd.Interval(0, 1),
    "float Interval": pd.Interval(0.5, 1.5, closed="both"),
    "Timestamp Interval": pd.Interval(pd.Timestamp("2024"), pd.Timestamp("2025"), closed="left"),
    "Timedelta Interval": pd.Interval(pd.Timedelta("1D"), pd.Timedelta("2D"), closed="neither"),
    "PeriodArray": pd.period_range("2024-01", periods=3, freq="M").array,
    "PeriodArray with NaT": pd.array([pd.Period("2024-01", "M"), None], dtype="period[M]"),
    "PeriodIndex": pd.period_range("2024-01", periods=3, freq="M", name="p"),
    "IntervalArray": pd.arrays.IntervalArray.from_breaks([0, 1, 2]),
    "IntervalArray with a missing one": pd.arrays.IntervalArray.from_tuples([(0, 1), None], closed="left"),
    "IntervalIndex": pd.interval_range(0, 3),
    "datetime IntervalIndex": pd.interval_range(pd.Timestamp("2024"), periods=3, freq="D"),
    "period Series": pd.Series(pd.period_range("2024-01", periods=3, freq="M")),
    "interval Series": pd.Series(pd.interval_range(0, 3)),
    "period unique()": pd.Series(pd.period_range("2024-01", periods=3, freq="M")).unique(),
}
INDEXES = {
    "int Index": pd.Index([1, 2, 3], name="n"),
    "uint8 Index": pd.Index([1, 2], dtype="uint8"),
    "float Index": pd.Index([1.5, np.nan]),
    "bool Index": pd.Index([True, False]),
    "str Index": pd.Index(["a", "b"]),
    "object Index": pd.Index(["a", 1, None], dtype=object),
    "Int64 Index": pd.Index([1, None], dtype="Int64"),
    "RangeIndex": pd.RangeIndex(2, 10, 2, name="r"),
    "DatetimeIndex with freq": pd.date_range("2024", periods=3, freq="D"),
    "tz DatetimeIndex": pd.date_range("2024", periods=3, freq="h", tz="Europe/Paris"),
    "month-end DatetimeIndex": pd.date_range("2024", periods=3, freq="ME"),
    "TimedeltaIndex": pd.timedelta_range("1D", periods=3),
    "MultiIndex": pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["x", "y"]),
    "MultiIndex of periods": pd.MultiIndex.from_product([["a"], pd.period_range("2024", periods=2, freq="Y")]),
}
NUMPY_SCALARS = {
    name: value
    for name, value in {
        "int8": np.int8(-3), "int64": np.int64(2**62), "uint16": np.uint16(7), "uint64": np.uint64(2**64 - 1),
        "float16": np.float16(2.5), "float32": np.float32(1.5), "float64": np.float64("nan"),
        "longdouble": np.longdouble(1.5), "complex64": np.complex64(1 + 2j), "clongdouble": np.clongdouble(1 - 1j),
        "bool_": np.bool_(True), "str_": np.str_("hé"), "bytes_": np.bytes_(b"x\x00y"), "void": np.void(b"ab"),
        "datetime64[D]": np.datetime64("2024-01-01"), "datetime64[ns]": np.datetime64(1, "ns"),
        "datetime64 NaT": np.datetime64("NaT", "s"), "timedelta64": np.timedelta64(3, "h"),
    }.items()
}  # fmt: skip
PANDAS_SCALARS = {
    "Timestamp": pd.Timestamp("2024-01-01 10:00"),
    "Timestamp in seconds": pd.Timestamp("2024-01-01 10:00").as_unit("s"),
    "Timestamp in ns": pd.Timestamp("2024-01-01 10:00:00.000000001"),
    "Timestamp after 2262": pd.Timestamp("3000-01-01"),
    "Timestamp with a zone": pd.Timestamp("2024-07-01 10:00", tz="Europe/Paris"),
    "Timestamp with an offset": pd.Timestamp("2024-01-01", tz=PARIS),
    "Timedelta": pd.Timedelta("1D 2h"),
    "Timedelta of centuries": pd.Timedelta(days=200 * 365 * 10),
    "NaT": pd.NaT,
    "NA": pd.NA,
}
MASKED_AND_TIMES = {
    "IntegerArray": pd.array([1, None], dtype="Int64"),
    "UInt8 array": pd.array([1, None], dtype="UInt8"),
    "FloatingArray": pd.array([1.5, None], dtype="Float64"),
    "BooleanArray": pd.array([True, None, False], dtype="boolean"),
    "Int64 Series": pd.Series([1, None], dtype="Int64"),
    "DatetimeArray": pd.date_range("2024", periods=2).array,
    "DatetimeArray with NaT": pd.to_datetime(["2024-01-01", None]).array,
    "tz DatetimeArray": pd.date_range("2024", periods=2, tz="UTC").array,
    "TimedeltaArray": pd.timedelta_range("1D", periods=2).array,
    "NumpyExtensionArray": pd.arrays.NumpyExtensionArray(np.array([1, 2])),
}
OBJECT_ARRAYS = {
    "object array": np.array(["a", 1, 2.5, None, True], dtype=object),
    "2-d object array": np.array([["a", 1], [None, 2.5]], dtype=object),
    "empty object array": np.array([], dtype=object),
}
FRAMES = {
    "frame of extension columns": pd.DataFrame(
        {
            "s": pd.array(["x", None, "z"], dtype="str"),
            "string": pd.array(["x", None, "z"], dtype="string"),
            "c": pd.Categorical(["a", "b", "a"]),
            "p": pd.period_range("2024-01", periods=3, freq="M"),
            "i": pd.interval_range(0, 3),
            "n": pd.array([1, None, 3], dtype="Int64"),
            "f": pd.array([0.5, None, 1.0], dtype="Float64"),
            "b": pd.array([True, None, False], dtype="boolean"),
            "t": pd.date_range("2024", periods=3, tz="Europe/Paris"),
            "d": pd.timedelta_range("1h", periods=3),
        },
        index=pd.period_range("2024-01-01", periods=3, freq="D", name="day"),
    ),
    "frame on a MultiIndex": pd.DataFrame({"v": [1, 2]}, index=pd.MultiIndex.from_tuples([("a", 1), ("b", 2)])),
    "Series named by a Period": pd.Series([1.0], name=pd.Period("2024-01", "M")),
}
ALL_KINDS = {
    **STRINGS, **CATEGORICAL, **PERIODS_AND_INTERVALS, **INDEXES, **NUMPY_SCALARS, **PANDAS_SCALARS,
    **MASKED_AND_TIMES, **OBJECT_ARRAYS, **FRAMES,
}  # fmt: skip


@pytest.mark.parametrize("value", ALL_KINDS.values(), ids=ALL_KINDS.keys())
def test_each_kind_comes_back_as_an_equal_value_of_its_type(value: Any) -> None:
    assert_same(value, round_trip(value))


def test_a_decoded_extension_array_is_a_working_value() -> None:
    out = round_trip(pd.array(["a", None, "b"], dtype="string"))
    assert len(out) == 3 and out.tolist() == ["a", pd.NA, "b"] and out.isna().tolist() == [False, True, False]
    categories = round_trip(pd.Categorical(["lo", "hi", "lo"], categories=["lo", "hi"], ordered=True))
    assert categories.max() == "hi" and categories.tolist() == ["lo", "hi", "lo"]
    periods = round_trip(pd.period_range("2024-01", periods=3, freq="M"))
    assert (periods + 1)[0] == pd.Period("2024-02", "M")


def test_aliases_inside_an_answer_stay_aliases() -> None:
    strings = pd.array(["a", None], dtype="string")
    out = round_trip([strings, strings, pd.Period("2024", "Y")])
    assert out[0] is out[1] and out[2] == pd.Period("2024", "Y")


def test_the_budget_counts_the_new_kinds() -> None:
    periods = pd.period_range("2000-01-01", periods=200_000, freq="D")
    handle = {"$": "remote", "kind": "object", "oid": 1, "type": "pandas.PeriodIndex", "summary": ""}
    tree, _ = codec.encode(periods, lambda obj: dict(handle), max_bytes=100_000)
    assert tree["$"] == "remote" and tree["over"] >= periods.asi8.nbytes  # over the budget: kept, and said why
    with pytest.raises(codec.TooLarge):
        codec.encode(np.array(["x"] * 100_000, dtype=object), max_bytes=100_000)
    encoder = Encoder()  # the header's estimate bounds the JSON the worker will send
    tree = encoder.value([pd.Period("2024-01", "M") + i for i in range(2000)] + [pd.Interval(0, 1)] * 2)
    assert encoder.header >= len(json.dumps(tree))


def test_a_large_period_column_travels_as_one_shared_buffer() -> None:
    periods = pd.period_range("2000-01-01", periods=300_000, freq="D")
    tree, buffers = codec.encode(pd.Series(periods))
    assert tree["data"]["$"] == "periods" and any(b.nbytes == periods.asi8.nbytes for b in buffers)
    _, placements = shared.plan(buffers)  # over 1 MiB: a memory file, as an ndarray column's
    assert [buffers[i].nbytes for i, *_ in placements] == [periods.asi8.nbytes]


# --- hostile nodes: a clear WireError, never a crash or a huge allocation ---------------------------------------------


def _ints(*values: int, dtype: str = "<i8") -> tuple[dict, bytes]:
    data = np.array(values, dtype=dtype)
    return {"$": "ndarray", "dtype": dtype, "shape": [len(values)], "buf": 0}, data.tobytes()


ORDINALS, ORDINAL_BYTES = _ints(648, 649)
HUGE_ORDINALS = dict(ORDINALS, shape=[2**40])
PERIODS = {"$": "periods", "ordinals": ORDINALS, "freq": "M"}
LEFT = {"$": "ndarray", "dtype": "<i8", "shape": [2], "buf": 0}
INTERVALS = {"$": "intervals", "left": LEFT, "right": LEFT, "closed": "right"}
EMPTY_INDEX = {"$": "index", "data": {"$": "objects", "items": []}, "name": None}


def _column(node: dict) -> dict:
    return {"$": "pd_array", "data": node}


# name -> (tree, buffers, what the error says)
MALFORMED: dict[str, tuple[Any, list, str]] = {
    "period: ordinal as a string": ({"$": "period", "ordinal": "648", "freq": "M"}, [], "ordinal"),
    "period: ordinal past int64": ({"$": "period", "ordinal": 2**70, "freq": "M"}, [], "ordinal"),
    "period: unknown frequency": ({"$": "period", "ordinal": 1, "freq": "Zz"}, [], "frequency"),
    "period: offset alias, not a period one": ({"$": "period", "ordinal": 1, "freq": "ME"}, [], "frequency"),
    "period: frequency as a number": ({"$": "period", "ordinal": 1, "freq": 12}, [], "frequency"),
    "period: zero multiple": ({"$": "period", "ordinal": 1, "freq": "0M"}, [], "frequency"),
    "period: code in the frequency": ({"$": "period", "ordinal": 1, "freq": "__import__('os')"}, [], "frequency"),
    "interval: a string end": ({"$": "interval", "left": "a", "right": "b", "closed": "right"}, [], "end"),
    "interval: unknown side": ({"$": "interval", "left": 0, "right": 1, "closed": "sideways"}, [], "side"),
    "interval: side as a number": ({"$": "interval", "left": 0, "right": 1, "closed": 1}, [], "side"),
    "interval: left after right": ({"$": "interval", "left": 2, "right": 1, "closed": "right"}, [], "left"),
    "interval: a list end": ({"$": "interval", "left": [0], "right": 1, "closed": "right"}, [], "end"),
    "periods: huge declared length": (
        _column(dict(PERIODS, ordinals=HUGE_ORDINALS)),
        [ORDINAL_BYTES],
        "does not match its buffer",
    ),
    "periods: float ordinals": (
        _column(dict(PERIODS, ordinals=_ints(1, 2, dtype="<f8")[0])),
        [_ints(1, 2, dtype="<f8")[1]],
        "int64",
    ),
    "periods: ordinals as a list": (_column(dict(PERIODS, ordinals=[648, 649])), [], "expected an array"),
    "periods: ordinals by reference": (_column(dict(PERIODS, ordinals={"$": "ref", "to": 1})), [], "expected an array"),
    "periods: 2-d ordinals": (
        _column(dict(PERIODS, ordinals=dict(ORDINALS, shape=[1, 2]))),
        [ORDINAL_BYTES],
        "1-dimensional",
    ),
    "periods: unknown frequency": (_column(dict(PERIODS, freq="bogus")), [ORDINAL_BYTES], "frequency"),
    "intervals: lengths differ": (
        _column(dict(INTERVALS, right=dict(LEFT, shape=[1], buf=1))),
        [ORDINAL_BYTES, b"\0" * 8],
        "interval column",
    ),
    "intervals: string ends": (
        _column(dict(INTERVALS, left=dict(LEFT, dtype="<U1"), right=dict(LEFT, dtype="<U1"))),
        [b"\0" * 8],
        "interval column",
    ),
    "intervals: unknown side": (_column(dict(INTERVALS, closed="up")), [ORDINAL_BYTES], "side"),
    "intervals: left after right": (
        _column(dict(INTERVALS, right=dict(LEFT, buf=1))),
        [ORDINAL_BYTES, b"\0" * 16],
        "left",
    ),
    "pd_array: unknown column kind": (_column({"$": "sparse", "items": []}), [], "bad column"),
    "pd_array: unknown masked dtype": (
        _column({"$": "masked", "dtype": "Int128", "data": LEFT, "mask": LEFT}),
        [ORDINAL_BYTES],
        "masked",
    ),
    "pd_array: data is a list": (_column([1, 2]), [], "bad column"),
    "pd_array: object dtype array": (_column(dict(LEFT, dtype="|O8")), [ORDINAL_BYTES], "not allowed"),
    "pd_array: categorical codes out of range": (
        _column({"$": "categorical", "codes": LEFT, "ordered": False, "categories": EMPTY_INDEX}),
        [ORDINAL_BYTES],
        "codes",
    ),
    "pd_array: strings holding numbers": (
        _column({"$": "strings", "items": [1, 2], "storage": "python", "na_nan": False}),
        [],
        "string column",
    ),
    "objarray: huge declared shape": ({"$": "objarray", "shape": [10**12], "items": []}, [], "does not match"),
    "objarray: shape and items differ": ({"$": "objarray", "shape": [2, 2], "items": [1, 2, 3]}, [], "does not match"),
    "objarray: negative shape": ({"$": "objarray", "shape": [-1], "items": []}, [], "shape"),
    "objarray: shape as a string": ({"$": "objarray", "shape": "3", "items": [1, 2, 3]}, [], "shape"),
    "objarray: too many dimensions": ({"$": "objarray", "shape": [1] * 40, "items": [1]}, [], "shape"),
    "objarray: items not a list": ({"$": "objarray", "shape": [1], "items": {"$": "int", "hex": "1"}}, [], "list"),
    "npvoid: no buffer": ({"$": "npvoid"}, [], "buffer"),
    "npvoid: buffer out of range": ({"$": "npvoid", "buf": 3}, [], "buffer"),
    "timestamp: unknown unit": ({"$": "timestamp", "v": 1, "unit": "fs", "tz": None}, [], "timestamp"),
    "timestamp: value as a string": ({"$": "timestamp", "v": "1", "unit": "s", "tz": None}, [], "timestamp"),
    "timestamp: value past int64": ({"$": "timestamp", "v": 2**64, "unit": "s", "tz": None}, [], "timestamp"),
    "timestamp: unit as a number": ({"$": "timestamp", "v": 1, "unit": 9, "tz": None}, [], "timestamp"),
    "timedelta: unknown unit": ({"$": "pd_timedelta", "v": 1, "unit": "Y"}, [], "timedelta"),
    "timedelta: value as a float": ({"$": "pd_timedelta", "v": 1.5, "unit": "s"}, [], "timedelta"),
    "index: unknown frequency": (
        {"$": "index", "data": dict(LEFT, dtype="<M8[s]"), "name": None, "freq": "Zz"},
        [ORDINAL_BYTES],
        "frequency",
    ),
    "index: a frequency the values do not follow": (
        {"$": "index", "data": dict(LEFT, dtype="<M8[s]"), "name": None, "freq": "D"},
        [ORDINAL_BYTES],
        "frequency",
    ),
    "index: a frequency on integers": (
        {"$": "index", "data": LEFT, "name": None, "freq": "D"},
        [ORDINAL_BYTES],
        "frequency",
    ),
    "index: frequency as a list": (
        {"$": "index", "data": dict(LEFT, dtype="<M8[s]"), "name": None, "freq": ["D"]},
        [ORDINAL_BYTES],
        "frequency",
    ),
}


@pytest.mark.parametrize("tree, buffers, says", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_node_is_a_clear_wire_error(tree: Any, buffers: list, says: str) -> None:
    with pytest.raises(codec.WireError, match=says):  # the host's budget (1 MiB) is never what stops it
        codec.decode(tree, buffers, lambda node: None, lambda node: None, limit=1 << 20)


# --- through the isolated worker ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IsolatedPythonExecutor]:
    if sys.platform != "linux":
        pytest.skip("the isolated worker's tests run on Linux")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        executor = IsolatedPythonExecutor(additional_authorized_imports=["pandas", "numpy"], timeout_seconds=20)
        try:
            executor("import pandas as pd\nimport numpy as np")
            yield executor
        finally:
            executor.close()


WORKER_STEPS = {
    "string array": ('pd.array(["a", None], dtype="string")', pd.array(["a", None], dtype="string")),
    "Categorical": ('pd.Categorical(["b", "a", "b"])', pd.Categorical(["b", "a", "b"])),
    "PeriodIndex": ('pd.period_range("2024-01", periods=3, freq="M")', pd.period_range("2024-01", periods=3, freq="M")),
    "MultiIndex": (
        'pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["k", "n"])',
        pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["k", "n"]),
    ),
    "NA": ("pd.NA", pd.NA),
    "object array": ('np.array(["a", 1, None, 2.5], dtype=object)', np.array(["a", 1, None, 2.5], dtype=object)),
    "Interval": ("pd.Interval(0, 5, closed='left')", pd.Interval(0, 5, closed="left")),
}


@pytest.mark.parametrize("code, expected", WORKER_STEPS.values(), ids=WORKER_STEPS.keys())
def test_a_step_returns_the_value_not_a_handle(worker: IsolatedPythonExecutor, code: str, expected: Any) -> None:
    result = worker(code)
    assert not is_worker_handle(result.output) and not isinstance(result.output, RemoteObject)
    assert_same(expected, result.output)


def test_a_category_answer_and_its_variable_come_back_as_values(worker: IsolatedPythonExecutor) -> None:
    result = worker('kinds = pd.Series(["tea", "coffee", "tea"], dtype="str").unique()\nfinal_answer(kinds)')
    assert result.is_final_answer and not is_worker_handle(result.output)
    assert_same(pd.array(["tea", "coffee"], dtype="str"), result.output)
    assert worker.state["kinds"] is result.output and len(worker.state["kinds"]) == 2


@pytest.mark.skipif(not shared.supported(), reason="no memfd here: every buffer travels inline")
def test_a_large_period_index_comes_back_through_a_memory_file(worker: IsolatedPythonExecutor) -> None:
    def mappings() -> int:
        return sum(shared.FILE_NAME in line for line in Path("/proc/self/maps").read_text().splitlines())

    before = mappings()
    worker.shared_buffers = True  # the default only where shared memory gets huge pages (shared.available)
    try:
        result = worker('pd.period_range("2000-01-01", periods=300_000, freq="D")')
    finally:
        worker.shared_buffers = shared.available()
    assert type(result.output) is pd.PeriodIndex and len(result.output) == 300_000
    assert result.output[-1] == pd.Period("2000-01-01", "D") + 299_999
    assert mappings() > before  # the ordinals are the sealed file, mapped


def test_what_stays_in_the_worker_is_named_a_handle_with_a_line_to_write(worker: IsolatedPythonExecutor) -> None:
    handle = worker("pd.arrays.SparseArray([0, 0, 1])").output  # no plain form: it stays in the worker
    assert isinstance(handle, RemoteObject)
    assert is_worker_handle(handle) and is_worker_handle([1, {"k": handle}]) and is_worker_handle((handle,))
    assert ".tolist()" in handle_advice(handle) and "SparseArray" in handle_advice(handle)
    assert "inside the answer" in handle_advice({"k": handle})
    function = worker("def f(x):\n    return x\nf").output
    assert is_worker_handle(function) and "Call it in your code" in handle_advice(function)
    for value in (42, "x", [1, [2, {"a": None}]], pd.NA, pd.array(["a"], dtype="string")):
        assert not is_worker_handle(value) and handle_advice(value) == ""
