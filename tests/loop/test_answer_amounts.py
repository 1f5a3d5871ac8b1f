"""An amount asked, a count given: an answer the code reached by counting rows only is proved wrong."""

from __future__ import annotations

import pandas as pd
import pytest

from nbagent.loop.aids.answers import AnswerContext, Contradiction, answer_problems

NET = "What is our net revenue: the total amount of `orders` minus the money given back in `refunds`?"
COUNTED = (  # the messy run's last step, verbatim but for the frames
    "orders_unique = orders.drop_duplicates()\n"
    "orders_refunds = orders_unique.merge(refunds[['order_id', 'refund_id']].drop_duplicates(), on='order_id')\n"
    "net_revenue = orders_refunds['order_id'].count() - orders_refunds['refund_id'].count()\n"
    "net_revenue = round(net_revenue, 2)\n"
    "final_answer(net_revenue)"
)


def problems(question: str, code: str, answer: object) -> list[str]:
    namespace = {
        "orders": pd.DataFrame({"order_id": [1, 2, 3], "amount": [10.0, 20.0, 30.0]}),
        "refunds": pd.DataFrame({"order_id": [2], "refund_id": ["R1"], "amount": [-5.0]}),
    }
    exec(code.replace("final_answer(", "answer = ("), {}, namespace)
    return answer_problems(answer, AnswerContext(question, ["orders", "refunds"], code, namespace))


def test_a_difference_of_row_counts_for_a_revenue_is_proved_wrong():
    found = [p for p in problems(NET, COUNTED, 0) if "count of rows" in p]
    assert len(found) == 1 and isinstance(found[0], Contradiction)
    assert "asks how much (revenue)" in found[0] and ".count()" in found[0]


@pytest.mark.parametrize(
    "question, code",
    [
        (NET, "net = orders['amount'].sum() + refunds['amount'].sum()\nfinal_answer(round(net, 2))"),
        (NET, "n = len(orders)\nfinal_answer(orders['amount'].sum() / n * n)"),  # a count beside a total
        ("How many orders have an amount above 15 in `orders`?", "final_answer(int((orders['amount'] > 15).sum()))"),
        ("What number of orders had a refund, by amount?", "final_answer(refunds['order_id'].count())"),
        ("What share of the revenue in `orders` came from order 2?", "final_answer(len(refunds) / len(orders))"),
    ],
)
def test_totals_and_questions_that_ask_how_many_are_not_doubted(question, code):
    assert not [p for p in problems(question, code, 1) if "count of rows" in p]


MEAN = "What is the average order amount for Laptops in `orders`?"


def mean_problems(code: str) -> list[str]:
    laptops = pd.DataFrame({"product": ["Laptop"] * 4, "amount": [100.0, None, 300.0, float("nan")]})
    namespace = {"orders": laptops, "laptops": laptops}
    exec(code.replace("final_answer(", "answer = ("), {}, namespace)
    context = AnswerContext(MEAN, ["orders"], code, namespace)
    return [p for p in answer_problems(namespace["answer"], context) if "by a count of rows" in p]


def test_a_hand_made_average_over_a_column_with_gaps_is_doubted_with_the_mean():
    """The messy run's Laptop average: a total that skips the 2 gaps divided by every row (3270.0 for 3415.33)."""
    code = "total = laptops['amount'].sum()\nn = laptops.shape[0]\nfinal_answer(round(total / n, 2))"
    (said,) = mean_problems(code)
    assert "skips the 2 gaps of laptops['amount']" in said and "laptops['amount'].mean()" in said
    assert mean_problems("final_answer(laptops['amount'].sum() / len(laptops))")
    assert not mean_problems("final_answer(laptops['amount'].mean())")
    assert mean_problems("final_answer(laptops['amount'].sum() / laptops['product'].count())")  # every row has one
    assert not mean_problems("final_answer(laptops['amount'].sum() / laptops['amount'].count())")  # counts values
    assert not mean_problems("final_answer(laptops['product'].size / len(laptops))")  # no total of a column


def test_an_average_of_group_sums_with_groups_of_gaps_only_is_doubted_with_min_count():
    """The messy run's Laptop average per order_id: the orders whose amount is missing summed to 0 and were averaged."""
    laptops = pd.DataFrame({"order_id": [1, 2, 3, 4], "amount": [100.0, None, 300.0, 200.0]})
    code = "average = laptops.groupby('order_id')['amount'].sum().mean()\nfinal_answer(average)"
    namespace = {"laptops": laptops}
    exec(code.replace("final_answer(", "answer = ("), {}, namespace)
    said = answer_problems(namespace["answer"], AnswerContext(MEAN, ["laptops"], code, namespace))
    assert said == [
        "laptops.groupby('order_id')['amount'].sum() gives 0 for the 1 order_id groups whose amount is missing, and "
        ".mean() counts those zeros as values: write laptops.groupby('order_id')['amount'].sum(min_count=1).mean(), "
        "which leaves them out"
    ]
    right = "average = laptops.groupby('order_id')['amount'].sum(min_count=1).mean()\nfinal_answer(average)"
    exec(right.replace("final_answer(", "answer = ("), {}, namespace)
    assert answer_problems(namespace["answer"], AnswerContext(MEAN, ["laptops"], right, namespace)) == []


def test_a_label_for_a_question_that_asks_an_amount_is_proved_wrong():
    question = "What was the revenue of `orders` in the second quarter? Round to 2 decimals."
    code = "per = orders.groupby('order_id')['amount'].sum()\nfinal_answer(per.idxmax())"
    found = [p for p in problems(question, code, "West") if "a label" in p]
    assert len(found) == 1 and isinstance(found[0], Contradiction)
    assert found[0] == (
        "the question asks what was the revenue, an amount, but the answer is a label ('West'): answer with the "
        "number itself"
    )


@pytest.mark.parametrize(
    "question, answer",
    [
        ("What was the revenue of `orders`?", "60.00 USD"),  # an amount, written as text
        ("Which region had the most revenue in `orders`?", "West"),  # a thing asked
        ("What is the top sales region in `orders`?", "West"),  # the question does not open with an amount
        ("What was the revenue of `orders`, and which region had most?", "West"),
    ],
)
def test_a_label_is_an_answer_where_no_amount_is_asked(question, answer):
    code = "final_answer(1)"
    assert not [p for p in problems(question, code, answer) if "a label" in p]
