"""pandas' period and interval values on the wire, both ends: ``Period`` and ``Interval`` scalars and period and
interval columns (``PeriodArray``/``PeriodIndex``, ``IntervalArray``/``IntervalIndex``, and such Series and frame
columns), so that an answer made of them comes back as a value, not a handle; and the frequency of a
``DatetimeIndex``/``TimedeltaIndex`` (``"freq": "D"`` on its index node).

* ``{"$": "period", "ordinal": int, "freq": "M"}``, a Period; ``{"$": "periods", "ordinals": ndarray, "freq": ...}``,
  a column of them (int64 ordinals, missing ones as NaT's ordinal);
* ``{"$": "interval", "left": ..., "right": ..., "closed": "right"}``, an Interval (ends: numbers, Timestamps,
  Timedeltas); ``{"$": "intervals", "left": ndarray, "right": ndarray, "closed": ...}``, a column of them (ends of a
  numpy dtype; missing intervals as NaN/NaT ends).

``encoding`` and ``decoding`` call in here, and this module reaches their machinery only through the methods of the
encoder (``array``, ``_plain``) and the decoder (``array``, ``value``) it is given, so it imports neither. The host
checks every field: frequencies by pattern before pandas parses them, ordinals as int64, closed sides from a fixed
set, ends from a fixed set of types, array lengths against each other.
"""

from __future__ import annotations

import re
from typing import Any

from .plain import NotPlain, WireError

#: A period frequency as pandas writes it: an optional positive multiple, an alias, an optional anchor (``Q-DEC``).
FREQ_PATTERN = re.compile(r"^([1-9][0-9]{0,5})?[A-Za-z]{1,5}(-[A-Za-z]{3})?$")
CLOSED = frozenset({"left", "right", "both", "neither"})
#: The numpy kinds an interval column's ends may have (numbers, datetimes, durations).
END_KINDS = "iufmM"
_INT64 = (-(2**63), 2**63)


def _numpy() -> Any:
    import numpy

    return numpy


def _pandas() -> Any:
    import pandas

    return pandas


# --- the worker's side -------------------------------------------------------------------------------------------


def _freq(text: Any) -> str:
    if type(text) is not str or not FREQ_PATTERN.match(text):
        raise NotPlain("a period frequency the host would not read")
    return text


def index_freq(index: Any) -> str | None:
    """The frequency of a DatetimeIndex or TimedeltaIndex (``date_range``'s ``"D"``), if it has one."""
    pd = _pandas()
    if not isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex)) or index.freq is None:
        return None
    text = index.freqstr
    return text if type(text) is str and FREQ_PATTERN.match(text) else None


def encode_period(e: Any, obj: Any, depth: int) -> dict:
    freq = _freq(obj.freqstr)
    e.reserve(0, 56 + len(freq))  # the node's JSON, as the budget counts a header
    return {"$": "period", "ordinal": int(obj.ordinal), "freq": freq}


def encode_interval(e: Any, obj: Any, depth: int) -> dict:
    e.reserve(0, 64)
    left, right = e._plain(obj.left, depth + 1), e._plain(obj.right, depth + 1)
    return {"$": "interval", "left": left, "right": right, "closed": str(obj.closed)}


def period_column(e: Any, values: Any) -> dict:
    """A PeriodArray: its int64 ordinals (a view, no copy) and its frequency."""
    return {"$": "periods", "ordinals": e.array(values.asi8), "freq": _freq(values.freqstr)}


def interval_column(e: Any, values: Any) -> dict:
    """An IntervalArray whose ends are numpy arrays (numbers, naive datetimes, durations); others stay handles."""
    np = _numpy()
    left, right = values.left, values.right
    if not isinstance(left.dtype, np.dtype) or left.dtype.kind not in END_KINDS or left.dtype != right.dtype:
        raise NotPlain(f"interval[{left.dtype}]")
    return {
        "$": "intervals",
        "left": e.array(left.to_numpy()),
        "right": e.array(right.to_numpy()),
        "closed": str(values.closed),
    }


# --- the host's side ---------------------------------------------------------------------------------------------


def _period_dtype(text: Any) -> Any:
    pd = _pandas()
    if type(text) is not str or not FREQ_PATTERN.match(text):
        raise WireError(f"bad period frequency {text!r}"[:120])
    try:
        return pd.PeriodDtype(text)
    except (ValueError, TypeError, KeyError):
        raise WireError(f"unknown period frequency {text!r}") from None


def with_freq(index: Any, text: Any) -> Any:
    """``index`` with the frequency ``text`` (None: as it is); pandas checks that the values conform to it."""
    pd = _pandas()
    if text is None:
        return index
    if (
        type(text) is not str
        or not FREQ_PATTERN.match(text)
        or not isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex))
    ):
        raise WireError("bad index frequency")
    try:
        return type(index)(index, freq=text)
    except (ValueError, TypeError, KeyError) as exc:
        raise WireError(f"bad index frequency: {exc}"[:200]) from None


def _closed(node: dict) -> str:
    closed = node.get("closed")
    if type(closed) is not str or closed not in CLOSED:
        raise WireError("bad interval side")
    return closed


def decode_period(d: Any, node: dict, depth: int) -> Any:
    pd = _pandas()
    ordinal = node.get("ordinal")
    if type(ordinal) is not int or not _INT64[0] <= ordinal < _INT64[1]:
        raise WireError("bad period ordinal")
    dtype = _period_dtype(node.get("freq"))
    try:
        return pd.Period(ordinal=ordinal, freq=dtype.freq)
    except (ValueError, TypeError, OverflowError) as exc:
        raise WireError(f"bad period: {exc}") from None


def _end(value: Any) -> Any:
    """An interval's end: a number, a Timestamp or a Timedelta (a numpy number too), nothing else."""
    np = _numpy()
    kind = type(value)
    if kind in (int, float) or (kind.__module__ == "numpy" and isinstance(value, (np.integer, np.floating))):
        return value
    if kind.__name__ in ("Timestamp", "Timedelta") and kind.__module__.startswith("pandas"):
        return value
    raise WireError("bad interval end")


def decode_interval(d: Any, node: dict, depth: int) -> Any:
    pd = _pandas()
    left, right = _end(d.value(node.get("left"), depth + 1)), _end(d.value(node.get("right"), depth + 1))
    closed = _closed(node)
    try:
        return pd.Interval(left, right, closed=closed)
    except (ValueError, TypeError, OverflowError) as exc:
        raise WireError(f"bad interval: {exc}") from None


def decode_periods(d: Any, node: dict, depth: int) -> Any:
    pd, np = _pandas(), _numpy()
    ordinals = d.array(node.get("ordinals"))
    if ordinals.dtype != np.dtype("int64"):
        raise WireError("period ordinals must be int64")
    return pd.arrays.PeriodArray(ordinals, dtype=_period_dtype(node.get("freq")))


def decode_intervals(d: Any, node: dict, depth: int) -> Any:
    pd = _pandas()
    left, right = d.array(node.get("left")), d.array(node.get("right"))
    if left.dtype != right.dtype or left.dtype.kind not in END_KINDS or left.shape != right.shape:
        raise WireError("bad interval column")
    return pd.arrays.IntervalArray.from_arrays(left, right, closed=_closed(node), copy=False)
