"""Money given back written as negative amounts, subtracted: the doubt names the column and its sign."""

from __future__ import annotations

import ast

import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.signs import negative_total_subtracted
from nbagent.loop.code_step import AnswerRefused
from nbagent.loop.prompting import SMALL

pytestmark = pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")

QUESTION = "What is our net revenue: the total amount of `orders` minus the money given back in `refunds`?"


def namespace(refund_amounts: list) -> dict:
    return {
        "orders": pd.DataFrame({"amount": [100.0, 200.0]}),
        "refunds": pd.DataFrame({"amount": refund_amounts}),
    }


def doubts(code: str, refunds: list, question: str = QUESTION) -> list[str]:
    return negative_total_subtracted(question, ast.parse(code), namespace(refunds))


@pytest.mark.parametrize(
    "refunds",
    [["-$157.68", "-$1,057.81", None], [-157.68, -57.81], ["-$5.00", "", "$0.00"]],
)
def test_a_negative_total_subtracted_is_doubted(refunds):
    code = "total_orders = orders['amount'].sum()\ntotal_refunds = refunds['amount'].sum()\nnet = total_orders - total_refunds"
    found = doubts(code, refunds)
    assert len(found) == 1 and "refunds['amount'] holds amounts of zero or below" in found[0]
    assert "total_orders - total_refunds counts it the wrong way" in found[0]
    assert found[0].endswith("add it, total_orders + total_refunds")  # one line to write, not a choice of two


def test_the_money_text_is_read_through_a_conversion():
    code = "net = orders['amount'].sum() - pd.to_numeric(refunds['amount'].str.replace('[$,]', '', regex=True)).sum()"
    assert doubts(code, ["-$157.68", "-$57.81"])


@pytest.mark.parametrize(
    ("code", "refunds", "question"),
    [
        ("net = orders['amount'].sum() + refunds['amount'].sum()", [-5.0, -6.0], QUESTION),  # added: right
        ("net = orders['amount'].sum() - refunds['amount'].abs().sum()", [-5.0, -6.0], QUESTION),  # its size
        ("net = orders['amount'].sum() - refunds['amount'].sum()", [5.0, 6.0], QUESTION),  # positive refunds
        ("net = orders['amount'].sum() - refunds['amount'].sum()", [-5.0, 6.0], QUESTION),  # mixed signs
        ("gap = orders['amount'].sum() - refunds['amount'].sum()", [-5.0], "How far apart are the two totals?"),
    ],
)
def test_what_is_not_a_negative_total_taken_away_passes(code, refunds, question):
    assert doubts(code, refunds, question) == []


def test_the_small_model_is_asked_again_and_the_added_negative_total_stands():
    subtracted = "net = orders['amount'].sum() - refunds['amount'].sum()\nfinal_answer(float(net))"
    added = "net = orders['amount'].sum() + refunds['amount'].sum()\nfinal_answer(float(net))"
    model = ScriptedModel([f"Thought: net.\n```python\n{code}\n```" for code in (subtracted, added)])
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace=namespace([-10.0, -20.0]),
        executor_type="local",
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=3,
    )
    assert agent.run(QUESTION) == 270.0
    first = next(step for step in agent.memory.steps if isinstance(step, ActionStep))
    assert isinstance(first.error, AnswerRefused) and "subtracting its total adds it back" in str(first.error)


def test_the_subtracted_negative_total_sent_again_does_not_stand():
    """The messy run sent 342,524.15 (the refunds added) again after the doubt, and a guess said once let it stand:
    the sign is a fact of the data, so the run ends without an answer instead."""
    subtracted = "net = orders['amount'].sum() - refunds['amount'].sum()\nfinal_answer(float(net))"
    model = ScriptedModel([f"Thought: net.\n```python\n{subtracted}\n```"] * 4)
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace=namespace([-10.0, -20.0]),
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=4,
    )
    result = agent.run(QUESTION, return_full_result=True)
    assert result.state == "stuck" and result.output is None


def test_a_subtraction_in_a_branch_that_did_not_give_the_answer_passes():
    """The messy run's right answer was refused for the `a - b` of an else branch that never ran."""
    code = (
        "total_orders = orders['amount'].sum()\ntotal_refunds = refunds['amount'].sum()\n"
        "if total_refunds < 0:\n    final_answer(total_orders + total_refunds)\n"
        "else:\n    final_answer(total_orders - total_refunds)"
    )
    values = {**namespace([-157.68, -57.81]), "total_orders": 300.0, "total_refunds": -215.49}
    assert negative_total_subtracted(QUESTION, ast.parse(code), values, 84.51) == []
    assert negative_total_subtracted(QUESTION, ast.parse(code), values, 515.49)  # the subtraction's answer


def test_the_offer_for_untidy_data_adds_the_negative_total_too(small_agent):
    """The messy run's net revenue: refused for repeated orders and for the refunds subtracted, it was offered its
    code with the repeats dropped and the refunds still subtracted, ran it, and was refused again."""
    frames = {
        "orders": pd.DataFrame({"amount": [100.0, 200.0, 200.0, 50.0]}),
        "refunds": pd.DataFrame({"amount": [-10.0, -20.0]}),
    }
    subtracted = "net = (orders['amount'].sum() - refunds['amount'].sum()).round(2)\nfinal_answer(net)"
    agent = small_agent([subtracted, "final_answer(0)"], frames, max_steps=2)
    question = QUESTION.replace("?", "? Count each order and each refund once.") + "".join(
        f"\n- `{name}`: pandas DataFrame" for name in frames
    )
    assert agent.run(question) == 320.0  # 350 once each, the refunds' -30 added
    first, second = agent.memory.action_steps()
    said = str(first.error)
    assert "orders has 1 row that repeats an earlier row" in said and "subtracting its total adds it back" in said
    assert "net = (orders_clean['amount'].sum() + refunds['amount'].sum()).round(2)" in said
    assert second.token_usage.output_tokens == 0 and second.error is None  # the offer ran in the model's place
