"""Google-style docstring parsing: summary, `Args:` and `Returns:` sections."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_google_docstring"]

_SECTION = re.compile(r"^(\w[\w ]*):\s*$")
_KNOWN_SECTIONS = {
    "args",
    "arguments",
    "parameters",
    "params",
    "returns",
    "return",
    "yields",
    "raises",
    "examples",
    "example",
    "notes",
    "note",
    "attributes",
    "see also",
    "warnings",
    "warning",
    "references",
    "todo",
}
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


@dataclass
class ParsedDocstring:
    description: str = ""
    args: dict[str, str] = field(default_factory=dict)
    returns: str | None = None


def _split_sections(lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    summary: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] = summary
    for line in lines:
        match = _SECTION.match(line.strip()) if line[:1] not in (" ", "\t") else None
        if match and match.group(1).lower() in _KNOWN_SECTIONS:
            current = sections.setdefault(match.group(1).lower(), [])
        else:
            current.append(line)
    return summary, sections


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parse_args(lines: list[str]) -> dict[str, str]:
    """`name: text` or `name (type): text`, continued by more-indented lines."""
    args: dict[str, str] = {}
    base: int | None = None
    current: str | None = None
    for line in lines:
        if not line.strip():
            continue
        if base is None:
            base = _indent(line)
        match = _ARG_LINE.match(line.strip())
        if _indent(line) <= base and match:
            current = match.group(1).lstrip("*")
            args[current] = match.group(3).strip()
        elif current is not None:
            args[current] = f"{args[current]} {line.strip()}".strip()
    return args


def _parse_returns(lines: list[str]) -> str | None:
    text = " ".join(line.strip() for line in lines if line.strip())
    if not text:
        return None
    # "str: the answer" -> "the answer" (the type comes from the annotation)
    match = re.match(r"^[\w\[\], .|]+:\s+(.+)$", text)
    return match.group(1) if match else text


def parse_google_docstring(docstring: str | None) -> ParsedDocstring:
    """Parse an already dedented docstring (use `inspect.getdoc`)."""
    if not docstring:
        return ParsedDocstring()
    summary, sections = _split_sections(docstring.expandtabs().splitlines())
    args_lines = next((sections[k] for k in ("args", "arguments", "parameters", "params") if k in sections), [])
    returns_lines = sections.get("returns", sections.get("return", []))
    return ParsedDocstring(
        description="\n".join(summary).strip(),
        args=_parse_args(args_lines),
        returns=_parse_returns(returns_lines),
    )
