"""Text for people and models: shortening it (one helper, with named policies), and values as plain text.

Every place that clips text (an observation fed back to the model, a value shown
in the prompt, a one-line summary, a managed agent's run summary) names one of
the policies below, so a limit is changed in one place and reads the same everywhere.

`plain_text` is how a view shows a value a person asked for: numpy and pandas scalars as
the numbers and dates they are (`25124.05`, not `np.float64(25124.05)`), also inside a
tuple, list, dict or set. The value itself is never changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "Truncation",
    "truncate",
    "plain_text",
    "plain_repr",
    "OBSERVATION",
    "MODEL_ECHO",
    "RUN_SUMMARY",
    "VALUE_REPR",
    "ONE_LINE",
]


@dataclass(frozen=True)
class Truncation:
    """Keep at most `limit` characters: the head, or head and tail ("middle"); `marker` says what was cut.

    `marker` may use `{dropped}` (the number of characters left out).
    """

    limit: int
    keep: str = "head"  # "head" | "middle"
    marker: str = "…"

    def __call__(self, text: str) -> str:
        if len(text) <= self.limit:
            return text
        mark = self.marker.format(dropped=len(text) - self.limit)
        if self.keep == "middle":
            half = self.limit // 2
            return text[:half] + mark + text[-half:]
        return text[: self.limit] + mark


OBSERVATION = Truncation(20_000, marker="\n[… {dropped} more characters]")  # code output the model reads
MODEL_ECHO = Truncation(2_000, marker="\n[…]")  # the model's own text quoted back in an error
RUN_SUMMARY = Truncation(2_000, keep="middle", marker="\n[…]\n")  # a managed agent's messages in its report
VALUE_REPR = Truncation(200)  # a variable's repr in the task text
ONE_LINE = Truncation(80)  # a final answer in a one-line summary


def truncate(text: str, policy: Truncation) -> str:
    """`text` shortened by `policy` (e.g. `truncate(logs, OBSERVATION)`)."""
    return policy(text)


_CONTAINERS = (list, tuple, dict, set, frozenset)
_MAX_ITEMS = 10_000  # a longer container is shown as Python shows it (walking it is not worth it)
_MAX_DEPTH = 6
_PANDAS_SCALARS = ("Timestamp", "Timedelta", "Period")


class _Shown:
    """Stands in for a scalar inside a container: its repr is the scalar's plain text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def plain_text(value: Any) -> str:
    """`str(value)` with numpy/pandas scalars as plain numbers and dates, also inside containers.

    `np.float64(25124.05)` -> "25124.05"; `("Consumer", np.float64(25124.05))` -> "('Consumer', 25124.05)";
    `Timestamp('2024-10-01 00:00:00')` -> "2024-10-01"; text is itself.
    """
    if isinstance(value, str):
        return str(value)
    plain = _plain(value, 0)
    return plain.text if isinstance(plain, _Shown) else str(plain)


def plain_repr(value: Any) -> str:
    """`repr(value)` with numpy/pandas scalars as plain numbers and dates, also inside containers ('text' quoted)."""
    return repr(_plain(value, 0))


def _plain(value: Any, depth: int) -> Any:
    if _is_scalar(value):
        return _scalar_text(value)
    kind = type(value)
    if kind not in _CONTAINERS or depth >= _MAX_DEPTH or len(value) > _MAX_ITEMS:
        return value
    if kind is dict:
        # a key shown plainly is a _Shown, hashed by identity: two keys with the same text stay two keys
        return {_plain(key, depth + 1): _plain(item, depth + 1) for key, item in value.items()}
    items = [_plain(item, depth + 1) for item in value]
    if kind is tuple:
        return tuple(items)
    if kind in (set, frozenset):
        return _Shown("{" + ", ".join(map(repr, items)) + "}" if items else f"{kind.__name__}()")
    return items


def _is_scalar(value: Any) -> bool:
    kind = type(value)
    module = kind.__module__.split(".")[0]
    if module == "numpy":
        return getattr(value, "ndim", None) == 0 and kind.__name__ != "ndarray"
    return module == "pandas" and kind.__name__ in _PANDAS_SCALARS


def _scalar_text(value: Any) -> Any:
    """A numpy/pandas scalar as a person writes it: `str()` for numbers, a date without a midnight time."""
    if isinstance(value, str):  # numpy.str_: text stays text (quoted inside a container)
        return str(value)
    if type(value).__name__ == "Timestamp" and value.tz is None and value == value.normalize():
        return _Shown(value.strftime("%Y-%m-%d"))
    if type(value).__name__ == "datetime64":
        return _Shown(str(value).replace("T00:00:00", "").removesuffix(".000000000"))
    return _Shown(str(value))
