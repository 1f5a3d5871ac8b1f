"""The task as a person reads it: the "first rows" of a described DataFrame as a small table, not run-together text.

The task the model reads describes each DataFrame it points at (nbagent/loop/variables.py): its columns, its
index and its first rows as pandas prints them, aligned in a monospaced block. Rendered as Markdown, that block
runs together. `task_parts(task)` cuts the task into parts: Markdown, and for each preview either a table
(columns, index, cells) read back from the aligned text, or, when the text cannot be read back surely (columns
on two header lines, a cell with two spaces inside), the aligned text itself, shown preformatted. The widget
(js/task.js) and the static page render the same parts; the task's text is never changed.
"""

from __future__ import annotations

import re
from typing import Any

from nbagent.loop.aids.data_card import split_task

__all__ = ["task_parts", "read_preview"]

_PREVIEW_START = re.compile(r"^  first (\d+) rows?:$")
_PREVIEW_LINE = "    "
_COLUMNS = re.compile(r"^  columns: (.*?)(?:, … (\d+) more)?$")
_COLUMN = re.compile(r"(.+?) \(([^()]*)\)(?:, |$)")  # "unit price (float64), "
_RANGE_INDEX = re.compile(r"^  index: RangeIndex \d+\.\.\d+$")
_TRUNCATED = "…"  # the end of a preview line cut at its width (nbagent/loop/variables.py `_TABLE_LINE`)


def task_parts(task: str) -> list[dict[str, Any]]:
    """`[{"kind": "markdown" | "table" | "text", "text": str | None, "table": dict | None}]`, or [] when the task
    holds no preview (then it shows as Markdown, whole)."""
    question, _ = split_task(task)
    lines = task.split("\n")
    parts: list[dict[str, Any]] = []
    start, index = 0, _line_at(task, len(question))
    while index < len(lines):
        match = _PREVIEW_START.match(lines[index])
        end = index + 1
        while match and end < len(lines) and lines[end].startswith(_PREVIEW_LINE):
            end += 1
        if not match or end == index + 1:
            index += 1
            continue
        parts.append(_markdown("\n".join(lines[start : index + 1])))
        block = [line[len(_PREVIEW_LINE) :] for line in lines[index + 1 : end]]
        table = read_preview(block, int(match.group(1)), lines[max(start, index - 3) : index])
        parts.append(_table(table) if table else _text("\n".join(block)))
        start = index = end
    if not parts:
        return []
    rest = "\n".join(lines[start:])
    return parts + [_markdown(rest)] if rest.strip() else parts


def read_preview(block: list[str], rows: int, described: list[str]) -> dict[str, Any] | None:
    """The table in `block` (pandas' aligned text of `rows` rows), or None when it cannot be read back surely.

    `described` are the lines above it (`columns: …`, `index: …`), which name the columns and the index.
    """
    names, more = _column_names(described)
    if not names or len(block) not in (rows + 1, rows + 2):
        return None
    header, data = block[0], block[-rows:]
    edges, cut = _right_edges(header, names)
    if edges is None or not all(any(_char(line, edge - 1) != " " for line in data) for edge in edges):
        return None  # not right-aligned as pandas prints: not the layout read here
    width = _index_width(data, edges[0], described)
    if width is None:
        return None
    index_name = None
    if len(block) == rows + 2:  # a named index prints its name on a second header line, alone
        index_name = block[1].strip()
        if not index_name or block[1][width:].strip():
            return None
    return {
        "index_name": index_name,
        "columns": names[: len(edges)],
        "index": [line[:width].strip() for line in data],
        "rows": [_cells(line, width, edges) for line in data],
        "more_columns": bool(more or cut),
    }


def _column_names(described: list[str]) -> tuple[list[str], int]:
    """The column names of the `columns:` line, and how many more columns it says were left out."""
    found = next((match for line in described if (match := _COLUMNS.match(line))), None)
    if found is None:
        return [], 0
    listed = found.group(1)
    items = list(_COLUMN.finditer(listed))
    if "".join(item.group(0) for item in items) != listed:
        return [], 0
    return [item.group(1) for item in items], int(found.group(2) or 0)


def _right_edges(header: str, names: list[str]) -> tuple[list[int] | None, bool]:
    """Where each column ends (the header's names, right-aligned as pandas prints them); whether the line was cut."""
    cut = header.endswith(_TRUNCATED)
    edges: list[int] = []
    position = 0
    for name in names:
        found = header.find(name, position)
        if found < 0 or header[position:found].strip():  # something else first: not the header read here
            return (edges or None, True) if cut else (None, False)
        position = found + len(name)
        if header[position : position + 1] not in ("", " "):
            return None, False
        edges.append(position)
    return (edges if not header[position:].strip(" " + _TRUNCATED) else None), cut


def _index_width(data: list[str], first_edge: int, described: list[str]) -> int | None:
    """How wide the index is (its values are left-aligned): its longest number for a RangeIndex, else the first
    gap after which every first cell reads as one value (no two spaces inside)."""
    if any(_RANGE_INDEX.match(line) for line in described):
        width = max(len(line.split(" ", 1)[0]) for line in data)
        return width if width < first_edge else None
    for width in range(1, first_edge):
        if all(_char(line, width) == " " for line in data) and all(
            "  " not in line[width:first_edge].strip() and line[:width].strip() for line in data
        ):
            return width
    return None


def _cells(line: str, width: int, edges: list[int]) -> list[str]:
    starts = [width, *edges[:-1]]
    return [line[start:end].strip() for start, end in zip(starts, edges)]


def _char(line: str, position: int) -> str:
    return line[position] if 0 <= position < len(line) else " "


def _markdown(text: str) -> dict[str, Any]:
    return {"kind": "markdown", "text": text, "table": None}


def _text(text: str) -> dict[str, Any]:
    return {"kind": "text", "text": text, "table": None}


def _table(table: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "table", "text": None, "table": table}


def _line_at(text: str, offset: int) -> int:
    """The number of the line that holds character `offset` of `text`."""
    return text.count("\n", 0, offset)
