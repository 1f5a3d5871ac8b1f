"""Plain data between the worker and the host, without pickle: a JSON tree plus raw byte buffers.

The worker :func:`encode`\\ s a value; the host :func:`decode`\\ s it, building only these types from data, never calling
code that came from the worker:

* JSON values, ``tuple``, ``set``, ``frozenset``, ``bytes``, ``bytearray``, ``complex``, big ``int``, non-finite
  ``float``, ``datetime``/``date``/``time``/``timedelta``, ``Decimal``, ``Fraction``;
* numpy arrays and scalars of non-object dtypes (raw buffers);
* pandas ``DataFrame``/``Series``/``Index`` whose columns are numpy dtypes, categoricals, nullable integers, floats and
  booleans, strings, tz-aware datetimes or object columns of the plain scalars above; ``Timestamp``, ``Timedelta``;
* PIL images (raw pixels in a few modes); :class:`AgentValue` (the repr/str of an agent-defined object);
* references: ``{"$": "remote"}`` (an object that stays in the worker; the host makes a handle or proxy) and
  ``{"$": "host"}`` (an object the host gave the worker, returned as itself).

Only exact types count (a ``str`` subclass is not plain data). Anything else, too deep or too large, is a reference.

Each object is encoded once: a later occurrence is ``{"$": "ref", "to": n}``, and the first one carries ``"#": n``
(a list: a leading ``{"$": "@", "#": n}``), so the host rebuilds the aliasing and never multiplies data. Long strings
and long lists of scalars travel as buffers; a broadcast (stride-0) array as its small base and the full shape. The
decoder counts what it allocates (budget.py) and gives up past the limit it was given, on a reference to a node not
yet decoded (a cycle), on ints beyond CPython's int/str limit, on dicts and sets whose keys collide, and when its
``check`` (the step's deadline, a stop request) says so.
"""

from __future__ import annotations

import array
import datetime
import decimal
import fractions
import itertools
import json
import math
import re
import sys
import zlib
from collections.abc import Callable
from typing import Any

from .budget import MAX_HEADER_BYTES, NODE_COST

MAX_DEPTH = 64
MAX_NODES = 2_000_000
#: Ints travel up to CPython's int/str conversion limit (4300 decimal digits by default: about 14,300 bits).
MAX_INT_BITS = math.ceil((sys.get_int_max_str_digits() or 4300) * math.log2(10))
#: Strings this long go as a UTF-8 buffer (once, however often they occur), lists of scalars this long as JSON in a
#: buffer (outside the header).
LONG_STR = 1024
LONG_LIST = 256
JSON_PART_ITEMS = 4096
JSON_PART_BYTES = 1 << 20
#: A dict or set may have this many keys sharing a hash with another key (building it is quadratic in them).
MAX_HASH_COLLISIONS = 1024
#: The worker keeps its (upper-bound) estimate of a frame's JSON header under this.
HEADER_ESTIMATE_LIMIT = MAX_HEADER_BYTES // 2
CHECK_EVERY_NODES = 4096
MAX_DECIMAL_CHARS = 10_000
_DTYPE = re.compile(r"^[<>|=][biufcmMSU]\d{1,4}(\[[A-Za-z0-9]{1,3}\])?$")
_IMAGE_MODES = frozenset({"1", "L", "LA", "RGB", "RGBA", "I", "F", "I;16", "CMYK"})
_MASKED = {
    "Int8": "i1", "Int16": "i2", "Int32": "i4", "Int64": "i8", "UInt8": "u1", "UInt16": "u2", "UInt32": "u4",
    "UInt64": "u8", "Float32": "f4", "Float64": "f8", "boolean": "b1",
}  # fmt: skip


class WireError(ValueError):
    """The data does not follow the format (the host treats the worker as broken)."""


class NotPlain(Exception):
    """Raised by the encoder: the value is not plain data (or too deep, or too large)."""


class TooLarge(NotPlain):
    """Raised by the encoder: the value does not fit in the budget (the whole top-level value becomes a handle)."""


class DecodeAbandoned(Exception):
    """Raised by the decoder's ``check``: the step's deadline passed or a stop was requested (``reason``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def collisions(keys: Any) -> int:
    """How many of ``keys`` share their hash with an earlier key (cheap: the keys' hashes only)."""
    return len(keys) - len(set(map(hash, keys)))


class AgentValue:
    """Stands for an output whose class the agent's code defined (or that holds such objects): its ``repr`` and
    ``str``, computed under the call's limits, so that showing it later runs no agent code."""

    __slots__ = ("text", "str_text", "type_name")

    def __init__(self, text: str, str_text: str, type_name: str) -> None:
        self.text, self.str_text, self.type_name = str(text), str(str_text), type_name

    def __repr__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.str_text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AgentValue) and other.text == self.text

    __hash__ = None  # type: ignore[assignment]


# --- encoding (in the worker) --------------------------------------------------------------------------------------

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


_JSON_KINDS = frozenset({int, float, str, bool, type(None)})


def _packed_list(e: Encoder, items: list) -> Any:
    """A list of JSON scalars (the common case, checked at C speed): as itself, as one binary buffer when it is a long
    list of int64, floats or bools, as JSON in small buffers when it is another long list (strings...); None for
    anything else (a long string among them, a big int, a non-finite float: encoded item by item)."""
    kinds = set(map(type, items))
    if not kinds or not kinds <= _JSON_KINDS:
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


def _encode_datetime(e: Encoder, obj: Any, depth: int) -> dict:
    return {"$": type(obj).__name__, "iso": obj.replace(tzinfo=None).isoformat(), "tz": _timezone(obj.tzinfo)}


def _encode_date(e: Encoder, obj: Any, depth: int) -> dict:
    return {"$": "date", "iso": obj.isoformat()}


def _encode_timedelta(e: Encoder, obj: Any, depth: int) -> dict:
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
    return _array_node(e, obj, broadcast=True)


def _encode_numpy_scalar(e: Encoder, obj: Any, depth: int) -> dict:
    np = sys.modules["numpy"]
    node = _array_node(e, np.asarray(obj))
    node["$"] = "npscalar"
    return node


def _is_pil_image(kind: type) -> bool:
    image_module = sys.modules.get("PIL.Image")
    return image_module is not None and issubclass(kind, image_module.Image)


def _encode_image(e: Encoder, obj: Any, depth: int) -> dict:
    image = obj if obj.mode in _IMAGE_MODES else obj.convert("RGBA")
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
        pd.Timedelta: lambda e, obj, depth: {"$": "pd_timedelta", "ns": int(obj.value)},
        type(pd.NaT): lambda e, obj, depth: {"$": "nat"},
        type(pd.NA): lambda e, obj, depth: {"$": "na"},
    }
    for name in ("Index", "RangeIndex", "DatetimeIndex", "TimedeltaIndex", "CategoricalIndex", "MultiIndex"):
        table[getattr(pd, name)] = lambda e, obj, depth: _index_node(e, obj, depth)
    return table.get(kind)


def _encode_timestamp(e: Encoder, obj: Any, depth: int) -> dict:
    return {"$": "timestamp", "ns": int(obj.as_unit("ns").value if hasattr(obj, "as_unit") else obj.value),
            "tz": _timezone(obj.tzinfo)}  # fmt: skip


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
    return {"$": "index", "data": _column_node(e, index, depth + 1), "name": _label(e, index.name, depth)}


def _column_node(e: Encoder, column: Any, depth: int) -> dict:
    """A pandas column (a Series or an Index): numpy-backed, or one of the extension arrays listed above."""
    np, pd = sys.modules["numpy"], sys.modules["pandas"]
    dtype = column.dtype
    values = column.array
    if isinstance(dtype, np.dtype):
        array = column.to_numpy()
        if not dtype.hasobject:
            return _array_node(e, array)
        return {"$": "objects", "items": _scalar_items(e, array.tolist(), depth)}
    name = str(dtype)
    if name in _MASKED:
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


# --- decoding (in the host) ----------------------------------------------------------------------------------------


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
        if set(map(type, node)) <= _JSON_KINDS:
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
        if type(values) is not list or len(values) != count or not set(map(type, values)) <= _JSON_KINDS:
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
    if type(text) is not str or not _DTYPE.match(text):
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
    shape = node.get("shape")
    if type(shape) is not list or len(shape) > 32 or any(type(n) is not int or n < 0 for n in shape):
        raise WireError("bad shape")
    data = d.buffer(node)
    count = math.prod(shape)
    if count * dtype.itemsize != len(data):
        raise WireError("array size does not match its buffer")
    if count == 0:
        return np.empty(shape, dtype=dtype)
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def _decode_npscalar(d: Decoder, node: dict, depth: int) -> Any:
    array = _decode_ndarray(d, node, depth)
    if array.shape != ():
        raise WireError("bad numpy scalar")
    return array[()]


def _decode_image(d: Decoder, node: dict, depth: int) -> Any:
    from PIL import Image

    mode, size = node.get("mode"), node.get("size")
    if mode not in _IMAGE_MODES or type(size) is not list or len(size) != 2:
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


def _decode_label(d: Decoder, node: Any, depth: int) -> Any:
    """A column, index or Series name: any hashable scalar the format builds (`row.name` of `df.iloc[0]` is a
    numpy integer; of a frame indexed by date, a Timestamp), never a reference to a live object."""
    value = d.value(node, depth + 1)
    pandas_scalar = type(value).__name__ in ("Timestamp", "Timedelta") and type(value).__module__.startswith("pandas")
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
        return pd.Index(data, name=_decode_label(d, node.get("name"), depth), tupleize_cols=False)
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
            kind = _MASKED.get(node.get("dtype"))
            data, mask = _decode_ndarray(d, node.get("data"), depth), _decode_ndarray(d, node.get("mask"), depth)
            if kind is None or data.dtype != np.dtype(kind) or mask.dtype != np.bool_ or data.shape != mask.shape:
                raise WireError("bad masked column")
            constructor = {"b": pd.arrays.BooleanArray, "f": pd.arrays.FloatingArray}.get(
                kind[0], pd.arrays.IntegerArray
            )
            return constructor(data.copy(), mask.copy())
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
            return pd.DatetimeIndex(data).tz_localize("UTC").tz_convert(tz).array
    except (ValueError, TypeError) as exc:
        if isinstance(exc, WireError):
            raise
        raise WireError(str(exc)) from None
    raise WireError("bad column")


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
    frame = pd.DataFrame(dict(enumerate(data)), index=index) if data else pd.DataFrame(index=index)
    frame.columns = columns
    return frame


def _decode_series(d: Decoder, node: dict, depth: int) -> Any:
    pd = _pandas()
    index = _decode_index(d, node.get("index"), depth)
    data = _decode_column(d, node.get("data"), depth + 1)
    if len(data) != len(index):
        raise WireError("bad series length")
    return pd.Series(data, index=index, name=_decode_label(d, node.get("name"), depth), copy=False)


def _decode_timestamp(d: Decoder, node: dict, depth: int) -> Any:
    pd = _pandas()
    value = node.get("ns")
    if type(value) is not int:
        raise WireError("bad timestamp")
    stamp = pd.Timestamp(value, unit="ns", tz="UTC")
    tz = _decode_timezone(node.get("tz"))
    return stamp.tz_convert(tz) if tz is not None else stamp.tz_localize(None)


def _decode_pd_timedelta(d: Decoder, node: dict, depth: int) -> Any:
    value = node.get("ns")
    if type(value) is not int:
        raise WireError("bad timedelta")
    return _pandas().Timedelta(value, unit="ns")


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
    "image": _decode_image,
    "dataframe": _decode_dataframe,
    "series": _decode_series,
    "index": _decode_index,
    "range_index": _decode_index,
    "multi_index": _decode_index,
    "timestamp": _decode_timestamp,
    "pd_timedelta": _decode_pd_timedelta,
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
