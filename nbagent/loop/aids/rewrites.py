"""The answer's own code with the fixes its doubts name, said as one program.

Told two things wrong at once ("the labels are written several ways; and the rows repeat"), the 1.5B model fixes
one and loses the other: the messy run stripped the labels, was told about the repeats, dropped them, and answered
the number of rows left. Each doubt that knows its fix in the terms of the code carries it as a `Rewrite`; the
refusal then shows the model's own code with all of them applied, so it can keep every fix at once.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["Rewrite", "Doubt", "doubt", "rewritten"]

_MOST_LINES_SHOWN = 10  # a longer program is not written out again


@dataclass(frozen=True)
class Rewrite:
    """A change to the answer's code: expressions replaced (written as `ast.unparse` writes them), a frame read
    under another name, and a line that must run first."""

    replace: tuple[tuple[str, str], ...] = ()
    rename: tuple[str, str] | None = None
    first: str = ""


class Doubt(str):
    """A doubt that knows how the code must change (`rewrite`); a plain `str` everywhere else."""

    rewrite: Rewrite | None = None


def doubt(text: str, rewrite: Rewrite) -> str:
    """`text` carrying `rewrite`, keeping its class (a `Contradiction` stays one)."""
    said = text if type(text) is not str else Doubt(text)
    said.rewrite = rewrite  # type: ignore[attr-defined]
    return said


def rewritten(code: str, doubts: list[str]) -> str:
    """`code` with the rewrites of `doubts` applied, or "" when none applies, the code cannot be read, is long,
    or binds a name a rewrite would read under another."""
    rewrites = [found for d in doubts if (found := getattr(d, "rewrite", None)) is not None]
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    stored = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    renames = dict(r.rename for r in rewrites if r.rename is not None)
    if not rewrites or set(renames) & stored or set(renames.values()) & stored:
        return ""
    replaced = {old: new for r in rewrites for old, new in r.replace}
    tree = _Renamed(renames).visit(_Replaced(replaced).visit(tree))
    lines = [*dict.fromkeys(r.first for r in rewrites if r.first), *ast.unparse(tree).splitlines()]
    changed = "\n".join(lines) != ast.unparse(ast.parse(code))
    return "\n".join(lines) if changed and len(lines) <= _MOST_LINES_SHOWN else ""


class _Replaced(ast.NodeTransformer):
    """Each expression written as a key of `replaced` becomes its value (the outermost match wins)."""

    def __init__(self, replaced: dict[str, str]) -> None:
        self.replaced = replaced

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.expr) and (new := self.replaced.get(ast.unparse(node))) is not None:
            return ast.copy_location(ast.parse(new, mode="eval").body, node)
        return super().visit(node)


class _Renamed(ast.NodeTransformer):
    def __init__(self, renames: dict[str, str]) -> None:
        self.renames = renames

    def visit_Name(self, node: ast.Name) -> ast.Name:
        new = self.renames.get(node.id)
        return ast.copy_location(ast.Name(new, node.ctx), node) if new else node
