"""Telling signal from noise: the paired difference between two agents, and the samples that vary.

Two agents ran on the same tasks (and epochs), so they are compared pair by pair: for every
task, the mean over the epochs both agents finished of (agent's score − baseline's score). The
difference is the mean of those per-task differences, the unit of the test is the task.

The test is a paired **sign-flip permutation test**: if the two agents were interchangeable, each
task's difference would be as likely to have the other sign, so the observed mean is compared with
the means of every sign pattern (all 2^n patterns up to `EXACT_TASKS` tasks, exact; beyond,
`RANDOM_PATTERNS` random ones with a fixed seed). It makes no normality assumption, holds for 0/1
scores and for a handful of tasks (where a t-test or a bootstrap claims too much: three tasks out
of three is p = 0.25 here, "certain" for a bootstrap), and its p-value is exact. The 95% interval
is the set of shifts the same test does not reject (its inversion), so "significant" and "the
interval leaves out 0" always agree. With fewer than `min_tasks()` (6) tasks no difference can be
significant at 95%, and the interval is the whole possible range. The inversion assumes the
differences shift as a whole, which bounded scores cannot quite do: where many tasks tie, the interval
reaches further from them than the data allow (one win in six tasks: +0.17 [+0.00, +1.00]); it errs wide,
never narrow.

A sample is **nondeterministic** when its (agent, task) answered or scored differently in two
epochs. With one epoch that cannot be seen: a difference of a task or two may be sampling noise,
which is what `epoch_note` says.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nbagent.eval.scorers import answer_key

__all__ = [
    "ALPHA",
    "SUGGESTED_EPOCHS",
    "Paired",
    "comparison_rows",
    "display_cells",
    "epoch_note",
    "epochs_run",
    "format_difference",
    "label",
    "min_tasks",
    "nondeterministic",
    "paired_test",
    "verdict",
]

ALPHA = 0.05  # a 95% interval, significant at p <= 0.05
SUGGESTED_EPOCHS = 3  # the fewest runs of a task where a varying answer shows as a majority and a minority
EXACT_TASKS = 14  # up to 2^14 = 16,384 sign patterns, enumerated
RANDOM_PATTERNS = 20_000  # beyond, this many random patterns (seeded): p within about ±0.003 at 0.05
_CHUNK = 1024  # random patterns per block (bounds memory for thousands of tasks)

Key2 = tuple[str, str]  # (agent, task id)


# ---------------------------------------------------------------------------------------------- the test


@dataclass(frozen=True)
class Paired:
    """The paired test of per-task differences: their mean, its 95% interval, the p-value of "no difference"."""

    n: int
    mean: float
    low: float
    high: float
    p_value: float

    @property
    def significant(self) -> bool:
        return self.n > 0 and self.p_value <= ALPHA


def min_tasks(alpha: float = ALPHA) -> int:
    """The fewest tasks with which the sign-flip test can be significant: its smallest p-value is 2 / 2^n."""
    return math.ceil(math.log2(2 / alpha))


def paired_test(differences: Iterable[float], bound: float = 1.0, alpha: float = ALPHA) -> Paired:
    """The sign-flip test of `differences` (one per task) and its inverted (1 − alpha) interval.

    `bound` is the largest possible |difference| (1 for scores in [0, 1]): the interval is clipped
    to it, and is all of it when the tasks are too few to reject anything.
    """
    import numpy as np

    d = np.asarray(list(differences), dtype=float)
    n = len(d)
    if n == 0:
        return Paired(0, math.nan, math.nan, math.nan, math.nan)
    flipped, signs_sum = _patterns(d)
    total = float(d.sum())
    tolerance = 1e-9 * max(1.0, float(np.abs(d).sum()))

    def p_value(shift: float) -> float:
        observed = abs(total - shift * n)
        return float(np.mean(np.abs(flipped - shift * signs_sum) >= observed - tolerance))

    mean = total / n
    low = _edge(p_value, mean, -bound, alpha)
    high = _edge(p_value, mean, bound, alpha)
    return Paired(n, mean, _tidy(low), _tidy(high), p_value(0.0))


def _tidy(edge: float) -> float:
    """An edge found by bisection, without its last bits of noise (no "-0.00" for an edge at 0)."""
    return round(edge, 6) + 0.0


def _patterns(d: Any) -> tuple[Any, Any]:
    """For each sign pattern s: (sum of s_i d_i, sum of s_i); the identity pattern is among them."""
    import numpy as np

    n = len(d)
    if n <= EXACT_TASKS:
        bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
        signs = (1 - 2 * bits).astype(np.int8)
        return signs @ d, signs.sum(axis=1).astype(float)
    rng = np.random.default_rng(0)
    flipped, sums = [np.array([d.sum()])], [np.array([float(n)])]
    for start in range(0, RANDOM_PATTERNS - 1, _CHUNK):
        rows = min(_CHUNK, RANDOM_PATTERNS - 1 - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(rows, n), dtype=np.int8)
        flipped.append(signs @ d)
        sums.append(signs.sum(axis=1).astype(float))
    return np.concatenate(flipped), np.concatenate(sums)


def _edge(p_value: Any, inside: float, outside: float, alpha: float) -> float:
    """The edge of the acceptance interval between `inside` (accepted) and `outside`, by bisection.

    For a shift moving away from the mean, each pattern's |sum| grows slower than the observed one,
    so the p-value only falls: the accepted shifts form one interval.
    """
    if p_value(outside) > alpha:
        return outside
    for _ in range(60):
        middle = (inside + outside) / 2
        if p_value(middle) > alpha:
            inside = middle
        else:
            outside = middle
    return inside


# ---------------------------------------------------------------------------------------------- samples


def _finished(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("state") != "cancelled"]


def _signature(record: dict[str, Any]) -> str:
    """What must agree between epochs of a sample: its answer as its scorers compared it, and its scores.

    `'21'` and `21` are one answer to `exact_match` (both read as the number 21): each scorer recorded the key of
    what it compared (`answer_keys`, nbagent.eval.scorers.answer_key); a record without keys (an older log, a run
    without an answer) is compared by the key of its answer."""
    scores = {
        k: (None if v is None or (isinstance(v, float) and math.isnan(v)) else v)
        for k, v in (record.get("scores") or {}).items()
    }
    keys = record.get("answer_keys") or {"": answer_key(record.get("answer"))}
    return json.dumps([keys, scores], sort_keys=True, default=str)


def nondeterministic(records: Iterable[dict[str, Any]]) -> dict[Key2, bool | None]:
    """For each (agent, task id): True when its finished epochs answered or scored differently, False when
    they agree, None with fewer than two finished epochs (it cannot be told)."""
    seen: dict[Key2, list[str]] = {}
    for record in _finished(records):
        seen.setdefault((record["agent"], str(record["id"])), []).append(_signature(record))
    return {key: (len(set(sigs)) > 1 if len(sigs) > 1 else None) for key, sigs in seen.items()}


def epochs_run(records: Iterable[dict[str, Any]]) -> int:
    """The most epochs any (agent, task) finished (0 without finished samples)."""
    counts: dict[Key2, int] = {}
    for record in _finished(records):
        key = (record["agent"], str(record["id"]))
        counts[key] = counts.get(key, 0) + 1
    return max(counts.values(), default=0)


def epoch_note(epochs: int, agents: int) -> str:
    """What one epoch cannot tell, for an evaluation of several agents ("" when it does not apply)."""
    if agents < 2 or epochs != 1:
        return ""
    return (
        "One epoch: every task ran once per agent, so an answer that changes from run to run cannot be seen, "
        "and a difference between agents cannot be told from sampling noise. "
        f"Run with epochs={SUGGESTED_EPOCHS} or more to see which answers vary and to pair the runs."
    )


# ---------------------------------------------------------------------------------------------- comparisons

COLUMNS = [
    "agent",
    "baseline",
    "scorer",
    "tasks",
    "samples",
    "agent_mean",
    "baseline_mean",
    "difference",
    "low",
    "high",
    "p_value",
    "significant",
    "verdict",
]


def comparison_rows(records: Iterable[dict[str, Any]], agents: list[str], scorers: list[str]) -> list[dict[str, Any]]:
    """One row per pair of agents (each agent against every earlier one, its baseline) and scorer."""
    scored: dict[tuple[str, str], dict[tuple[str, int], float]] = {}
    for record in _finished(records):
        for name in scorers:
            value = (record.get("scores") or {}).get(name)
            if value is not None and not math.isnan(value):
                scored.setdefault((record["agent"], name), {})[(str(record["id"]), int(record["epoch"]))] = float(value)
    rows = []
    for i, baseline in enumerate(agents):
        for agent in agents[i + 1 :]:
            for name in scorers:
                rows.append(
                    _compare(agent, baseline, name, scored.get((agent, name), {}), scored.get((baseline, name), {}))
                )
    return rows


def _compare(agent: str, baseline: str, scorer: str, mine: dict, theirs: dict) -> dict[str, Any]:
    pairs = sorted(set(mine) & set(theirs))
    by_task: dict[str, list[tuple[float, float]]] = {}
    for key in pairs:
        by_task.setdefault(key[0], []).append((mine[key], theirs[key]))
    means = [(sum(a for a, _ in v) / len(v), sum(b for _, b in v) / len(v)) for v in by_task.values()]
    values = [x for v in by_task.values() for pair in v for x in pair]
    bound = max(1.0, max(values, default=0.0)) - min(0.0, min(values, default=0.0))
    test = paired_test([a - b for a, b in means], bound=bound)
    row = {
        "agent": agent,
        "baseline": baseline,
        "scorer": scorer,
        "tasks": test.n,
        "samples": len(pairs),
        "agent_mean": sum(a for a, _ in means) / len(means) if means else math.nan,
        "baseline_mean": sum(b for _, b in means) / len(means) if means else math.nan,
        "difference": test.mean,
        "low": test.low,
        "high": test.high,
        "p_value": test.p_value,
        "significant": test.significant,
    }
    row["verdict"] = verdict(row)
    return row


def label(row: dict[str, Any]) -> str:
    """The conclusion of a comparison row, in a few words."""
    n, needed = row["tasks"], min_tasks()
    if n == 0:
        return "no task scored for both"
    if n < needed:
        return f"cannot tell: {n} task{'s' if n != 1 else ''} (a difference needs {needed} or more)"
    if row["significant"]:
        return f"{row['agent'] if row['difference'] > 0 else row['baseline']} is better"
    return "not significant"


def verdict(row: dict[str, Any]) -> str:
    """A comparison row in words: its conclusion, then the difference, its interval and p-value."""
    if row["tasks"] < min_tasks():
        return label(row)
    return f"{label(row)}: {format_difference(row)}"


def display_cells(row: dict[str, Any]) -> dict[str, Any]:
    """A comparison row as the texts the tables show (the live one, the results' and the saved one)."""
    n = row["tasks"]
    if n >= min_tasks():
        difference = format_difference(row)
    else:
        difference = f"{row['difference']:+.2f}" if n else "–"
    return {
        "pair": f"{row['agent']} − {row['baseline']}",
        "scorer": row["scorer"],
        "tasks": n,
        "difference": difference,
        "conclusion": label(row),
        "significant": bool(row["significant"]),
    }


def format_difference(row: dict[str, Any]) -> str:
    """`-0.10 [-0.33, +0.00], p = 1.00`."""
    p = row["p_value"]
    return (
        f"{row['difference']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}], p = {p:.3f}"
        if p < 0.01
        else f"{row['difference']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}], p = {p:.2f}"
    )
