"""Encoding, in the worker: a value into one JSON tree and raw buffers, each object once, within a budget (see ``codec``)."""

from __future__ import annotations

import array
import datetime
import decimal
import fractions
import itertools
import json
import math
import sys
import zlib
from collections.abc import Callable
from typing import Any

from . import pandas_values
from .budget import NODE_COST
from .plain import (
    HEADER_ESTIMATE_LIMIT,
    IMAGE_MODES,
    JSON_KINDS,
    JSON_PART_BYTES,
    JSON_PART_ITEMS,
    LONG_LIST,
    LONG_STR,
    MASKED_DTYPES,
    MAX_DECIMAL_CHARS,
    MAX_DEPTH,
    MAX_HASH_COLLISIONS,
    MAX_INT_BITS,
    MAX_NODES,
    AgentValue,
    NotPlain,
    TooLarge,
    collisions,
)

_SCALARS = (type(None), bool, str)


class Encoder:
    """Encodes values into one tree and a list of buffers; ``reference(obj)`` makes the node for a non-plain object
    (or raises :class:`NotPlain` to refuse the whole value).

    ``max_bytes`` bounds :attr:`cost`, the host's estimate of what decoding allocates (budget.py). One encoder may
    serve several messages of a call (:meth:`start_message`); :meth:`export` keeps some objects referable from the
    next message (the final answer, which the write-back then names without sending it again)."""

    def __init__(
        self, reference: Callable[[Any], dict] | None = None, max_bytes: int | None = None, refs: Any = None
    ) -> None:
        self.reference = reference
        self.refs = refs if refs is not None else itertools.count(1)
        self.memo: dict[int, list] = {}  # id -> [obj, node, ref number or None, done]; obj keeps the id unique
        self._memo_order: list[int] = []
        self.start_message(max_bytes)

    def start_message(self, max_bytes: int | None) -> None:
        self.max_bytes = max_bytes
        self.buffers: list[memoryview] = []
        self.size = 0  # bytes in buffers
        self.cost = 0  # the host's estimate, header included
        self.header = 0  # upper bound of the JSON header's length
        self.nodes = 0

    def export(self, objects: Any) -> None:
        """Number ``objects``' nodes now (before their message is sent) and forget every other object."""
        kept = {}
        for obj in objects:
            entry = self.memo.get(id(obj))
            if entry is not None and entry[0] is obj and entry[3]:
                self._number(entry)
                kept[id(obj)] = entry
        self.memo, self._memo_order = kept, list(kept)

    def forget(self) -> None:
        self.export(())

    def buffer(self, data: Any) -> int:
        view = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
        self.size += view.nbytes
        self.reserve(view.nbytes)
        self.buffers.append(view)
        return len(self.buffers) - 1

    def reserve(self, nbytes: int, header: int = 24) -> None:
        """Count ``nbytes`` the host will allocate; :class:`TooLarge` past the budget (or the header's limit)."""
        self.cost += nbytes + header
        self.header += header
        if self.max_bytes is not None and self.cost > self.max_bytes:
            raise TooLarge("over the transfer budget")
        if self.header > HEADER_ESTIMATE_LIMIT:
            raise TooLarge("too many values for one message")

    def array(self, array: Any) -> dict:
        """A numpy array's node: one buffer (a memory file past 1 MiB), a copy only when it fits in the budget."""
        return _array_node(self, array)

    def check_room(self, nbytes: int) -> None:
        """:class:`TooLarge` if ``nbytes`` more would not fit (before making a copy that large)."""
        if self.max_bytes is not None and self.cost + nbytes > self.max_bytes:
            raise TooLarge("over the transfer budget")

    def value(self, obj: Any, depth: int = 0) -> Any:
        """The node for ``obj``; a non-plain value becomes a reference (or the whole encoding is refused). A value
        over the budget propagates to the top level, which becomes one reference saying so (``over``)."""
        mark = (len(self.buffers), self.size, self.cost, self.header, len(self._memo_order))
        try:
            return self._plain(obj, depth)
        except NotPlain as exc:
            if self.reference is None or (isinstance(exc, TooLarge) and depth > 0):
                raise
            spent = self.cost - mark[2]
            self._rollback(mark)
            node = self.reference(obj)
            if isinstance(exc, TooLarge):
                node = dict(node, over=max(spent, _size_hint(obj)), why=str(exc))
            entry = self.memo.get(id(obj))
            if entry is None or entry[0] is not obj:  # (an object still being encoded, a cycle, stays unnumbered)
                self._remember(obj, node)
            return node

    def _rollback(self, mark: tuple) -> None:
        del self.buffers[mark[0] :]
        self.size, self.cost, self.header = mark[1], mark[2], mark[3]
        for key in self._memo_order[mark[4] :]:
            self.memo.pop(key, None)
        del self._memo_order[mark[4] :]

    def _remember(self, obj: Any, node: Any) -> list:
        entry = [obj, node, None, True]
        self.memo[id(obj)] = entry
        self._memo_order.append(id(obj))
        return entry

    def _number(self, entry: list) -> int:
        """The reference number of a node already encoded (given now if it had none: the node is marked)."""
        if entry[2] is None:
            entry[2] = next(self.refs)
            if type(entry[1]) is dict:
                entry[1]["#"] = entry[2]
            else:
                entry[1].insert(0, {"$": "@", "#": entry[2]})
        return entry[2]

    def _plain(self, obj: Any, depth: int) -> Any:
        self.nodes += 1
        self.reserve(NODE_COST, 8)
        if depth > MAX_DEPTH or self.nodes > MAX_NODES:
            raise NotPlain("too deep")
        kind = type(obj)
        if obj is None or kind is bool:
            return obj
        if kind is int and -(2**63) <= obj < 2**63:
            self.header += 20
            return obj
        if kind is float:
            self.header += 24
            return obj if math.isfinite(obj) else {"$": "float", "v": repr(obj)}
        if kind is str and len(obj) < LONG_STR:
            self.reserve(len(obj), _json_length(obj))
            return obj
        entry = self.memo.get(id(obj))
        if entry is not None and entry[0] is obj:
            if not entry[3]:
                raise NotPlain("a value that contains itself")
            return {"$": "ref", "to": self._number(entry)}
        entry = self._remember(obj, None)
        entry[3] = False
        entry[1] = self._node(obj, kind, depth)
        entry[3] = True
        return entry[1]

    def _node(self, obj: Any, kind: type, depth: int) -> Any:
        if kind is str:
            return {"$": "str", "buf": self.buffer(obj.encode("utf-8", "surrogatepass"))}
        if kind is int:
            if obj.bit_length() > MAX_INT_BITS:
                raise NotPlain("an int beyond the int/str conversion limit")
            return {"$": "int", "hex": format(obj, "x")}
        if kind is list:
            packed = _packed_list(self, obj)
            if packed is not None:
                return packed
            return [self.value(item, depth + 1) for item in obj]
        if kind is tuple:
            return {"$": "tuple", "items": [self.value(item, depth + 1) for item in obj]}
        if kind is dict:
            if len(obj) > MAX_HASH_COLLISIONS and collisions(obj) > MAX_HASH_COLLISIONS:
                raise NotPlain("keys whose hashes collide")
            keys = [self.value(key, depth + 1) for key in obj]
            return {"$": "dict", "k": keys, "v": [self.value(v, depth + 1) for v in obj.values()]}
        if kind in (set, frozenset):
            if len(obj) > MAX_HASH_COLLISIONS and collisions(obj) > MAX_HASH_COLLISIONS:
                raise NotPlain("items whose hashes collide")
            return {"$": kind.__name__, "items": [self.value(item, depth + 1) for item in obj]}
        if kind in (bytes, bytearray):
            return {"$": kind.__name__, "buf": self.buffer(obj)}
        if kind is complex:
            return {"$": "complex", "re": self._plain(obj.real, depth), "im": self._plain(obj.imag, depth)}
        encoder = _ENCODERS.get(kind) or _library_encoder(kind)
        if encoder is None:
            raise NotPlain(kind.__name__)
        return encoder(self, obj, depth)


def _json_length(text: str) -> int:
    """An upper bound of ``text``'s length in JSON (escapes: at most 6 characters per character... or 12 for a
    character outside the BMP, which counts as one)."""
    return len(text) + 2 if text.isascii() and text.isprintable() else 12 * len(text) + 2


def _size_hint(obj: Any) -> int:
    """A cheap idea of a value's size, for the message that keeps it in the worker (0: unknown)."""
    for attribute in ("nbytes",):
        size = getattr(obj, attribute, None)
        if type(size) is int:
            return size
    if type(obj) in (bytes, bytearray, str):
        return len(obj)
    usage = getattr(obj, "memory_usage", None)
    if callable(usage) and type(obj).__module__.startswith("pandas"):
        try:
            total = usage(index=True)
            return int(total.sum()) if hasattr(total, "sum") else int(total)
        except Exception:
            return 0
    return 0


def _packed_list(e: Encoder, items: list) -> Any:
    """A list of JSON scalars (the common case, checked at C speed): as itself, as one binary buffer when it is a long
    list of int64, floats or bools, as JSON in small buffers when it is another long list (strings...); None for
    anything else (a long string among them, a big int, a non-finite float: encoded item by item)."""
    kinds = set(map(type, items))
    if not kinds or not kinds <= JSON_KINDS:
        return None
    if len(items) >= 64 and kinds == {bool}:
        e.reserve(NODE_COST * len(items))
        return {"$": "blist", "buf": e.buffer(bytes(items))}
    if len(items) >= 64 and len(kinds) == 1 and kinds <= {int, float}:
        try:
            packed = array.array("q" if int in kinds else "d", items)
        except OverflowError:
            return None
        e.reserve(NODE_COST * len(items))
        return {"$": "ilist" if int in kinds else "flist", "buf": e.buffer(packed)}
    if not _json_scalars(items, kinds):
        return None
    if str not in kinds:
        strings: Any = []
    elif len(kinds) == 1:
        strings = items
    elif kinds == {str, type(None)}:
        strings = list(filter(None, items))  # the non-empty strings, at C speed
    else:
        strings = [x for x in items if type(x) is str]
    if strings and max(map(len, strings)) >= LONG_STR:
        return None
    chars = sum(map(len, strings))
    if len(items) >= LONG_LIST:
        e.reserve(NODE_COST * len(items) + chars)
        parts: list[dict] = []
        for start in range(0, len(items), JSON_PART_ITEMS):
            _json_part(e, items[start : start + JSON_PART_ITEMS], parts)
        return {"$": "jlist", "parts": parts}
    e.reserve(NODE_COST * len(items) + chars, 24 * len(items) + sum(map(_json_length, strings)))
    return list(items)


def _json_part(e: Encoder, items: list, parts: list) -> None:
    """``items`` as JSON in one buffer of at most JSON_PART_BYTES (halved until it fits)."""
    data = json.dumps(items, separators=(",", ":"), allow_nan=False).encode()
    if len(data) > JSON_PART_BYTES and len(items) > 1:
        half = len(items) // 2
        _json_part(e, items[:half], parts)
        _json_part(e, items[half:], parts)
        return
    parts.append({"n": len(items), "buf": e.buffer(data)})


def _json_scalars(items: list, kinds: set) -> bool:
    """True if every item of ``items`` (of types ``kinds``) is a JSON scalar the host reads back as itself."""
    if int in kinds:
        ints = [x for x in items if type(x) is int] if len(kinds) > 1 else items
        if min(ints) < -(2**63) or max(ints) >= 2**63:
            return False
    if float in kinds:
        floats = [x for x in items if type(x) is float] if len(kinds) > 1 else items
        if not all(map(math.isfinite, floats)):
            return False
    return True


def _timezone(tz: Any) -> Any:
    if tz is None:
        return None
    if type(tz) is datetime.timezone:
        return {"offset": tz.utcoffset(None).total_seconds()}
    key = getattr(tz, "key", None) or getattr(tz, "zone", None)
    if type(key) is str and key:
        return {"key": key}
    raise NotPlain("timezone")


def _zone_chars(tz: Any) -> int:
    return 0 if tz is None else 16 + len(str(tz.get("key", "")))


def _encode_datetime(e: Encoder, obj: Any, depth: int) -> dict:
    tz = _timezone(obj.tzinfo)
    e.reserve(0, 72 + _zone_chars(tz))  # the node's JSON (a node counts 8 bytes of header by itself)
    return {"$": type(obj).__name__, "iso": obj.replace(tzinfo=None).isoformat(), "tz": tz}


def _encode_date(e: Encoder, obj: Any, depth: int) -> dict:
    e.reserve(0, 32)
    return {"$": "date", "iso": obj.isoformat()}


def _encode_timedelta(e: Encoder, obj: Any, depth: int) -> dict:
    e.reserve(0, 64)
    return {"$": "timedelta", "d": obj.days, "s": obj.seconds, "us": obj.microseconds}


def _encode_decimal(e: Encoder, obj: Any) -> dict:
    text = str(obj)
    if len(text) > MAX_DECIMAL_CHARS:  # the host refuses longer ones
        raise NotPlain("a Decimal with too many digits")
    e.reserve(len(text), len(text))
    return {"$": "decimal", "s": text}


_ENCODERS: dict[type, Callable[[Encoder, Any, int], Any]] = {
    AgentValue: lambda e, obj, depth: {
        "$": "agent_value",
        "repr": obj.text,
        "str": obj.str_text,
        "type": obj.type_name,
    },
    datetime.datetime: _encode_datetime,
    datetime.time: _encode_datetime,
    datetime.date: _encode_date,
    datetime.timedelta: _encode_timedelta,
    decimal.Decimal: lambda e, obj, depth: _encode_decimal(e, obj),
    fractions.Fraction: lambda e, obj, depth: {
        "$": "fraction",
        "n": e._plain(obj.numerator, depth),
        "d": e._plain(obj.denominator, depth),
    },
}


def _library_encoder(kind: type) -> Callable[[Encoder, Any, int], Any] | None:
    module = getattr(kind, "__module__", "") or ""
    top = module.split(".")[0]
    if top == "numpy":
        return _numpy_encoder(kind)
    if top == "pandas":
        return _pandas_encoder(kind)
    if top == "PIL" and _is_pil_image(kind):
        return _encode_image
    return None


def _numpy_encoder(kind: type) -> Callable | None:
    np = sys.modules.get("numpy")
    if np is None:
        return None
    if kind is np.ndarray:
        return _encode_ndarray
    if issubclass(kind, np.generic) and kind.__module__ == "numpy":
        return _encode_numpy_scalar
    return None


def _array_node(e: Encoder, array: Any, broadcast: bool = False) -> dict:
    """An array as one buffer; with ``broadcast``, a stride-0 view as its base and the full shape (``bcast``), never
    expanded. A view is copied only when its copy fits in the budget."""
    np = sys.modules["numpy"]
    if array.dtype.hasobject or array.dtype.kind not in "biufcmMSU" or array.dtype.fields is not None:
        raise NotPlain("dtype")
    if array.size and not array.flags.c_contiguous:
        if broadcast and 0 in array.strides:
            base = array[tuple(slice(None) if stride else slice(0, 1) for stride in array.strides)]
            return dict(_array_node(e, base), bcast=list(array.shape))
        e.check_room(array.nbytes)
        array = array.copy(order="C")
    raw = array.reshape(-1).view(np.uint8) if array.size else b""
    return {"$": "ndarray", "dtype": array.dtype.str, "shape": list(array.shape), "buf": e.buffer(raw)}


def _encode_ndarray(e: Encoder, obj: Any, depth: int) -> dict:
    if obj.dtype.kind == "O" and obj.dtype.fields is None:
        return _object_array(e, obj, depth)
    return _array_node(e, obj, broadcast=True)


def _object_array(e: Encoder, obj: Any, depth: int) -> dict:
    """An object array of plain values (str, int, float, None, bool...): its items, as an object column's."""
    e.check_room(8 * obj.size)  # the list of its items, before making it
    e.reserve(0, 48)
    items = _scalar_items(e, obj.reshape(-1).tolist(), depth)
    return {"$": "objarray", "shape": list(obj.shape), "items": items}


def _encode_numpy_scalar(e: Encoder, obj: Any, depth: int) -> dict:
    np = sys.modules["numpy"]
    if type(obj) is np.void and obj.dtype.fields is None:  # raw bytes (a structured one stays a handle)
        return {"$": "npvoid", "buf": e.buffer(obj.tobytes())}
    node = _array_node(e, np.asarray(obj))
    node["$"] = "npscalar"
    return node


def _is_pil_image(kind: type) -> bool:
    image_module = sys.modules.get("PIL.Image")
    return image_module is not None and issubclass(kind, image_module.Image)


def _encode_image(e: Encoder, obj: Any, depth: int) -> dict:
    image = obj if obj.mode in IMAGE_MODES else obj.convert("RGBA")
    return {"$": "image", "mode": image.mode, "size": list(image.size), "buf": e.buffer(image.tobytes())}


# --- pandas --------------------------------------------------------------------------------------------------------


def _pandas_encoder(kind: type) -> Callable | None:
    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    table: dict[Any, Callable] = {
        pd.DataFrame: _encode_dataframe,
        pd.Series: _encode_series,
        pd.Timestamp: _encode_timestamp,
        pd.Timedelta: lambda e, obj, depth: {"$": "pd_timedelta", **_in_unit(e, obj)},
        type(pd.NaT): lambda e, obj, depth: {"$": "nat"},
        type(pd.NA): lambda e, obj, depth: {"$": "na"},
        pd.Period: pandas_values.encode_period,
        pd.Interval: pandas_values.encode_interval,
    }
    for name in ("Index", "RangeIndex", "DatetimeIndex", "TimedeltaIndex", "CategoricalIndex", "MultiIndex",
                 "PeriodIndex", "IntervalIndex"):  # fmt: skip
        table[getattr(pd, name)] = lambda e, obj, depth: _index_node(e, obj, depth)
    encoder = table.get(kind)
    if encoder is None and issubclass(kind, pd.api.extensions.ExtensionArray):
        return _encode_extension_array  # those a column may hold; the others are refused there
    return encoder


def _in_unit(e: Encoder, obj: Any) -> dict:
    """A Timestamp's or Timedelta's integer in its own unit (its UTC instant for a Timestamp): no overflow, as a
    conversion to nanoseconds would have for a date past 2262."""
    e.reserve(0, 64)
    return {"v": int(obj.asm8.view("i8")), "unit": getattr(obj, "unit", "ns")}


def _encode_timestamp(e: Encoder, obj: Any, depth: int) -> dict:
    tz = _timezone(obj.tzinfo)
    e.reserve(0, 16 + _zone_chars(tz))
    return {"$": "timestamp", **_in_unit(e, obj), "tz": tz}


def _encode_extension_array(e: Encoder, obj: Any, depth: int) -> dict:
    """A pandas array standing alone (``series.unique()`` of strings, categories, periods...): its column."""
    e.reserve(0, 32)
    return {"$": "pd_array", "data": _column_node(e, obj, depth + 1)}


def _label(e: Encoder, value: Any, depth: int) -> Any:
    return e._plain(value, depth + 1)


def _index_node(e: Encoder, index: Any, depth: int) -> dict:
    pd = sys.modules["pandas"]
    if type(index) is pd.RangeIndex:
        return {"$": "range_index", "start": index.start, "stop": index.stop, "step": index.step,
                "name": _label(e, index.name, depth)}  # fmt: skip
    if type(index) is pd.MultiIndex:
        return {
            "$": "multi_index",
            "levels": [_index_node(e, level, depth + 1) for level in index.levels],
            "codes": [_array_node(e, codes) for codes in index.codes],
            "names": [_label(e, name, depth) for name in index.names],
        }
    node = {"$": "index", "data": _column_node(e, index, depth + 1), "name": _label(e, index.name, depth)}
    freq = pandas_values.index_freq(index)
    if freq is not None:
        node["freq"] = freq
    return node


def _column_node(e: Encoder, column: Any, depth: int) -> dict:
    """A pandas column (a Series, an Index or an array): numpy-backed, or one of the extension arrays listed above."""
    np, pd = sys.modules["numpy"], sys.modules["pandas"]
    dtype = column.dtype
    values = column if isinstance(column, pd.api.extensions.ExtensionArray) else column.array
    if type(values) is pd.arrays.NumpyExtensionArray:  # a numpy array in pandas' wrapping
        dtype = values.dtype.numpy_dtype
    if isinstance(dtype, np.dtype):
        array = column.to_numpy()
        if not dtype.hasobject:
            return _array_node(e, array)
        return {"$": "objects", "items": _scalar_items(e, array.tolist(), depth)}
    name = str(dtype)
    if name in MASKED_DTYPES:
        return {
            "$": "masked",
            "dtype": name,
            "data": _array_node(e, values._data),
            "mask": _array_node(e, values._mask),
        }
    if name == "category":
        return {"$": "categorical", "codes": _array_node(e, values.codes), "ordered": bool(dtype.ordered),
                "categories": _index_node(e, dtype.categories, depth + 1)}  # fmt: skip
    if isinstance(dtype, pd.StringDtype):
        items = [item if type(item) is str else None for item in values.to_numpy(dtype=object)]
        na_nan = getattr(dtype, "na_value", None) is not pd.NA
        return {
            "$": "strings",
            "items": _scalar_items(e, items, depth),
            "storage": str(getattr(dtype, "storage", "python")),
            "na_nan": na_nan,
        }
    if isinstance(dtype, pd.DatetimeTZDtype):
        utc = np.asarray(values.tz_convert("UTC").tz_localize(None))
        return {"$": "datetimetz", "data": _array_node(e, utc), "tz": _timezone(dtype.tz)}
    if isinstance(values, (pd.arrays.DatetimeArray, pd.arrays.TimedeltaArray)):
        return _array_node(e, np.asarray(values))
    if isinstance(dtype, pd.PeriodDtype):
        return pandas_values.period_column(e, values)
    if isinstance(dtype, pd.IntervalDtype):
        return pandas_values.interval_column(e, values)
    raise NotPlain(name)


# The parts are encoded in the order the host decodes them (a reference must follow the node it names).


def _scalar_items(e: Encoder, items: list, depth: int) -> Any:
    """The items of an object or string column: packed (a list, or JSON in a buffer) or one by one."""
    e.reserve(8 * len(items))  # the host builds the column's array from them
    packed = _packed_list(e, items) if items else []
    return packed if packed is not None else [e._plain(item, depth + 1) for item in items]


def _encode_dataframe(e: Encoder, df: Any, depth: int) -> dict:
    columns = _index_node(e, df.columns, depth + 1)
    index = _index_node(e, df.index, depth + 1)
    data = [_column_node(e, df.iloc[:, i], depth + 1) for i in range(df.shape[1])]
    return {"$": "dataframe", "columns": columns, "index": index, "data": data}


def _encode_series(e: Encoder, series: Any, depth: int) -> dict:
    index = _index_node(e, series.index, depth + 1)
    data = _column_node(e, series, depth + 1)
    return {"$": "series", "index": index, "data": data, "name": _label(e, series.name, depth)}


def encode(value: Any, reference: Callable[[Any], dict] | None = None, max_bytes: int | None = None):
    """``(tree, buffers)`` for ``value``; with no ``reference`` callback a non-plain value raises :class:`NotPlain`."""
    encoder = Encoder(reference, max_bytes)
    return encoder.value(value), encoder.buffers


def fingerprint(value: Any, max_bytes: int | None = None) -> int | None:
    """A checksum of the plain-data encoding of ``value`` (None if it is not plain data)."""
    try:
        tree, buffers = encode(value, None, max_bytes)
    except (NotPlain, ValueError, TypeError, AttributeError):
        return None
    checksum = zlib.adler32(json.dumps(tree, separators=(",", ":")).encode())
    for buffer in buffers:
        checksum = zlib.adler32(buffer, checksum)
    return checksum
