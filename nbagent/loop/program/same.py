"""Whether two answers are the same value: pandas and numpy by their values, floats within rounding."""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["same_value"]

_REL = 1e-9


def same_value(first: Any, second: Any) -> bool:
    """True when `first` and `second` are the same answer: equal frames and series (values, index, columns; dtypes
    may differ in width), equal arrays, numbers equal up to float rounding (NaN equals NaN), containers item by item,
    text equal as text."""
    if first is second:
        return True
    for kind in ("DataFrame", "Series", "Index"):
        if _is_pandas(first, kind) or _is_pandas(second, kind):
            return _same_pandas(first, second, kind)
    if _is_array(first) or _is_array(second):
        return _same_array(first, second)
    if isinstance(first, str) or isinstance(second, str):
        return isinstance(first, str) and isinstance(second, str) and str(first) == str(second)
    if _is_number(first) and _is_number(second):
        return _same_number(first, second)
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(same_value(first[k], second[k]) for k in first)
    if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
        return type(first) is type(second) and len(first) == len(second) and all(map(same_value, first, second))
    try:
        return bool(first == second)
    except Exception:  # an object whose == raises or is ambiguous
        return repr(first) == repr(second)


def _is_pandas(value: Any, kind: str) -> bool:
    return type(value).__name__ == kind and type(value).__module__.startswith("pandas")


def _same_pandas(first: Any, second: Any, kind: str) -> bool:
    if not (_is_pandas(first, kind) and _is_pandas(second, kind)):
        return False
    import pandas.testing as checks

    check = {"DataFrame": checks.assert_frame_equal, "Series": checks.assert_series_equal}.get(kind)
    try:
        if check is None:
            checks.assert_index_equal(first, second, exact=False)
        else:
            check(first, second, check_dtype=False, rtol=_REL)
    except (AssertionError, TypeError, ValueError):
        return False
    return True


def _is_array(value: Any) -> bool:
    return type(value).__name__ == "ndarray" and type(value).__module__ == "numpy"


def _same_array(first: Any, second: Any) -> bool:
    import numpy as np

    if not (_is_array(first) and _is_array(second)) or first.shape != second.shape:
        return False
    try:
        return bool(np.allclose(first, second, rtol=_REL, atol=0, equal_nan=True))
    except TypeError:  # not numbers
        return bool(np.array_equal(first, second))


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool) or _is_numpy_scalar(value)


def _is_numpy_scalar(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0


def _same_number(first: Any, second: Any) -> bool:
    a, b = (v.item() if _is_numpy_scalar(v) else v for v in (first, second))
    if isinstance(a, complex) or isinstance(b, complex):
        return a == b
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=_REL, abs_tol=1e-12)
