"""A chart checked against the question: does it draw as many marks as the question's groups?

Users saw "Plot the monthly revenue" drawn as 249 bars, one per day. The code step records, for each figure a
step drew, the marks of its largest series (bars, points of a line or of a scatter; nbagent/media/figures.py).
When the question asks for a chart and for a granularity — monthly, weekly, quarterly, yearly, daily, or per
<column> ("per region", "by product", "each customer") — the marks are compared with the number of such groups
in the frames the question points at: the distinct months (weeks, …) of their date columns, the distinct values of
the column. A figure with far more marks than groups (more than twice as many, and 3 more at least) draws
the rows, not the groups; the refusal says how many marks there were and how to get the groups (a column that
writes its labels several ways is named with the labels read as a person reads them).
A step passes when one of its figures fits; a figure, when one of its axes fits.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from .data_card import data_frames, holds_text, value_kind
from .doubts import Untidy

__all__ = ["chart_only", "chart_problems", "chart_taken_note", "periods_held", "plotted_name"]

_CHART_ASKED = re.compile(r"\b(?:plot|chart|graph|histogram|visuali[sz]|draw|barplot|lineplot)\w*", re.I)
_UNITS = {  # unit: (the words that ask for it, the pandas period)
    "day": (r"daily|per\s+day|each\s+day|every\s+day|by\s+day|a\s+day|day\s+by\s+day", "D"),
    "week": (r"weekly|per\s+week|each\s+week|every\s+week|by\s+week|a\s+week|week\s+by\s+week", "W"),
    "month": (r"monthly|per\s+month|each\s+month|every\s+month|by\s+month|a\s+month|month\s+by\s+month", "M"),
    "quarter": (r"quarterly|per\s+quarter|each\s+quarter|every\s+quarter|by\s+quarter|a\s+quarter", "Q"),
    "year": (r"yearly|annual(?:ly)?|per\s+year|each\s+year|every\s+year|by\s+year|a\s+year|year\s+by\s+year", "Y"),
}
# "per region" names the x axis; "one line per region" names the series, and says nothing of the marks
_PER = re.compile(
    r"(?<!line\s)(?<!lines\s)(?<!series\s)(?<!color\s)(?<!colour\s)(?<!curve\s)(?<!hue\s)"
    r"\b(?:per|by|each|every|for\s+each|for\s+every)\s+(?P<noun>[A-Za-z]\w*)",
    re.I,
)
# a distribution's bins or a scatter's points are no groups; "per region over time" puts time on the x axis
_NOT_GROUPS = re.compile(r"\b(?:histogram|distribution|scatter|box\s*plot|boxplot|violin|density|kde)\b", re.I)
_OVER_TIME = re.compile(
    r"\b(?:over\s+time|trend|timeline|time\s+series|evolution|across\s+time|over\s+the\s+\w+)\b", re.I
)
# "Plot X" asks for the chart alone; "Plot X and say which month was highest" or "What … ? Plot it" asks for more: a
# question is cut into clauses at sentence ends and "and"/"then", and each must ask for the chart
_CLAUSE_ENDS = re.compile(r"[.;!]\s+|\band\b|\bthen\b", re.I)
_DATE_NAME = re.compile(r"date|time|day|month|period|week|_at$|^at_|year", re.I)
_MOST_LABELS = 500  # the distinct labels of a column an axis's ticks are compared with
_FAR = 2  # marks above this many times the groups (and 3 more at least) draw the rows, not the groups


def chart_taken_note(code: str, question: str, namespace: dict[str, Any], task_names: list[str]) -> str:
    """What a small model reads after a step drew the chart the question asks for and the checks took it: that the
    run ends with final_answer, and with what. The messy run drew the region chart right at its second step, then
    sent an empty reply, the same code again (refused as a repeat), and a chart of every spelling, to the end."""
    if not _CHART_ASKED.search(question):
        return ""
    name = plotted_name(code, namespace, task_names)
    answer = f"final_answer({name})" if name else "final_answer with the values it plots"
    return f"The chart draws what the question asks for. If it is the chart asked for, end the run now: {answer}.\n"


def chart_only(question: str) -> bool:
    """Whether the question asks for a chart and nothing else (the chart is then the whole answer)."""
    clauses = [clause for clause in _CLAUSE_ENDS.split(question) if clause.strip(" .,;!")]
    return "?" not in question and bool(clauses) and all(_CHART_ASKED.search(clause) for clause in clauses)


def plotted_name(code: str, namespace: dict[str, Any], task_names: list[str]) -> str:
    """The last name the code assigned that holds a table, a Series or a dict (what a chart is drawn from)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    names = [
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in task_names
    ]
    held = [name for name in names if name in namespace and _chart_data(namespace[name])]
    return held[-1] if held else ""


def _chart_data(value: Any) -> bool:
    return value_kind(value) in ("Series", "DataFrame") or isinstance(value, dict)


def chart_problems(
    figures: list[dict[str, Any]], question: str, variables: list[str], namespace: dict[str, Any]
) -> list[str]:
    """Why the step's figures do not draw the groups the question asks for ([] when one may, or nothing is asked)."""
    if not figures or not _CHART_ASKED.search(question) or _NOT_GROUPS.search(question):
        return []
    frames = _pointed_frames(question, variables, namespace)
    if not frames:
        return []
    wanted = _wanted_groups(question, frames)
    if not wanted:
        return []
    marks = [(ax.get("marks", 0), ax.get("kind", "")) for figure in figures for ax in _axes(figure)]
    marks = [(count, kind) for count, kind in marks if isinstance(count, int) and count > 0]
    single = _single_marks(marks, wanted) or _labels_for_time(figures, wanted, frames)
    if single:
        return single
    if not marks or any(not _far_above(count, groups) for count, _ in marks for groups, _ in wanted):
        return []
    count, kind = max(marks)
    groups, said = max(wanted, key=lambda found: found[0])
    doubt = Untidy if said.get("untidy") else str  # labels written several ways: cleaning the data answers it
    return [
        doubt(
            f"the chart has {count} {_marks_word(kind, count)}, but the question asks for one per {said['unit']}: "
            f"{said['where']} has {groups} {said['units']}. {said['fix']}"
        )
    ]


def _single_marks(marks: list[tuple[int, str]], wanted: list[tuple[int, dict[str, str]]]) -> list[str]:
    """Every series one mark where the question asks for one per month (week, …) and the data has 3 or more: the
    messy run's monthly chart of one line per region drew each region's total as a line of one point."""
    timed = [(groups, said) for groups, said in wanted if said["unit"] in _UNITS and groups >= 3]
    if not marks or not timed or any(count > 1 for count, _ in marks):
        return []
    groups, said = max(timed, key=lambda found: found[0])
    kind = max(marks)[1]
    return [
        f"every {'line' if kind == 'line' else 'series'} of the chart has 1 {_marks_word(kind, 1)}, but the "
        f"question asks for one per {said['unit']}: {said['where']} has {groups} {said['units']}. {said['fix']}"
    ]


def _labels_for_time(
    figures: list[dict[str, Any]], wanted: list[tuple[int, dict[str, str]]], frames: list[tuple[str, Any]]
) -> list[str]:
    """Every axis's x labels the labels of a text column ('East', 'North', …) where the question asks for one mark
    per month (week, …): the messy run's monthly chart of one line per region drew one line across the regions, and
    was told it drew what was asked."""
    timed = [(groups, said) for groups, said in wanted if said["unit"] in _UNITS and groups >= 3]
    ticks = [ax.get("ticks") or [] for figure in figures for ax in _axes(figure) if ax.get("marks")]
    if not timed or not ticks or any(len(shown) < 2 for shown in ticks):
        return []
    columns = {_column_of_labels(shown, frames) for shown in ticks}
    if None in columns or len(columns) != 1:
        return []
    groups, said = max(timed, key=lambda found: found[0])
    shown = ", ".join(repr(tick) for tick in ticks[0][:2])
    return [
        f"the chart's x axis shows {columns.pop()} ({shown}, …), not time, but the question asks for one value per "
        f"{said['unit']}: {said['where']} has {groups} {said['units']}. {said['fix']}"
    ]


def _column_of_labels(ticks: list[str], frames: list[tuple[str, Any]]) -> str | None:
    """Where the ticks are all labels of one text column (as a person reads them: ' NORTH' is North), or None."""
    read = {str(tick).strip().casefold() for tick in ticks}
    for name, frame in frames:
        for position, column in enumerate(frame.columns):
            values = frame.iloc[:, position]
            if not holds_text(values):
                continue
            if _DATE_NAME.search(str(column)):
                continue
            labels = set(values.dropna().astype(str).str.strip().str.casefold().unique()[:_MOST_LABELS])
            if read <= labels:
                return f"{name}[{str(column)!r}]"
    return None


def _axes(figure: Any) -> list[dict[str, Any]]:
    if not isinstance(figure, dict):
        return []
    axes = [ax for ax in figure.get("axes") or [] if isinstance(ax, dict)]
    return axes or [{"marks": figure.get("marks", 0), "kind": ""}]


def _far_above(marks: int, groups: int) -> bool:
    return marks > _FAR * groups and marks - groups >= 3


def _marks_word(kind: str, count: int) -> str:
    word = {"bar": "bar", "line": "point", "scatter": "point"}.get(kind, "mark")
    return word if count == 1 else word + "s"


def _pointed_frames(question: str, variables: list[str], namespace: dict[str, Any]) -> list[tuple[str, Any]]:
    """The frames the question names (else all the task points at)."""
    frames = [(name, frame) for name, frame in data_frames(namespace) if name in variables]
    named = [(name, frame) for name, frame in frames if re.search(rf"\b{re.escape(name)}\b", question)]
    return named or frames


def _wanted_groups(question: str, frames: list[tuple[str, Any]]) -> list[tuple[int, dict[str, str]]]:
    """(groups, how to say it) for each granularity the question asks for and the data can count."""
    wanted = []
    for unit, (words, period) in _UNITS.items():
        if re.search(rf"\b(?:{words})\b", question, re.I):
            counted = periods_held(frames, period)
            if counted:
                groups, where = counted
                fix = (
                    f"Group the rows by {unit} first (the {unit} of each date, e.g. with .dt.to_period('{period}') "
                    f"of the dates read as dates), add up each group, then plot one value per {unit}"
                )
                wanted.append((groups, {"unit": unit, "units": unit + "s", "where": where, "fix": fix}))
    if _OVER_TIME.search(question):  # the groups named are series along a time axis: their marks are the times
        return wanted
    for found in _PER.finditer(question):
        noun = found.group("noun")
        if any(re.fullmatch(words, f"per {noun}", re.I) for words, _ in _UNITS.values()):
            continue
        counted = _distinct(frames, noun)
        if counted:
            groups, where, column, written = counted
            fix = f"Group the rows by {column} first, add up each group, then plot one value per {column}"
            if written > groups:  # grouped already, by the labels as written: 'North', ' north' are two bars
                fix = (
                    f"{where} writes its {groups} {_plural(column)} {written} ways ('North', ' north ' are one): "
                    f"group by the labels as a person reads them, {where}.str.strip().str.title(), add up each "
                    f"group, then plot one value per {column}"
                )
            said = {"unit": noun.lower(), "units": _plural(column), "where": where, "fix": fix}
            wanted.append((groups, {**said, "untidy": "yes"} if written > groups else said))
    return wanted


def periods_held(frames: list[tuple[str, Any]], period: str) -> tuple[int, str] | None:
    """The most distinct periods in one date column of the frames (text read as dates too), and where."""
    import pandas as pd

    best: tuple[int, str] | None = None
    for name, frame in frames:
        for position, column in enumerate(frame.columns):
            values = frame.iloc[:, position]
            if values.dtype.kind != "M":
                if not (values.dtype.kind in "OUT" or str(values.dtype) in ("string", "str")):
                    continue
                if not _DATE_NAME.search(str(column)):
                    continue
                values = _as_dates(values, pd)
                if values is None:
                    continue
            counted = values.dropna().dt.to_period(period).nunique()
            if counted and (best is None or counted > best[0]):
                best = (int(counted), f"{name}[{str(column)!r}]")
    return best


def _as_dates(values: Any, pd: Any) -> Any:
    distinct = values.dropna().astype(str).unique()
    try:
        parsed = pd.to_datetime(pd.Series(distinct), format="mixed", errors="coerce")
    except (TypeError, ValueError):
        return None
    if not len(parsed) or parsed.notna().mean() < 0.8:
        return None
    return parsed


def _distinct(frames: list[tuple[str, Any]], noun: str) -> tuple[int, str, str, int] | None:
    """(the distinct values as a person reads them: 'north ' is North, where, the column, the distinct values as
    written) of the column the noun names."""
    forms = _forms(noun)
    best: tuple[int, str, str, int] | None = None
    for name, frame in frames:
        for position, column in enumerate(frame.columns):
            key = re.sub(r"[^a-z0-9]", "", str(column).lower())
            if key not in forms and key not in {form + suffix for form in forms for suffix in ("id", "name")}:
                continue
            values = frame.iloc[:, position].dropna()
            written = counted = values.nunique()
            if holds_text(values):
                read = values.astype(str).str.strip().str.casefold()
                counted = read[read != ""].nunique()
                written = values.astype(str)[read != ""].nunique()
            if counted and (best is None or counted > best[0]):
                best = (int(counted), f"{name}[{str(column)!r}]", str(column), int(written))
    return best


def _forms(noun: str) -> set[str]:
    noun = re.sub(r"[^a-z0-9]", "", noun.lower())
    singular = noun[:-3] + "y" if noun.endswith("ies") else noun[:-1] if noun.endswith("s") else noun
    return {noun, singular, noun + "s"}


def _plural(word: str) -> str:
    return word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"
