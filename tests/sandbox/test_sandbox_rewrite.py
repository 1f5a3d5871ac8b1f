"""Properties of the rewrite itself."""

from __future__ import annotations

import ast

import pytest
from test_sandbox_semantics import CASES

from nbagent.sandbox.guards.rewrite import RewriteContext, StaticRefusal, rewrite


def _context() -> RewriteContext:
    return RewriteContext(prefix="_nb0.", defined=lambda name: False)  # every global name is looked up by a guard


@pytest.mark.parametrize("name", list(CASES))
def test_every_created_node_has_a_position(name: str) -> None:
    rewritten = rewrite(ast.parse(CASES[name]), _context())
    compile(rewritten.tree, "<test>", "exec", flags=rewritten.flags, dont_inherit=True)  # no location fallback


def test_injected_names_cannot_be_spelled_by_agent_code() -> None:
    tree = rewrite(ast.parse("for i in range(3):\n    x = i * i\ndef f():\n    return g()"), _context()).tree
    injected = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id.startswith("_nb0.")}
    assert injected and not any(name.isidentifier() for name in injected)


def test_module_level_names_are_declared_global_and_the_last_expression_returned() -> None:
    tree = rewrite(ast.parse("a = 1\nfor b in []: pass\nimport math\nc = [d for d in ()]\na + 1"), _context()).tree
    wrapper = tree.body[0]
    assert isinstance(wrapper, ast.FunctionDef)
    assert isinstance(wrapper.body[0], ast.Global) and wrapper.body[0].names == ["a", "b", "c", "math"]
    assert isinstance(wrapper.body[-1], ast.Return)


def test_refusals_carry_the_line_number() -> None:
    with pytest.raises(StaticRefusal) as info:
        rewrite(ast.parse("x = 1\ny = x.__class__.__bases__"), _context())
    assert info.value.lineno == 2 and "__bases__" in info.value.message
