"""What a hint reads: the error, the failing line and the statement that holds it, the code, the data.

An executor error names a line ("Error on line N of the code:"); the hints read the whole statement that
holds it (a call can span lines) and, of an assignment, the right side (its target may be stale).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import Any

from ..data_card import frames_in

__all__ = ["Failure", "failing_line", "failing_statement", "parsed", "segment", "frames_used"]


@dataclass
class Failure:
    """What a hint reads: the error, the failing line (and its whole statement), the code, the data."""

    cause: str
    message: str
    source: str  # the failing line as the error shows it
    statement: str  # the statement that holds it (several lines when a call spans them)
    code: str
    namespace: dict[str, Any]
    task: str
    earlier_code: str


def failing_line(message: str) -> str:
    """The source line an executor error names ("Error on line N of the code:" then the line), or ""."""
    lines = message.splitlines()
    return lines[1] if len(lines) > 2 and lines[0].startswith("Error on line") else ""


def failing_statement(message: str, code: str) -> str:
    """The innermost statement of `code` that holds the line the error names (all its lines), or ""."""
    number = re.match(r"Error on line (\d+)", message)
    tree = parsed(code) if number else None
    if tree is None:
        return ""
    line = int(number.group(1))
    holding = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    if not holding:
        return ""
    innermost = min(holding, key=lambda node: (node.end_lineno or node.lineno) - node.lineno)
    statement = ast.get_source_segment(code, innermost) or ""
    shown = failing_line(message).strip()
    return statement if shown and shown in statement else ""  # the code that ran is the code given


@functools.lru_cache(maxsize=64)
def parsed(text: str) -> ast.Module | None:
    """`text` parsed (a compound statement's header line given an empty body), or None."""
    text = text.strip()
    for attempt in (text, f"{text} pass" if text.endswith(":") else ""):
        try:
            return ast.parse(attempt) if attempt else None
        except SyntaxError:
            continue
    return None


def segment(text: str, node: ast.AST) -> str:
    return ast.get_source_segment(text.strip(), node) or ast.unparse(node)


def _read_part(statement: str) -> str:
    """The part of a statement that reads variables: an assignment's right side (its target may be stale)."""
    tree = parsed(statement)
    body = tree.body if tree else []
    if len(body) == 1 and isinstance(body[0], (ast.Assign, ast.AnnAssign, ast.AugAssign)) and body[0].value:
        return segment(statement, body[0].value)
    return statement


def frames_used(found: Failure) -> list[tuple[str, Any]]:
    return frames_in(_read_part(found.statement), found.namespace) or frames_in(found.code, found.namespace)
