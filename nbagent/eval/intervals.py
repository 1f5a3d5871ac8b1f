"""The 95% interval of an agent's mean score, and the round ticks of the axis it is drawn on.

Scores live on a scale: 1 = right, 0 = wrong, anything in between (nbagent.eval.scorers). An interval
that leaves the scale (`0.79 [0.54, 1.05]` for 0/1 answers) claims what cannot be, so:

- **Wilson** when every value is in [0, 1]: for 0/1 scores it is the Wilson score interval of a
  proportion; for per-task means (a task's epochs averaged, a partial-credit scorer) it is the same
  formula applied to their mean, which is conservative there: a variable in [0, 1] with mean p has a
  variance of at most p(1 − p), the variance Wilson assumes. Always inside [0, 1].
- **t, clipped** otherwise (a scorer on another scale): Student's t over the values, clipped at the
  scale's floor (0, or the lowest value given: a scorer's `minimum`); such a scale has no known top.

`Interval.method` says which, and the summary shows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Interval", "WILSON", "T_CLIPPED", "interval95", "round_ticks"]

WILSON = "Wilson"
T_CLIPPED = "t, clipped"
_Z = 1.959964  # the 97.5% point of the normal distribution

_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131)
_T975 += (2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


@dataclass(frozen=True)
class Interval:
    """A mean and its 95% interval (NaN edges when it cannot be given), and the method that gave it."""

    mean: float
    low: float
    high: float
    method: str


def interval95(values: list[float]) -> Interval:
    """The mean of `values` (one per task) and its 95% interval, inside the scores' scale (module docstring)."""
    n = len(values)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, "")
    mean = sum(values) / n
    if all(0.0 <= v <= 1.0 for v in values):
        low, high = _wilson(mean, n)
        return Interval(mean, low, high, WILSON)
    if n == 1:
        return Interval(mean, math.nan, math.nan, T_CLIPPED)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    t = _T975[n - 2] if n - 1 <= len(_T975) else 1.96 + 2.4 / (n - 1)
    half = t * sd / math.sqrt(n)
    floor = min(0.0, *values)  # the scale's floor: 0, or lower where the scorer gave lower (a `minimum`)
    return Interval(mean, max(floor, mean - half), mean + half, T_CLIPPED)


def _wilson(p: float, n: int) -> tuple[float, float]:
    z2 = _Z * _Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z * math.sqrt(max(0.0, p * (1 - p)) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def round_ticks(maximum: float, most: int = 6) -> tuple[float, list[float]]:
    """An axis from 0 that holds `maximum`: its round end and ticks at a round step (1, 2, 2.5 or 5 × 10^k).

    `round_ticks(1.0)` is `(1.0, [0, 0.2, 0.4, 0.6, 0.8, 1.0])`; `round_ticks(1.047)` ends at 1.25, not 1.047.
    """
    if not math.isfinite(maximum) or maximum <= 0:
        maximum = 1.0
    raw = maximum / (most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))
    count = math.ceil(maximum / step - 1e-9)
    ticks = [round(i * step, 10) for i in range(count + 1)]
    return ticks[-1], ticks
