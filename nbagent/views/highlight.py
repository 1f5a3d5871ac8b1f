"""Python syntax highlighting for the static run page: the same tokens and CSS classes as js/highlight.js."""

from __future__ import annotations

import re
from html import escape

__all__ = ["tokenize_python", "highlight_python"]

KEYWORDS = frozenset(
    "False None True and as assert async await break class continue def del elif else except finally for "
    "from global if import in is lambda nonlocal not or pass raise return try while with yield match case".split()
)
BUILTINS = frozenset(
    "abs all any ascii bin bool bytearray bytes callable chr dict dir divmod enumerate filter float format "
    "frozenset getattr hasattr hash hex id int isinstance issubclass iter len list map max min next object oct "
    "ord pow print range repr reversed round set setattr slice sorted str sum super tuple type zip self "
    "Exception ValueError TypeError KeyError IndexError RuntimeError final_answer".split()
)

# Same alternatives, in the same order, as js/highlight.js.
_TOKEN = re.compile(
    "|".join(
        [
            r"(?P<comment>#[^\n]*)",
            r"(?P<string>(?:[rRbBuUfF]{1,2})?(?:\"\"\"[\s\S]*?(?:\"\"\"|$(?![\s\S]))|'''[\s\S]*?(?:'''|$(?![\s\S]))"
            r"|\"(?:\\.|[^\"\\\n])*(?:\"|$)|'(?:\\.|[^'\\\n])*(?:'|$)))",
            r"(?P<decorator>@[A-Za-z_][\w.]*)",
            r"(?P<number>\b(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\d[\d_]*\.?[\d_]*(?:[eE][+-]?\d+)?j?)"
            r"|\.\d+(?:[eE][+-]?\d+)?j?)",
            r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)",
            r"(?P<space>\s+)",
            r"(?P<other>.)",
        ]
    ),
    re.MULTILINE,
)
_CLASSES = {"comment": "nba-c", "string": "nba-s", "decorator": "nba-d", "number": "nba-n"}


def tokenize_python(code: str) -> list[tuple[str | None, str]]:
    """(css class or None, text) pairs whose texts join back into `code`."""
    tokens: list[tuple[str | None, str]] = []
    previous_name = ""
    for match in _TOKEN.finditer(code):
        group, text = match.lastgroup or "other", match.group(0)
        cls = _CLASSES.get(group)
        if group == "name":
            if previous_name in ("def", "class"):
                cls = "nba-f"
            elif text in KEYWORDS:
                cls = "nba-k"
            elif text in BUILTINS:
                cls = "nba-b"
        if group != "space":
            previous_name = text if group == "name" else ""
        if cls is None and tokens and tokens[-1][0] is None:
            tokens[-1] = (None, tokens[-1][1] + text)
        else:
            tokens.append((cls, text))
    return tokens


def highlight_python(code: str) -> str:
    """Escaped HTML with <span class="nba-…"> around tokens."""
    return "".join(
        escape(text, quote=False) if cls is None else f'<span class="{cls}">{escape(text, quote=False)}</span>'
        for cls, text in tokenize_python(code)
    )
