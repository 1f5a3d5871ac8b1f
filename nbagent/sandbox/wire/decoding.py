"""Decoding, in the host: plain values rebuilt from a tree and its buffers, never calling the worker's code, bounded
in size and time (see ``codec``).
"""

from __future__ import annotations

import array
import datetime
import decimal
import fractions
import json
import math
import re
import sys
from collections.abc import Callable
from typing import Any

from . import pandas_values
from .budget import NODE_COST
from .plain import (
    CHECK_EVERY_NODES,
    DTYPE_PATTERN,
    IMAGE_MODES,
    JSON_KINDS,
    JSON_PART_BYTES,
    JSON_PART_ITEMS,
    MASKED_DTYPES,
    MAX_DECIMAL_CHARS,
    MAX_DEPTH,
    MAX_HASH_COLLISIONS,
    MAX_INT_BITS,
    MAX_NODES,
    AgentValue,
    WireError,
    collisions,
)


class Decoder:
    """Builds values from a tree and its buffers; ``remote(node)`` and ``host(node)`` resolve references.

    ``table`` maps reference numbers to the values already built (shared by the messages of one call); ``limit``
    bounds :attr:`cost`, what decoding allocates (budget.py); ``check`` is called every few thousand nodes and
    before each buffer, and may raise :class:`DecodeAbandoned`."""

    def __init__(
        self,
        buffers: list,
        remote: Callable[[dict], Any],
        host: Callable[[dict], Any],
        table: dict | None = None,
        limit: int | None = None,
        check: Callable[[], None] | None = None,
    ) -> None:
        self.buffers = buffers
        self.remote = remote
        self.host = host
        self.table = table if table is not None else {}
        self.limit = limit
        self.check = check
        self.nodes = 0
        self.cost = 0
        self._next_check = CHECK_EVERY_NODES
        self._open: set[int] = set()

    def charge(self, nbytes: int) -> None:
        self.cost += nbytes
        if self.limit is not None and self.cost > self.limit:
            raise WireError(f"the worker sent more than the transfer budget it was told ({self.limit:,} bytes)")

    def buffer(self, node: dict) -> Any:
        index = node.get("buf")
        if type(index) is not int or not 0 <= index < len(self.buffers):
            raise WireError("bad buffer reference")
        data = self.buffers[index]
        self.charge(len(data))  # each use: a buffer named twice is paid twice
        if self.check is not None:
            self.check()
        return data

    def value(self, node: Any, depth: int = 0) -> Any:
        self.nodes += 1
        if depth > MAX_DEPTH + 8 or self.nodes > MAX_NODES:
            raise WireError("value too deep or too large")
        if self.nodes >= self._next_check:
            self._next_check = self.nodes + CHECK_EVERY_NODES
            if self.check is not None:
                self.check()
        self.charge(NODE_COST)
        kind = type(node)
        if node is None or kind in (bool, int, float):
            return node
        if kind is str:
            self.charge(len(node))
            return node
        if kind is list:
            if node and type(node[0]) is dict and node[0].get("$") == "@":
                return self._define(node[0], lambda: self._list(node[1:], depth))
            return self._list(node, depth)
        if kind is not dict:
            raise WireError(f"unexpected {kind.__name__}")
        tag = node.get("$")
        handler = _DECODERS.get(tag) if type(tag) is str else None
        if handler is None:
            raise WireError(f"unknown tag {tag!r}")
        if "#" in node:
            return self._define(node, lambda: handler(self, node, depth))
        return handler(self, node, depth)

    def _list(self, node: list, depth: int) -> list:
        if set(map(type, node)) <= JSON_KINDS:
            self.charge(NODE_COST * len(node) + sum(len(x) for x in node if type(x) is str))
            return node
        return [self.value(item, depth + 1) for item in node]

    def _define(self, node: dict, build: Callable[[], Any]) -> Any:
        number = node.get("#")
        if type(number) is not int or number in self.table or number in self._open:
            raise WireError("bad reference number")
        self._open.add(number)
        value = build()
        self._open.discard(number)
        self.table[number] = value
        return value

    def reference(self, node: dict) -> Any:
        number = node.get("to")
        if type(number) is not int or number not in self.table:
            raise WireError("a reference to a value not yet decoded (or to itself)")
        return self.table[number]

    def items(self, node: dict, key: str, depth: int) -> list:
        items = node.get(key)
        if type(items) is not list:
            raise WireError(f"{key} must be a list")
        return [self.value(item, depth + 1) for item in items]

    def array(self, node: Any) -> Any:
        """A one-dimensional numpy array from an ``ndarray`` node (nothing else: no reference, no broadcast)."""
        if type(node) is not dict or node.get("$") != "ndarray":
            raise WireError("expected an array")
        array = _decode_ndarray(self, node, 0)
        if array.ndim != 1:
            raise WireError("a column must be 1-dimensional")
        return array

    def sequence(self, node: dict, key: str, depth: int) -> list:
        """A column's items, maybe packed (``jlist``, ``ilist``...) or referenced: the column's own array counts."""
        items = self.value(node.get(key), depth + 1)
        if type(items) is not list:
            raise WireError(f"{key} must be a list")
        self.charge(8 * len(items))
        return items


def _decode_int(d: Decoder, node: dict, depth: int) -> int:
    text = node.get("hex")
    if type(text) is not str or len(text) > MAX_INT_BITS // 4 + 2 or not re.fullmatch(r"-?[0-9a-f]+", text):
        raise WireError("bad int (or beyond the int/str conversion limit)")
    return int(text, 16)


def _decode_str(d: Decoder, node: dict, depth: int) -> str:
    try:
        return bytes(d.buffer(node)).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise WireError("bad string") from None


def _decode_jlist(d: Decoder, node: dict, depth: int) -> list:
    """A long list of JSON scalars in small parts: each part's count is paid before it is parsed, and a part is at
    most JSON_PART_BYTES, so a part that lies about its count costs a few MB before it is refused."""
    items: list = []
    for part in _list(node, "parts"):
        count = part.get("n") if type(part) is dict else None
        if type(count) is not int or not 0 <= count <= JSON_PART_ITEMS:
            raise WireError("bad packed list")
        data = d.buffer(part)
        if len(data) > JSON_PART_BYTES:
            raise WireError("bad packed list")
        d.charge(NODE_COST * count)
        try:
            values = json.loads(bytes(data))
        except (ValueError, RecursionError):
            raise WireError("bad packed list") from None
        if type(values) is not list or len(values) != count or not set(map(type, values)) <= JSON_KINDS:
            raise WireError("bad packed list")
        d.charge(sum(len(x) for x in values if type(x) is str))
        items += values
    return items


def _no_collisions(keys: list) -> None:
    try:
        if len(keys) > MAX_HASH_COLLISIONS and collisions(keys) > MAX_HASH_COLLISIONS:
            raise WireError("keys whose hashes collide (building them would take quadratic time)")
    except TypeError as exc:
        raise WireError(f"bad key: {exc}") from None


def _decode_float(d: Decoder, node: dict, depth: int) -> float:
    if node.get("v") not in ("nan", "inf", "-inf"):
        raise WireError("bad float")
    return float(node["v"])


def _decode_dict(d: Decoder, node: dict, depth: int) -> dict:
    keys, values = d.items(node, "k", depth), d.items(node, "v", depth)
    if len(keys) != len(values):
        raise WireError("bad dict")
    _no_collisions(keys)
    try:
        return dict(zip(keys, values))
    except TypeError as exc:
        raise WireError(f"bad dict key: {exc}") from None


def _decode_hashable(kind: type) -> Callable[[Decoder, dict, int], Any]:
    def decode(d: Decoder, node: dict, depth: int) -> Any:
        items = d.items(node, "items", depth)
        _no_collisions(items)
        try:
            return kind(items)
        except TypeError as exc:
            raise WireError(str(exc)) from None

    return decode


def _number(value: Any) -> Any:
    if type(value) not in (int, float):
        raise WireError("expected a number")
    return value


def _decode_timezone(spec: Any) -> Any:
    if spec is None:
        return None
    if type(spec) is dict and type(spec.get("offset")) in (int, float) and abs(spec["offset"]) < 86400:
        return datetime.timezone(datetime.timedelta(seconds=spec["offset"]))
    if type(spec) is dict and type(spec.get("key")) is str and re.fullmatch(r"[A-Za-z0-9_+\-/]{1,64}", spec["key"]):
        import zoneinfo

        try:
            return zoneinfo.ZoneInfo(spec["key"])
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return None
    raise WireError("bad timezone")


def _iso(node: dict) -> str:
    text = node.get("iso")
    if type(text) is not str or len(text) > 40:
        raise WireError("bad date")
    return text


def _decode_datetime(d: Decoder, node: dict, depth: int) -> Any:
    kind = datetime.datetime if node["$"] == "datetime" else datetime.time
    try:
        return kind.fromisoformat(_iso(node)).replace(tzinfo=_decode_timezone(node.get("tz")))
    except ValueError as exc:
        raise WireError(str(exc)) from None


def _decode_date(d: Decoder, node: dict, depth: int) -> Any:
    try:
        return datetime.date.fromisoformat(_iso(node))
    except ValueError as exc:
        raise WireError(str(exc)) from None


def _decode_timedelta(d: Decoder, node: dict, depth: int) -> Any:
    try:
        return datetime.timedelta(days=_number(node.get("d")), seconds=_number(node.get("s")),
                                  microseconds=_number(node.get("us")))  # fmt: skip
    except OverflowError as exc:
        raise WireError(str(exc)) from None


def _decode_decimal(d: Decoder, node: dict, depth: int) -> Any:
    text = node.get("s")
    if type(text) is not str or len(text) > MAX_DECIMAL_CHARS:
        raise WireError("bad decimal")
    try:
        return decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise WireError("bad decimal") from None


def _decode_fraction(d: Decoder, node: dict, depth: int) -> Any:
    n, den = d.value(node.get("n"), depth + 1), d.value(node.get("d"), depth + 1)
    if type(n) is not int or type(den) is not int or den == 0:
        raise WireError("bad fraction")
    return fractions.Fraction(n, den)


def _dtype(text: Any) -> Any:
    np = _numpy()
    if type(text) is not str or not DTYPE_PATTERN.match(text):
        raise WireError(f"dtype {text!r} is not allowed")
    try:
        dtype = np.dtype(text)
    except TypeError:
        raise WireError(f"bad dtype {text!r}") from None
    if dtype.hasobject or dtype.kind not in "biufcmMSU" or dtype.fields is not None:
        raise WireError(f"dtype {text!r} is not allowed")
    return dtype


def _numpy() -> Any:
    import numpy

    return numpy


def _decode_ndarray(d: Decoder, node: dict, depth: int, broadcast: bool = False) -> Any:
    np = _numpy()
    array = _decode_array(d, node)
    full = node.get("bcast")
    if full is None:
        return array
    if not broadcast or type(full) is not list or len(full) != array.ndim:
        raise WireError("bad broadcast shape")
    if any(type(n) is not int or n < 0 or (m != 1 and m != n) for m, n in zip(array.shape, full)):
        raise WireError("bad broadcast shape")
    return np.broadcast_to(array, tuple(full))  # a read-only view: nothing is expanded


def _decode_array(d: Decoder, node: dict) -> Any:
    np = _numpy()
    dtype = _dtype(node.get("dtype"))
    shape = _shape(node)
    data = d.buffer(node)
    count = math.prod(shape)
    if count * dtype.itemsize != len(data):
        raise WireError("array size does not match its buffer")
    if count == 0:
        return np.empty(shape, dtype=dtype)
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def _shape(node: dict) -> list:
    shape = node.get("shape")
    if type(shape) is not list or len(shape) > 32 or any(type(n) is not int or n < 0 for n in shape):
        raise WireError("bad shape")
    return shape


def _decode_npscalar(d: Decoder, node: dict, depth: int) -> Any:
    array = _decode_ndarray(d, node, depth)
    if array.shape != ():
        raise WireError("bad numpy scalar")
    return array[()]


def _decode_npvoid(d: Decoder, node: dict, depth: int) -> Any:
    return _numpy().void(bytes(d.buffer(node)))


def _decode_objarray(d: Decoder, node: dict, depth: int) -> Any:
    """An object array: its shape checked against its items before the array is made."""
    shape = _shape(node)
    items = d.sequence(node, "items", depth)
    if math.prod(shape) != len(items):
        raise WireError("object array size does not match its items")
    return _objects(items).reshape(shape)


def _decode_image(d: Decoder, node: dict, depth: int) -> Any:
    from PIL import Image

    mode, size = node.get("mode"), node.get("size")
    if mode not in IMAGE_MODES or type(size) is not list or len(size) != 2:
        raise WireError("bad image")
    if any(type(n) is not int or not 0 < n < 1 << 16 for n in size) or size[0] * size[1] > 1 << 28:
        raise WireError("bad image size")
    try:
        return Image.frombytes(mode, tuple(size), bytes(d.buffer(node)))
    except ValueError as exc:
        raise WireError(str(exc)) from None


def _decode_packed(typecode: str) -> Callable[[Decoder, dict, int], list]:
    def decode(d: Decoder, node: dict, depth: int) -> list:
        data = d.buffer(node)
        if len(data) % 8:
            raise WireError("bad packed list")
        values = array.array(typecode)
        values.frombytes(data)
        d.charge(NODE_COST * len(values))
        return values.tolist()

    return decode


def _decode_blist(d: Decoder, node: dict, depth: int) -> list:
    data = d.buffer(node)
    d.charge(NODE_COST * len(data))
    return list(map(bool, data))


def _decode_bytes(kind: type) -> Callable[[Decoder, dict, int], Any]:
    return lambda d, node, depth: kind(d.buffer(node))


def _decode_complex(d: Decoder, node: dict, depth: int) -> complex:
    real, imag = d.value(node.get("re"), depth + 1), d.value(node.get("im"), depth + 1)
    return complex(_number(real), _number(imag))


# --- pandas (host) -------------------------------------------------------------------------------------------------


def _pandas() -> Any:
    import pandas

    return pandas


_LABEL_TYPES = (
    type(None), bool, int, float, str, tuple, complex, bytes, frozenset, decimal.Decimal, fractions.Fraction,
    datetime.datetime, datetime.date, datetime.time, datetime.timedelta,
)  # fmt: skip


_PANDAS_LABELS = ("Timestamp", "Timedelta", "Period", "Interval", "NaTType", "NAType")


def _decode_label(d: Decoder, node: Any, depth: int) -> Any:
    """A column, index or Series name: any hashable scalar the format builds (`row.name` of `df.iloc[0]` is a
    numpy integer; of a frame indexed by date, a Timestamp), never a reference to a live object."""
    value = d.value(node, depth + 1)
    pandas_scalar = type(value).__name__ in _PANDAS_LABELS and type(value).__module__.startswith("pandas")
    numpy_scalar = type(value).__module__ == "numpy" and hasattr(value, "dtype")
    if type(value) not in _LABEL_TYPES and not (pandas_scalar or numpy_scalar):
        raise WireError("bad label")
    try:
        hash(value)
    except TypeError:
        raise WireError("bad label") from None
    return value


def _decode_index(d: Decoder, node: Any, depth: int) -> Any:
    pd = _pandas()
    if type(node) is not dict:
        raise WireError("bad index")
    tag = node.get("$")
    if tag == "range_index":
        start, stop, step = (node.get(k) for k in ("start", "stop", "step"))
        if any(type(v) is not int for v in (start, stop, step)) or step == 0:
            raise WireError("bad range index")
        return pd.RangeIndex(start, stop, step, name=_decode_label(d, node.get("name"), depth))
    if tag == "multi_index":
        levels = [_decode_index(d, level, depth + 1) for level in _list(node, "levels")]
        codes = [_decode_ndarray(d, code, depth + 1) for code in _list(node, "codes")]
        names = [_decode_label(d, name, depth) for name in _list(node, "names")]
        try:
            return pd.MultiIndex(levels=levels, codes=codes, names=names)
        except (ValueError, TypeError) as exc:
            raise WireError(str(exc)) from None
    if tag == "index":
        data = _decode_column(d, node.get("data"), depth + 1)
        index = pd.Index(data, name=_decode_label(d, node.get("name"), depth), tupleize_cols=False, copy=False)
        return pandas_values.with_freq(index, node.get("freq"))
    raise WireError("bad index")


def _list(node: dict, key: str) -> list:
    value = node.get(key)
    if type(value) is not list:
        raise WireError(f"{key} must be a list")
    return value


def _objects(items: list) -> Any:
    np = _numpy()
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = item
    return array


def _decode_column(d: Decoder, node: Any, depth: int) -> Any:
    pd, np = _pandas(), _numpy()
    tag = node.get("$") if type(node) is dict else None
    try:
        if tag == "ndarray":
            array = _decode_ndarray(d, node, depth)
            if array.ndim != 1:
                raise WireError("a column must be 1-dimensional")
            return array
        if tag == "objects":
            return _objects(d.sequence(node, "items", depth))
        if tag == "masked":
            kind = MASKED_DTYPES.get(node.get("dtype"))
            data, mask = _decode_ndarray(d, node.get("data"), depth), _decode_ndarray(d, node.get("mask"), depth)
            if kind is None or data.dtype != np.dtype(kind) or mask.dtype != np.bool_ or data.shape != mask.shape:
                raise WireError("bad masked column")
            constructor = {"b": pd.arrays.BooleanArray, "f": pd.arrays.FloatingArray}.get(
                kind[0], pd.arrays.IntegerArray
            )
            return constructor(data, mask)  # the decoded buffers themselves: writable, and no copy
        if tag == "categorical":
            codes = _decode_ndarray(d, node.get("codes"), depth)
            categories = _decode_index(d, node.get("categories"), depth)
            return pd.Categorical.from_codes(codes, categories=categories, ordered=bool(node.get("ordered")))
        if tag == "strings":
            items = d.sequence(node, "items", depth)
            if not set(map(type, items)) <= {str, type(None)}:
                raise WireError("bad string column")
            return pd.array(items, dtype=_string_dtype(node))
        if tag == "datetimetz":
            data = _decode_ndarray(d, node.get("data"), depth)
            tz = _decode_timezone(node.get("tz"))
            if data.dtype.kind != "M" or tz is None:
                raise WireError("bad datetime column")
            return _datetimes_in(data, tz)
        if tag == "periods":
            return pandas_values.decode_periods(d, node, depth)
        if tag == "intervals":
            return pandas_values.decode_intervals(d, node, depth)
    except (ValueError, TypeError, OverflowError) as exc:
        if isinstance(exc, WireError):
            raise
        raise WireError(str(exc)) from None
    raise WireError("bad column")


def _datetimes_in(utc: Any, tz: Any) -> Any:
    """UTC datetimes as a tz-aware array on the same buffer (no copy: integers are read as UTC instants)."""
    pd, np = _pandas(), _numpy()
    unit = np.datetime_data(utc.dtype)[0]
    if unit in ("s", "ms", "us", "ns"):
        try:
            dtype = pd.DatetimeTZDtype(unit=unit, tz=tz)
            return pd.DatetimeIndex(utc.view("i8"), dtype=dtype, copy=False).array
        except (TypeError, ValueError):  # an older pandas
            pass
    return pd.DatetimeIndex(utc).tz_localize("UTC").tz_convert(tz).array


def _string_dtype(node: dict) -> Any:
    pd = _pandas()
    storage = node.get("storage") if node.get("storage") in ("python", "pyarrow") else "python"
    if storage == "pyarrow" and "pyarrow" not in sys.modules:
        storage = "python"
    if node.get("na_nan") is True:
        try:
            return pd.StringDtype(storage=storage, na_value=_numpy().nan)
        except TypeError:  # pandas < 2.3
            pass
    return pd.StringDtype(storage=storage)


def _decode_dataframe(d: Decoder, node: dict, depth: int) -> Any:
    pd = _pandas()
    columns = _decode_index(d, node.get("columns"), depth)
    index = _decode_index(d, node.get("index"), depth)
    data = [_decode_column(d, column, depth + 1) for column in _list(node, "data")]
    if len(data) != len(columns) or any(len(column) != len(index) for column in data):
        raise WireError("bad data frame shape")
    # copy=False: each column stays the buffer it was decoded into (a shared mapping or the channel's own memory); a
    # copy would consolidate them into one block, doubling the host's peak memory for a large frame
    frame = pd.DataFrame(dict(enumerate(data)), index=index, copy=False) if data else pd.DataFrame(index=index)
    frame.columns = columns
    return frame


def _decode_series(d: Decoder, node: dict, depth: int) -> Any:
    pd = _pandas()
    index = _decode_index(d, node.get("index"), depth)
    data = _decode_column(d, node.get("data"), depth + 1)
    if len(data) != len(index):
        raise WireError("bad series length")
    return pd.Series(data, index=index, name=_decode_label(d, node.get("name"), depth), copy=False)


_UNITS = ("s", "ms", "us", "ns")


def _in_unit(node: dict, what: str) -> tuple[int, str]:
    """A Timestamp's or Timedelta's int64 and its unit (``"ns": n`` is nanoseconds)."""
    value, unit = (node.get("ns"), "ns") if "ns" in node else (node.get("v"), node.get("unit"))
    if type(value) is not int or not -(2**63) < value < 2**63 or type(unit) is not str or unit not in _UNITS:
        raise WireError(f"bad {what}")
    return value, unit


def _decode_timestamp(d: Decoder, node: dict, depth: int) -> Any:
    pd, np = _pandas(), _numpy()
    value, unit = _in_unit(node, "timestamp")
    tz = _decode_timezone(node.get("tz"))
    try:
        stamp = pd.Timestamp(np.datetime64(value, unit))
        return stamp.tz_localize("UTC").tz_convert(tz) if tz is not None else stamp
    except (ValueError, OverflowError) as exc:
        raise WireError(f"bad timestamp: {exc}") from None


def _decode_pd_timedelta(d: Decoder, node: dict, depth: int) -> Any:
    pd, np = _pandas(), _numpy()
    value, unit = _in_unit(node, "timedelta")
    try:
        return pd.Timedelta(np.timedelta64(value, unit))
    except (ValueError, OverflowError) as exc:
        raise WireError(f"bad timedelta: {exc}") from None


def _decode_pd_array(d: Decoder, node: dict, depth: int) -> Any:
    """A pandas array standing alone: its column, a numpy one wrapped as pandas would hold it."""
    pd, np = _pandas(), _numpy()
    values = _decode_column(d, node.get("data"), depth + 1)
    if not isinstance(values, np.ndarray):
        return values
    try:
        if values.dtype.kind in "mM":
            return pd.array(values, dtype=values.dtype, copy=False)  # DatetimeArray, TimedeltaArray
        return pd.arrays.NumpyExtensionArray(values)
    except (ValueError, TypeError, OverflowError) as exc:
        raise WireError(f"bad pandas array: {exc}") from None


def _decode_agent_value(node: dict) -> AgentValue:
    texts = [node.get(k) for k in ("repr", "str", "type")]
    if any(type(t) is not str for t in texts):
        raise WireError("bad agent value")
    return AgentValue(*texts)


_DECODERS: dict[str, Callable[[Decoder, dict, int], Any]] = {
    "int": _decode_int,
    "float": _decode_float,
    "tuple": lambda d, node, depth: tuple(d.items(node, "items", depth)),
    "dict": _decode_dict,
    "set": _decode_hashable(set),
    "frozenset": _decode_hashable(frozenset),
    "bytes": _decode_bytes(bytes),
    "bytearray": _decode_bytes(bytearray),
    "complex": _decode_complex,
    "datetime": _decode_datetime,
    "time": _decode_datetime,
    "date": _decode_date,
    "timedelta": _decode_timedelta,
    "decimal": _decode_decimal,
    "fraction": _decode_fraction,
    "ilist": _decode_packed("q"),
    "blist": _decode_blist,
    "jlist": _decode_jlist,
    "str": _decode_str,
    "ref": lambda d, node, depth: d.reference(node),
    "flist": _decode_packed("d"),
    "ndarray": lambda d, node, depth: _decode_ndarray(d, node, depth, broadcast=True),
    "npscalar": _decode_npscalar,
    "npvoid": _decode_npvoid,
    "objarray": _decode_objarray,
    "image": _decode_image,
    "dataframe": _decode_dataframe,
    "series": _decode_series,
    "index": _decode_index,
    "range_index": _decode_index,
    "multi_index": _decode_index,
    "timestamp": _decode_timestamp,
    "pd_timedelta": _decode_pd_timedelta,
    "pd_array": _decode_pd_array,
    "period": pandas_values.decode_period,
    "interval": pandas_values.decode_interval,
    "nat": lambda d, node, depth: _pandas().NaT,
    "na": lambda d, node, depth: _pandas().NA,
    "agent_value": lambda d, node, depth: _decode_agent_value(node),
    "remote": lambda d, node, depth: d.remote(node),
    "host": lambda d, node, depth: d.host(node),
}


def decode(tree: Any, buffers: list, remote: Callable[[dict], Any], host: Callable[[dict], Any], **options: Any) -> Any:
    """The value of ``tree``; :class:`WireError` if the data does not follow the format (``options``: those of
    :class:`Decoder`)."""
    return decoded(Decoder(buffers, remote, host, **options), tree)


def decoded(decoder: Decoder, tree: Any) -> Any:
    """``decoder.value(tree)``, a too deep value being a :class:`WireError` too."""
    try:
        return decoder.value(tree)
    except RecursionError:
        raise WireError("value too deep") from None
