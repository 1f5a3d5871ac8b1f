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
import zlib
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64
MAX_NODES = 2_000_000
MAX_INT_DIGITS = 100_000
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
    (or raises :class:`NotPlain` to refuse the whole value)."""

    def __init__(self, reference: Callable[[Any], dict] | None = None, max_bytes: int | None = None) -> None:
        self.reference = reference
        self.max_bytes = max_bytes
        self.buffers: list[memoryview] = []
        self.size = 0
        self.nodes = 0

    def buffer(self, data: Any) -> int:
        view = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
        self.size += view.nbytes
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise NotPlain("too large")
        self.buffers.append(view)
        return len(self.buffers) - 1

    def value(self, obj: Any, depth: int = 0) -> Any:
        """The node for ``obj``; a non-plain value becomes a reference (or the whole encoding is refused)."""
        mark = (len(self.buffers), self.size)
        try:
            return self._plain(obj, depth)
        except NotPlain:
            if self.reference is None:
                raise
            del self.buffers[mark[0] :]
            self.size = mark[1]
            return self.reference(obj)

    def _plain(self, obj: Any, depth: int) -> Any:
        self.nodes += 1
        if depth > MAX_DEPTH or self.nodes > MAX_NODES:
            raise NotPlain("too deep")
        kind = type(obj)
        if kind in _SCALARS:
            return obj
        if kind is int:
            return obj if -(2**63) <= obj < 2**63 else {"$": "int", "hex": format(obj, "x")}
        if kind is float:
            return obj if math.isfinite(obj) else {"$": "float", "v": repr(obj)}
        if kind is list:
            packed = _packed_list(self, obj)
            if packed is not None:
                return packed
            return [self.value(item, depth + 1) for item in obj]
        if kind is tuple:
            return {"$": "tuple", "items": [self.value(item, depth + 1) for item in obj]}
        if kind is dict:
            keys = [self.value(key, depth + 1) for key in obj]
            return {"$": "dict", "k": keys, "v": [self.value(v, depth + 1) for v in obj.values()]}
        if kind in (set, frozenset):
            return {"$": kind.__name__, "items": [self.value(item, depth + 1) for item in obj]}
        if kind in (bytes, bytearray):
            return {"$": kind.__name__, "buf": self.buffer(obj)}
        if kind is complex:
            return {"$": "complex", "re": self._plain(obj.real, depth), "im": self._plain(obj.imag, depth)}
        encoder = _ENCODERS.get(kind) or _library_encoder(kind)
        if encoder is None:
            raise NotPlain(kind.__name__)
        return encoder(self, obj, depth)


_JSON_KINDS = frozenset({int, float, str, bool, type(None)})


def _packed_list(e: Encoder, items: list) -> Any:
    """A list of JSON scalars (the common case, checked at C speed): as itself, or as one binary buffer when it is a
    long list of int64 or of floats; None for anything else."""
    kinds = set(map(type, items))
    if not kinds or not kinds <= _JSON_KINDS:
        return None
    if len(items) >= 64 and kinds == {bool}:
        return {"$": "blist", "buf": e.buffer(bytes(items))}
    if len(items) >= 64 and len(kinds) == 1 and kinds <= {int, float}:
        try:
            packed = array.array("q" if int in kinds else "d", items)
        except OverflowError:
            return None
        return {"$": "ilist" if int in kinds else "flist", "buf": e.buffer(packed)}
    if int in kinds:
        ints = [x for x in items if type(x) is int] if len(kinds) > 1 else items
        if min(ints) < -(2**63) or max(ints) >= 2**63:
            return None
    if float in kinds:
        floats = [x for x in items if type(x) is float] if len(kinds) > 1 else items
        if not all(map(math.isfinite, floats)):
            return None
    return list(items)


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
    decimal.Decimal: lambda e, obj, depth: {"$": "decimal", "s": str(obj)},
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


def _array_node(e: Encoder, array: Any) -> dict:
    np = sys.modules["numpy"]
    if array.dtype.hasobject or array.dtype.kind not in "biufcmMSU" or array.dtype.fields is not None:
        raise NotPlain("dtype")
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    raw = array.reshape(-1).view(np.uint8) if array.size else b""
    return {"$": "ndarray", "dtype": array.dtype.str, "shape": list(array.shape), "buf": e.buffer(raw)}


def _encode_ndarray(e: Encoder, obj: Any, depth: int) -> dict:
    return _array_node(e, obj)


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
        return {"$": "objects", "items": [e._plain(item, depth + 1) for item in array.tolist()]}
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
        return {"$": "strings", "items": items, "storage": str(getattr(dtype, "storage", "python")), "na_nan": na_nan}
    if isinstance(dtype, pd.DatetimeTZDtype):
        utc = np.asarray(values.tz_convert("UTC").tz_localize(None))
        return {"$": "datetimetz", "data": _array_node(e, utc), "tz": _timezone(dtype.tz)}
    if isinstance(values, (pd.arrays.DatetimeArray, pd.arrays.TimedeltaArray)):
        return _array_node(e, np.asarray(values))
    raise NotPlain(name)


def _encode_dataframe(e: Encoder, df: Any, depth: int) -> dict:
    columns = [_column_node(e, df.iloc[:, i], depth + 1) for i in range(df.shape[1])]
    return {"$": "dataframe", "columns": _index_node(e, df.columns, depth + 1),
            "index": _index_node(e, df.index, depth + 1), "data": columns}  # fmt: skip


def _encode_series(e: Encoder, series: Any, depth: int) -> dict:
    return {"$": "series", "name": _label(e, series.name, depth), "index": _index_node(e, series.index, depth + 1),
            "data": _column_node(e, series, depth + 1)}  # fmt: skip


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
    """Builds values from a tree and its buffers; ``remote(node)`` and ``host(node)`` resolve references."""

    def __init__(self, buffers: list, remote: Callable[[dict], Any], host: Callable[[dict], Any]) -> None:
        self.buffers = buffers
        self.remote = remote
        self.host = host
        self.nodes = 0

    def buffer(self, node: dict) -> Any:
        index = node.get("buf")
        if type(index) is not int or not 0 <= index < len(self.buffers):
            raise WireError("bad buffer reference")
        return self.buffers[index]

    def value(self, node: Any, depth: int = 0) -> Any:
        self.nodes += 1
        if depth > MAX_DEPTH + 8 or self.nodes > MAX_NODES:
            raise WireError("value too deep or too large")
        kind = type(node)
        if node is None or kind in (bool, int, float, str):
            return node
        if kind is list:
            if set(map(type, node)) <= _JSON_KINDS:
                self.nodes += len(node)
                return node
            return [self.value(item, depth + 1) for item in node]
        if kind is not dict:
            raise WireError(f"unexpected {kind.__name__}")
        tag = node.get("$")
        handler = _DECODERS.get(tag) if type(tag) is str else None
        if handler is None:
            raise WireError(f"unknown tag {tag!r}")
        return handler(self, node, depth)

    def items(self, node: dict, key: str, depth: int) -> list:
        items = node.get(key)
        if type(items) is not list:
            raise WireError(f"{key} must be a list")
        return [self.value(item, depth + 1) for item in items]


def _decode_int(d: Decoder, node: dict, depth: int) -> int:
    text = node.get("hex")
    if type(text) is not str or len(text) > MAX_INT_DIGITS or not re.fullmatch(r"-?[0-9a-f]+", text):
        raise WireError("bad int")
    return int(text, 16)


def _decode_float(d: Decoder, node: dict, depth: int) -> float:
    if node.get("v") not in ("nan", "inf", "-inf"):
        raise WireError("bad float")
    return float(node["v"])


def _decode_dict(d: Decoder, node: dict, depth: int) -> dict:
    keys, values = d.items(node, "k", depth), d.items(node, "v", depth)
    if len(keys) != len(values):
        raise WireError("bad dict")
    try:
        return dict(zip(keys, values))
    except TypeError as exc:
        raise WireError(f"bad dict key: {exc}") from None


def _decode_hashable(kind: type) -> Callable[[Decoder, dict, int], Any]:
    def decode(d: Decoder, node: dict, depth: int) -> Any:
        try:
            return kind(d.items(node, "items", depth))
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
    if type(text) is not str or len(text) > 10_000:
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


def _decode_ndarray(d: Decoder, node: dict, depth: int) -> Any:
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
        d.nodes += len(values)
        return values.tolist()

    return decode


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
            return _objects(d.items(node, "items", depth))
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
            items = _list(node, "items")
            if any(item is not None and type(item) is not str for item in items):
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
    "blist": lambda d, node, depth: list(map(bool, d.buffer(node))),
    "flist": _decode_packed("d"),
    "ndarray": _decode_ndarray,
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


def decode(tree: Any, buffers: list, remote: Callable[[dict], Any], host: Callable[[dict], Any]) -> Any:
    """The value of ``tree``; :class:`WireError` if the data does not follow the format."""
    try:
        return Decoder(buffers, remote, host).value(tree)
    except RecursionError:
        raise WireError("value too deep") from None
