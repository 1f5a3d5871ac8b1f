"""A matplotlib figure in a few numbers, for checks of a chart against its question: how many marks it drew.

`figure_summary(figure)` reads a figure where it was drawn (the worker, or this process for the local executor):
for each axes, the marks of its largest series — bars of a bar container, points of a line, points of a scatter —
and up to 5 x tick labels; the figure's `marks` is the largest of its axes'. The summary is plain data
(`{"marks": 249, "axes": [{"marks": 249, "kind": "bar", "ticks": ["2024-01-01", …]}]}`), so it crosses the
sandbox's wire as it is; `checked_figures(raw)` is the host's reading of what a hostile worker sent: bounded ints,
a few short strings, anything of another shape dropped.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_FIGURES", "checked_figures", "figure_summary"]

MAX_FIGURES = 20  # as many as the images a call sends back
MAX_AXES = 8
MAX_TICKS = 5
MAX_TICK_CHARS = 40
MAX_MARKS = 10_000_000  # more is clipped: it is "far too many" to every check
KINDS = ("bar", "line", "scatter", "")


def figure_summary(figure: Any) -> dict[str, Any]:
    """The figure's marks and, per axes, the marks of its largest series, their kind and its first x tick labels.

    Read after the figure was drawn (saved), so that the tick labels are laid out."""
    axes = []
    for ax in list(getattr(figure, "axes", []))[:MAX_AXES]:
        try:
            axes.append(_axes_summary(ax))
        except Exception:  # an artist of a library's own making: no count rather than no figure
            axes.append({"marks": 0, "kind": "", "ticks": []})
    return {"marks": max((ax["marks"] for ax in axes), default=0), "axes": axes}


def _axes_summary(ax: Any) -> dict[str, Any]:
    series: list[tuple[int, str]] = [(0, "")]
    for container in getattr(ax, "containers", []):
        if type(container).__name__ == "BarContainer":
            series.append((len(container.patches), "bar"))
    for line in ax.get_lines():
        series.append((_length(line.get_xdata()), "line"))
    for collection in getattr(ax, "collections", []):
        if type(collection).__name__ == "PathCollection":
            series.append((_length(collection.get_offsets()), "scatter"))
    marks, kind = max(series, key=lambda found: found[0])
    try:
        ticks = [str(label.get_text())[:MAX_TICK_CHARS] for label in ax.get_xticklabels()]
    except Exception:
        ticks = []
    return {"marks": min(marks, MAX_MARKS), "kind": kind, "ticks": [tick for tick in ticks if tick][:MAX_TICKS]}


def _length(values: Any) -> int:
    try:
        return len(values)
    except TypeError:  # a scalar
        return 1


def checked_figures(raw: Any) -> list[dict[str, Any]]:
    """The summaries in `raw` that have the shape `figure_summary` makes, bounded; the rest dropped.

    `raw` comes from a process that is not trusted: at most `MAX_FIGURES` figures of `MAX_AXES` axes, ints
    clipped to [0, MAX_MARKS] (a bool or a float is no count), at most `MAX_TICKS` tick labels of
    `MAX_TICK_CHARS` characters; a figure with a part of another type is dropped whole."""
    if not isinstance(raw, list):
        return []
    checked = []
    for figure in raw[:MAX_FIGURES]:
        summary = _checked_figure(figure)
        if summary is not None:
            checked.append(summary)
    return checked


def _checked_figure(figure: Any) -> dict[str, Any] | None:
    if not isinstance(figure, dict) or not _is_count(figure.get("marks")):
        return None
    axes_raw = figure.get("axes", [])
    if not isinstance(axes_raw, list):
        return None
    axes = []
    for ax in axes_raw[:MAX_AXES]:
        checked = _checked_axes(ax)
        if checked is None:
            return None
        axes.append(checked)
    marks = _clipped(figure["marks"])
    if axes:  # the figure's count is its axes' largest: a forged figure cannot say more than its axes
        marks = max(ax["marks"] for ax in axes)
    return {"marks": marks, "axes": axes}


def _checked_axes(ax: Any) -> dict[str, Any] | None:
    if not isinstance(ax, dict) or not _is_count(ax.get("marks")):
        return None
    kind, ticks = ax.get("kind", ""), ax.get("ticks", [])
    if type(kind) is not str or kind not in KINDS or not isinstance(ticks, list):
        return None
    if not all(type(tick) is str for tick in ticks[:MAX_TICKS]):
        return None
    return {
        "marks": _clipped(ax["marks"]),
        "kind": kind,
        "ticks": [tick[:MAX_TICK_CHARS] for tick in ticks[:MAX_TICKS]],
    }


def _is_count(value: Any) -> bool:
    return type(value) is int


def _clipped(value: int) -> int:
    return min(max(value, 0), MAX_MARKS)
