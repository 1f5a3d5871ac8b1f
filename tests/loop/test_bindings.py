"""The one reading of "what a name was bound to" that the answer checks share (nbagent/loop/aids/bindings.py)."""

import ast

from nbagent.loop.aids.bindings import assignments, bound_value, last_assignment

CODE = """\
d = orders["amount"]
total = d.sum()
d = d.round(2)
a = b = total
pair, other = 1, 2
best = a
final_answer(best)
"""


def value(node):
    return ast.unparse(node) if node is not None else None


def test_the_last_value_a_name_was_given_and_the_one_before_a_use():
    tree = ast.parse(CODE)
    assert value(last_assignment("d", tree)) == "d.round(2)"
    use = next(n for n in ast.walk(tree.body[2].value) if isinstance(n, ast.Name) and n.id == "d")
    assert value(last_assignment("d", tree, before=use)) == "orders['amount']"  # d = d.round(2) reads the first d
    assert last_assignment("pair", tree) is None  # a tuple's part is not the whole value
    assert last_assignment("orders", tree) is None


def test_chains_are_followed_a_few_hops_and_every_target_of_a_chain_counts():
    tree = ast.parse(CODE)
    assert [value(s.value) for s in assignments("b", tree)] == ["total"]
    assert value(bound_value(ast.Name("best"), tree)) == "d.sum()"
    assert value(bound_value(ast.Name("best"), tree, hops=1)) == "a"
    assert value(bound_value(ast.parse("x + 1").body[0].value, tree)) == "x + 1"
