"""A column both frames of a merge have, read from the side the question does not ask about (aids/merged_sides)."""

from __future__ import annotations

import ast

import pandas as pd
import pytest

from nbagent.loop.aids.merged_sides import other_side_read
from nbagent.loop.code_step import AnswerRefused

QUESTION = (
    "How much was refunded in total on orders from the West region? The refunds are in `refunds` and the orders "
    "in `orders`."
)


def frames() -> dict:
    return {
        "orders": pd.DataFrame(
            {"order_id": [1, 2, 3], "region": ["West", "West", "East"], "amount": [100.0, 50.0, 9.0]}
        ),
        "refunds": pd.DataFrame({"order_id": [1, 3], "amount": [-10.0, -4.0]}),
    }


RIGHT_SIDE = (
    "merged = refunds.merge(orders, on='order_id')\n"
    "total = merged[merged['region'] == 'West']['amount_{}'].sum()\nfinal_answer(total)"
)


def test_the_other_frames_column_read_after_a_merge_is_doubted_with_the_column_to_read(small_agent):
    """The messy run's refunds on West orders totalled amount_y, the orders' amounts."""
    agent = small_agent([RIGHT_SIDE.format("y"), RIGHT_SIDE.format("x")], {})
    assert agent.run(QUESTION, additional_args=frames()) == -10.0
    refused = agent.memory.action_steps()[0].error
    assert isinstance(refused, AnswerRefused)
    assert (
        "the question asks about `refunds`, but the code reads merged['amount_y'], which is `orders`'s 'amount' "
        "after the merge (merged = refunds.merge(orders, …)): `refunds`'s is merged['amount_x']"
    ) in str(refused)


@pytest.mark.parametrize(
    "code, question",
    [
        (RIGHT_SIDE.format("x"), QUESTION),  # the asked frame's side
        (RIGHT_SIDE.format("y"), "What was the total of the orders in `orders` that got refunds in `refunds`?"),
        (
            "m = refunds.merge(orders, on='order_id', suffixes=('_r', '_o'))\nfinal_answer(m['amount_o'].sum())",
            QUESTION,
        ),
    ],
)
def test_the_asked_sides_column_is_not_doubted(code, question):
    assert other_side_read(question, ["refunds", "orders"], ast.parse(code), frames()) == []


def test_a_side_named_after_a_frame_of_the_question_counts_as_that_frame():
    code = (
        "refunds_clean = refunds.drop_duplicates()\nm = pd.merge(refunds_clean, orders, on='order_id')\n"
        "final_answer(m['amount_y'].sum())"
    )
    namespace = {**frames(), "refunds_clean": frames()["refunds"]}
    found = other_side_read(QUESTION, ["refunds", "orders"], ast.parse(code), namespace)
    assert len(found) == 1 and "`refunds_clean`'s is m['amount_x']" in found[0]
