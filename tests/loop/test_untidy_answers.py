"""Answers over untidy data: gaps counted without the blank texts, a label selected in one of its spellings."""

from __future__ import annotations

import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.answers import AnswerContext, Contradiction, answer_problems
from nbagent.loop.aids.coach import Coach
from nbagent.loop.code_step import AnswerRefused
from nbagent.loop.prompting import SMALL

pytestmark = pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")


def orders() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "region": ["North", "north ", " NORTH", "South", "North", "East"],
            "amount": ["$1.00", "", None, "$2.00", "  ", "$3.00"],
        }
    )


def problems(question: str, code: str, answer: object) -> list[str]:
    context = AnswerContext(question, ["orders"], code, {"orders": orders()})
    return answer_problems(answer, context)


def test_isna_without_the_blank_texts_is_doubted():
    found = problems("How many orders have no amount?", 'final_answer(int(orders["amount"].isna().sum()))', 1)
    (said,) = [problem for problem in found if "blank text" in problem]
    assert said.startswith("orders['amount'] also holds 2 blank text values ('')")
    assert said.endswith("write (orders['amount'].isna() | (orders['amount'].str.strip() == ''))")


def test_the_rows_dropna_kept_counted_for_missing_get_the_count_of_the_gaps():
    code = 'kept = orders.dropna(subset=["amount"])\nfinal_answer(len(kept))'
    (said,) = [p for p in problems("How many orders have no amount?", code, 4) if p.startswith("dropna() keeps")]
    assert said.endswith(": (orders['amount'].isna() | (orders['amount'].str.strip() == '')).sum()")


def test_counting_the_blanks_too_is_taken():
    code = 'gap = orders["amount"].isna() | (orders["amount"].str.strip() == "")\nfinal_answer(int(gap.sum()))'
    assert not any("blank text" in problem for problem in problems("How many orders have no amount?", code, 3))


def test_a_label_in_one_spelling_is_doubted_with_the_others_named():
    code = 'final_answer(int((orders["region"] == "North").sum()))'
    found = problems("How many orders came from the North region?", code, 2)
    assert any(
        "orders['region'] also writes 'North' as 'north ', ' NORTH', so the comparison leaves out 2 rows" in problem
        for problem in found
    )


def test_labels_read_as_a_person_reads_them_are_taken():
    code = 'final_answer(int((orders["region"].str.strip().str.lower() == "north").sum()))'
    assert not any("also writes" in p for p in problems("How many orders came from the North region?", code, 4))


def test_the_small_model_is_asked_again_and_the_tidy_count_stands():
    model = ScriptedModel(
        [
            'Thought: count.\n```python\nfinal_answer(int((orders["region"] == "North").sum()))\n```',
            'Thought: tidy.\n```python\nfinal_answer(int((orders["region"].str.strip().str.lower() == "north").sum()))\n```',
        ]
    )
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"orders": orders()},
        executor_type="local",
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=3,
    )
    assert agent.run("How many orders in `orders` came from the North region?") == 4
    first = next(step for step in agent.memory.steps if isinstance(step, ActionStep))
    assert isinstance(first.error, AnswerRefused) and "also writes 'North'" in str(first.error)


# ---------------------------------------------------------------- repeated rows


def repeated_orders() -> pd.DataFrame:
    return pd.DataFrame({"order_id": [1, 2, 2, 3, 3, 3], "amount": [10.0, 20.0, 20.0, 30.0, 30.0, 30.0]})


def repeat_problems(question: str, code: str, answer: object, frame: pd.DataFrame | None = None) -> list[str]:
    namespace = {"orders": repeated_orders() if frame is None else frame}
    return answer_problems(answer, AnswerContext(question, ["orders"], code, namespace))


def test_repeated_rows_counted_again_when_asked_once_are_doubted():
    found = repeat_problems("Total amount, counting each order once?", 'final_answer(orders["amount"].sum())', 140.0)
    assert any("orders has 3 rows that repeat an earlier row exactly" in problem for problem in found)


def test_repeats_of_a_frame_merged_from_the_task_frame_are_said_of_the_merged_frame():
    clients = pd.DataFrame({"order_id": [1, 2, 3], "segment": ["A", "B", "A"]})
    code = "merged = orders.merge(clients, on='order_id')\nfinal_answer(merged.groupby('segment')['amount'].sum())"
    namespace: dict[str, object] = {"orders": repeated_orders(), "clients": clients}
    exec(code.replace("final_answer(", "answer = ("), {}, namespace)
    found = answer_problems(
        namespace["answer"], AnswerContext("Total per segment, each order once?", ["orders"], code, namespace)
    )
    (said,) = [problem for problem in found if "repeat an earlier row" in problem]
    assert said.startswith("merged has 3 rows that repeat an earlier row exactly (made from orders")
    assert "merged = merged.drop_duplicates()" in said
    # two task frames repeat rows: the frame the code counted is named, not the first task frame read
    refunds = pd.DataFrame({"order_id": [1, 1, 2], "refund": [-5.0, -5.0, -6.0]})
    code = "lost = refunds.merge(orders, on='order_id')\nfinal_answer(lost['refund'].sum())"
    namespace = {
        "orders": repeated_orders(),
        "refunds": refunds,
        "lost": refunds.merge(repeated_orders(), on="order_id"),
    }
    context = AnswerContext("Refunded in all, each refund once?", ["orders", "refunds"], code, namespace)
    (said,) = [problem for problem in answer_problems(-16.0, context) if "repeat an earlier row" in problem]
    assert said.startswith("lost has 2 rows") and "lost = lost.drop_duplicates()" in said
    # a frame of some of the task frame's columns repeats rows by chance: its repeats are not said to be orders'
    code = "some = orders[['amount']]\nfinal_answer(some['amount'].sum())"
    namespace = {"orders": repeated_orders(), "some": repeated_orders()[["amount"]]}
    found = answer_problems(140.0, AnswerContext("Total amount, each order once?", ["orders"], code, namespace))
    assert any(problem.startswith("orders has 3 rows that repeat") for problem in found)


@pytest.mark.parametrize(
    ("question", "code"),
    [
        ("Total amount, counting each order once?", 'final_answer(orders.drop_duplicates()["amount"].sum())'),
        ("How many distinct orders?", 'final_answer(orders["order_id"].nunique())'),
        ("What is the total amount?", 'final_answer(orders["amount"].sum())'),  # nothing asks for once
    ],
)
def test_dropped_repeats_or_a_question_without_once_pass(question, code):
    assert not any("repeat an earlier row" in problem for problem in repeat_problems(question, code, 60.0))


def test_a_frame_without_repeats_passes():
    tidy = pd.DataFrame({"order_id": [1, 2], "amount": [1.0, 2.0]})
    found = repeat_problems("Total, each order once?", 'final_answer(orders["amount"].sum())', 3.0, tidy)
    assert not any("repeat an earlier row" in problem for problem in found)


def in_part_problems(code: str, answer: object) -> list[str]:
    """The checks after `code` ran: its intermediate frames are in the namespace, as in a run."""
    namespace: dict[str, object] = {"orders": repeated_orders()}
    exec(code.replace("final_answer(", "answer = ("), {}, namespace)
    question = "What is the average amount of the orders over 15, counting each order once?"
    return answer_problems(answer, AnswerContext(question, ["orders"], code, namespace))


def test_a_total_over_repeats_divided_by_a_count_without_them_is_doubted():
    """The messy run's average: the sum over every row, over the number of rows without repeats."""
    code = "big = orders[orders['amount'] > 15]\nfinal_answer(big['amount'].sum() / len(big.drop_duplicates()))"
    found = in_part_problems(code, 55.0)
    assert any("big['amount'].sum() counts the 3 rows of big that repeat an earlier row" in f for f in found), found


@pytest.mark.parametrize(
    "code",
    [
        "big = orders.drop_duplicates()\nbig = big[big['amount'] > 15]\nfinal_answer(big['amount'].sum() / len(big))",
        "once = orders.drop_duplicates()\nsub = once.assign(amount=1.0)[['amount']]\nfinal_answer(sub['amount'].sum())",
        "orders = orders.drop_duplicates()\nbig = orders[orders['amount'] > 15]\nfinal_answer(big['amount'].mean())",
    ],
)
def test_totals_over_rows_without_repeats_pass(code):
    """Rows made without repeats (a column of them may repeat values: `sub` has two equal rows) pass."""
    assert not any("repeat an earlier row" in problem for problem in in_part_problems(code, 25.0))


def gappy_orders() -> pd.DataFrame:
    return pd.DataFrame({"amount": [10.0, None, 30.0, 40.0], "region": ["North", "South", None, "East"]})


def dropped_problems(code: str, question: str = "What is the total amount of `orders`?") -> list[str]:
    namespace: dict[str, object] = {"orders": gappy_orders()}
    exec(code.replace("final_answer(", "answer = ("), {}, namespace)
    found = answer_problems(namespace["answer"], AnswerContext(question, ["orders"], code, namespace))
    return [problem for problem in found if "drops every row with a gap" in problem]


@pytest.mark.parametrize(
    "code",
    [
        "clean = orders.dropna()\nfinal_answer(float(clean['amount'].sum()))",
        "orders.dropna(inplace=True)\nfinal_answer(float(orders['amount'].sum()))",
    ],
)
def test_a_total_after_dropping_every_row_with_a_gap_is_doubted(code):
    """The messy run's net revenue dropped the orders with no region or date before totalling the amounts."""
    found = dropped_problems(code)
    assert len(found) == 1 and "also rows whose 'amount' is there" in found[0]
    assert "dropna(subset=['amount'])" in found[0]


def test_rows_dropped_in_place_from_the_frame_as_given_are_proved_lost():
    """An in-place dropna of the task's frame loses its rows for the rest of the run: no later total can be right."""
    code = "orders.dropna(inplace=True)\nfinal_answer(float(orders['amount'].sum()))"
    namespace: dict[str, object] = {"orders": gappy_orders()}
    exec(code.replace("final_answer(", "answer = ("), {}, namespace)
    question = "What is the total amount of `orders`?"
    given = {"orders": gappy_orders()}
    (proved,) = [
        p
        for p in answer_problems(40.0, AnswerContext(question, ["orders"], code, namespace, given))
        if "drops every row" in p
    ]
    assert Coach.proves_wrong(proved)
    (doubted,) = dropped_problems("clean = orders.dropna()\nfinal_answer(float(clean['amount'].sum()))")
    assert not Coach.proves_wrong(doubted)  # the task's frame keeps its rows: a doubt the model may answer
    tidy = {"orders": gappy_orders().assign(region=["North", "South", "West", "East"])}  # no value lost by the drop
    context = AnswerContext(question, ["orders"], code, namespace, tidy)
    assert not any(Coach.proves_wrong(p) for p in answer_problems(40.0, context))


@pytest.mark.parametrize(
    ("code", "question"),
    [
        ("clean = orders.dropna(subset=['amount'])\nfinal_answer(float(clean['amount'].sum()))", None),
        ("final_answer(float(orders['amount'].sum()))", None),
        ("clean = orders.dropna()\nfinal_answer(float(clean['amount'].sum()))", "Total amount of complete records?"),
        ("clean = orders[['amount']].dropna()\nfinal_answer(float(clean['amount'].sum()))", None),  # one column
    ],
)
def test_a_total_that_keeps_the_rows_with_an_amount_passes(code, question):
    assert dropped_problems(code, question or "What is the total amount of `orders`?") == []


# ---------------------------------------------------------------- one label, several spellings, counted apart


def test_groups_that_are_one_label_written_several_ways_are_doubted():
    answer = {"North": 2.0, "north ": 1.0, "South": 2.0}
    found = problems("Amount per region?", 'final_answer(orders.groupby("region")["amount"].count().to_dict())', answer)
    assert any(
        "the answer's groups 'North', 'north ' are one label written several ways: group by the labels as a person reads them, orders['region'].str.strip().str.title(),"
        in p
        for p in found
    )


@pytest.mark.parametrize(
    ("grouped", "written"),
    [
        ('orders.groupby("region")', "orders.groupby(orders['region'].str.strip().str.title())"),
        (
            'orders.groupby(["region"], dropna=False)',
            "orders.groupby(orders['region'].str.strip().str.title(), dropna=False)",
        ),
        ('orders.groupby(orders["region"])', "orders.groupby(orders['region'].str.strip().str.title())"),
    ],
)
def test_the_grouping_to_write_is_the_codes_own_by_the_labels_as_a_person_reads_them(grouped, written):
    """The messy run grouped by the column as before for four steps, told only the expression to group by."""
    answer = {"North": 2.0, "north ": 1.0, "South": 2.0}
    found = problems("Amount per region?", f'final_answer({grouped}["amount"].count().to_dict())', answer)
    assert any(f": write {written} where the code has " in p for p in found), found


def test_a_label_counted_in_one_spelling_is_doubted():
    code = 'counts = orders["region"].value_counts()\nfinal_answer((counts.idxmax(), int(counts.max())))'
    found = problems("Which region has the most orders, and how many?", code, ("North", 2))
    assert any("orders['region'] also writes 'North' as 'north ', ' NORTH'" in p for p in found)


def test_labels_read_as_a_person_reads_them_pass_the_spelling_check():
    code = 'counts = orders["region"].str.strip().str.title().value_counts()\nfinal_answer((counts.idxmax(), 4))'
    found = problems("Which region has the most orders, and how many?", code, ("North", 4))
    assert not any("written several ways" in p or "also writes" in p for p in found)


def test_labels_stripped_but_left_in_several_cases_are_still_doubted():
    code = 'counts = orders["region"].str.strip().value_counts()\nfinal_answer((counts.idxmax(), 2))'
    found = problems("Which region has the most orders, and how many?", code, ("North", 2))
    assert any("orders['region'].str.strip().str.title()" in p for p in found)


# ---------------------------------------------------------------- a year the question names


def signups() -> pd.DataFrame:
    return pd.DataFrame({"signup": ["2023-09-03", "08/08/2022", "02/24/2023", "", "2024-01-05"]})


def year_problems(question: str, code: str, frame: pd.DataFrame) -> list[str]:
    return answer_problems(4, AnswerContext(question, ["clients"], code, {"clients": frame}))


def test_a_year_the_code_never_selects_is_doubted_when_the_data_holds_others():
    code = "d = pd.to_datetime(clients['signup'], format='mixed', errors='coerce')\nfinal_answer(int(d.notna().sum()))"
    found = year_problems("How many clients signed up in 2023?", code, signups())
    (said,) = [problem for problem in found if "2023" in problem]
    assert said == (
        "the question asks about 2023, but the code never selects it (the data holds other years): keep only its rows "
        "first, where pd.to_datetime(clients['signup'], format='mixed', errors='coerce').dt.year == 2023"
    )
    assert isinstance(said, Contradiction)  # the code writes no year at all: no year can have been picked
    other = code.replace("final_answer(", "d = d[d.dt.year > 2020]\nfinal_answer(")
    (doubt,) = [
        problem for problem in year_problems("How many signed up in 2023?", other, signups()) if "2023" in problem
    ]
    assert not isinstance(doubt, Contradiction)  # it picks years by a number of its own: a doubt


def test_a_year_the_code_selects_or_the_only_year_of_the_data_passes():
    selects = "d = pd.to_datetime(clients['signup'], format='mixed')\nfinal_answer(int((d.dt.year == 2023).sum()))"
    assert not any("2023" in p for p in year_problems("How many signed up in 2023?", selects, signups()))
    only_2023 = pd.DataFrame({"signup": pd.to_datetime(["2023-01-02", "2023-05-06"])})
    code = "final_answer(len(clients))"
    assert not any("2023" in p for p in year_problems("How many signed up in 2023?", code, only_2023))


# ---------------------------------------------------------------- numbers still written as text


def money_orders() -> pd.DataFrame:
    frame = pd.DataFrame(
        {"region": ["North", "South", "North", "East"], "amount": ["$98.10", "$1,234.00", None, "$5.00"]}
    )
    return frame.astype({"amount": object})  # as messy notebooks hold it: text and gaps in one object column


@pytest.mark.parametrize(
    ("code", "then"),
    [
        ("final_answer(orders.groupby('region').amount.sum().idxmax())", "amount.groupby(orders['region']).sum()"),
        ("final_answer(orders['amount'].max())", "amount.max()"),
        (
            "final_answer(orders[orders['region'] == 'North']['amount'].sum())",
            "amount[orders['region'] == 'North'].sum()",
        ),
        (
            "final_answer(orders.groupby(orders['region'].str.lower())['amount'].sum())",
            "amount.groupby(orders['region'].str.lower()).sum()",
        ),
    ],
)
def test_a_reduction_over_numbers_written_as_text_is_doubted_with_the_lines_to_write(code, then):
    context = AnswerContext("Which region sold most in `orders`?", ["orders"], code, {"orders": money_orders()})
    (said,) = [problem for problem in answer_problems("North", context) if "written as text" in problem]
    assert said.startswith("orders['amount'] still holds numbers written as text")
    assert "amount = pd.to_numeric(orders['amount'].str.replace(r'[$,]', '', regex=True), errors='coerce')" in said
    assert said.endswith(f"then use it: {then}")


def test_a_reduction_after_the_column_was_converted_passes():
    frame = money_orders()
    frame["amount"] = pd.to_numeric(frame["amount"].str.replace(r"[$,]", "", regex=True), errors="coerce")
    code = "final_answer(orders.groupby('region').amount.sum().idxmax())"
    said = answer_problems(
        "South", AnswerContext("Which region sold most in `orders`?", ["orders"], code, {"orders": frame})
    )
    assert not any("written as text" in problem for problem in said)


@pytest.mark.parametrize(
    "lookup",
    [
        "orders['region'].value_counts()['North']",
        "orders['region'].value_counts().loc['North']",
        "orders.region.value_counts().get('North')",
    ],
)
def test_a_count_looked_up_by_one_spelling_is_doubted(lookup):
    found = problems("How many orders in `orders` came from the North region?", f"final_answer(int({lookup}))", 2)
    assert any("orders['region'] also writes 'North' as" in problem for problem in found), found


def test_counting_the_rows_dropna_keeps_for_a_missing_question_is_doubted():
    question = "How many orders in `orders` have no amount recorded? Count each order once."
    kept = "kept = orders.dropna(subset=['amount']).drop_duplicates()\nfinal_answer(kept.shape[0])"
    assert any("dropna() keeps the rows that have a value" in p for p in problems(question, kept, 4))
    gaps = "gone = len(orders) - len(orders.dropna(subset=['amount']))\nfinal_answer(gone)"
    assert not any("dropna() keeps" in p for p in problems(question, gaps, 2))
    assert not any("dropna() keeps" in p for p in problems("How many orders in `orders` have an amount?", kept, 4))


def test_what_a_failing_step_ran_before_its_error_counts_as_code_the_answer_comes_from():
    """The messy run: `once = orders.drop_duplicates()` ran, the next line failed, and the right answer a later step
    made from `once` was doubted for never reading `orders`."""
    first = "once = orders.drop_duplicates()\ntotal = once['price'].sum()"
    model = ScriptedModel(
        [
            f"Thought: once.\n```python\n{first}\n```",
            "Thought: total.\n```python\nfinal_answer(float(once['amount'].sum()))\n```",
        ]
    )
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"orders": repeated_orders()},
        verbosity_level=-1,
        show_widget=False,
        max_steps=2,
    )
    task = "What is the total amount of all orders? Count each order once.\n- `orders`: pandas DataFrame"
    assert agent.run(task) == 60.0
    steps = agent.memory.action_steps()
    assert str(steps[0].error).startswith("Error on line 2 of the code")
    assert steps[1].error is None


@pytest.mark.parametrize(
    "code",
    [
        "gaps = orders['amount'].isna() | (orders['amount'].str.strip() == '')\nn = gaps.sum()\n"
        "total = orders.shape[0]\nfinal_answer(int(total - n))",
        "have = len(orders) - orders['amount'].isna().sum()\nfinal_answer(have)",
    ],
)
def test_the_gaps_taken_from_all_the_rows_for_a_missing_question_are_proved_wrong(code):
    question = "How many orders in `orders` have no amount recorded?"
    (said,) = [p for p in problems(question, code, 3) if "takes the gaps from all the rows" in p]
    assert Coach.proves_wrong(said) and "that is " in said


@pytest.mark.parametrize(
    "code",
    [
        "final_answer(len(orders) - orders['amount'].notna().sum())",
        "final_answer(len(orders) - len(orders.dropna(subset=['amount'])))",
        "n = orders['amount'].isna().sum()\nfinal_answer(int(n))",
    ],
)
def test_rows_less_the_filled_ones_or_the_gaps_themselves_pass(code):
    found = problems("How many orders in `orders` have no amount recorded?", code, 3)
    assert not any("takes the gaps" in p for p in found)
    assert not any("takes the gaps" in p for p in problems("How many orders in `orders` have an amount?", code, 3))


@pytest.mark.parametrize("blank", ["", "  ", "nan", None])
def test_a_group_of_the_rows_without_a_label_is_doubted(blank):
    answer = {blank: 3.0, "North": 1.0, "South": 2.0}
    (said,) = [
        p for p in problems("What is the total amount of each region?", "final_answer(d)", answer) if "no label" in p
    ]
    assert (
        said.startswith(f"the answer's group {blank!r} holds the rows with no label") and "replace('', np.nan)" in said
    )


@pytest.mark.parametrize("answer", [{"North": 1.0, "South": 2.0}, {"": 1.0}, {0: 1.0, 1: 2.0}, 5])
def test_groups_that_are_all_labels_pass_the_blank_group_check(answer):
    assert not any("no label" in p for p in problems("What is the total amount of each region?", "x = 1", answer))


@pytest.mark.parametrize(
    "code",
    [
        "kept = orders.drop_duplicates().dropna(subset=['amount'])\nfinal_answer(kept['amount'].isna().sum())",
        "final_answer(orders.dropna()['amount'].isnull().sum())",
    ],
)
def test_gaps_counted_in_rows_dropna_kept_are_proved_wrong(code):
    """The messy run's answer 0 to "how many orders have no amount recorded?", which stood."""
    said = [p for p in problems("How many orders have no amount recorded?", code, 0) if "kept for having none" in p]
    assert len(said) == 1 and isinstance(said[0], Contradiction)


def test_gaps_counted_before_a_dropna_are_not_doubted_for_it():
    code = "gaps = orders['amount'].isna().sum()\nkept = orders.dropna()\nfinal_answer(gaps)"
    assert not [p for p in problems("How many orders have no amount recorded?", code, 2) if "kept for having" in p]
