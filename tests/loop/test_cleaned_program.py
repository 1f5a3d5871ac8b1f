"""A refusal about untidy data offers the answer's own code on the task's frames cleaned first (aids/cleaned_program)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.cleaned_program import cleaned_program, offer_in_place, offer_reply, offer_taken, ran_in_place
from nbagent.loop.code_step import AnswerRefused
from nbagent.loop.prompting import SMALL
from nbagent.models.base import TokenUsage

pytestmark = pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")

QUESTION = (
    "What was the total amount of each region in `orders`? Count each order once; give a dict from region to amount."
)
TIDY = {"North": 4.0, "South": 2.0}


def orders() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "order_id": [1, 2, 2, 3, 4, 5],
            "region": ["North", "north ", "north ", " NORTH", "South", ""],
            "amount": ["$1.00", "$1.00", "$1.00", "$2.00", "$2.00", "$9.00"],
        }
    )


def small_agent(model: ScriptedModel, max_steps: int) -> CodeAgent:
    model.prompt_profile = SMALL
    return CodeAgent(
        tools=[],
        model=model,
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=max_steps,
    )


def run_program(program: str, frame: pd.DataFrame) -> object:
    got = {}
    exec(program, {"pd": pd, "orders": frame, "final_answer": lambda value: got.setdefault("answer", value)})
    return got["answer"]


def test_repeats_text_numbers_and_labels_are_cleaned_in_one_line_before_the_code():
    code = "per = orders.groupby('region')['amount'].sum()\nfinal_answer(per.to_dict())"
    program = cleaned_program(code, QUESTION, {"orders": orders()}, ["orders"])
    imported, first, *rest = program.splitlines()
    assert imported == "import pandas as pd" and first.startswith(
        "orders_clean = orders.drop_duplicates().assign(region=lambda f: "
    )
    assert "amount=lambda f: pd.to_numeric(" in first and "orders_clean.groupby('region')" in rest[0]
    assert run_program(program, orders()) == TIDY  # the blank label is a gap, not a group


def test_lines_that_changed_the_frame_are_left_out_and_compared_labels_are_written_as_cleaned():
    frame = orders()
    frame["amount"] = pd.to_numeric(frame["amount"].str.replace(r"[$,]", "", regex=True))  # an earlier step did it
    code = (
        "orders['amount'] = pd.to_numeric(orders['amount'].str.replace(r'[$,]', '', regex=True))\n"
        "final_answer(int((orders['region'] == 'north').sum()))"
    )
    program = cleaned_program(
        code, "How many orders came from the north? Count each once.", {"orders": frame}, ["orders"]
    )
    assert "orders['amount'] =" not in program and "== 'North'" in program and "amount=" not in program
    assert run_program(program, frame) == 3  # each order once, however 'North' is written


@pytest.mark.parametrize(
    "code, question",
    [
        ("orders = orders.drop_duplicates()\nfinal_answer(len(orders))", QUESTION),  # the code rebinds the frame
        ("final_answer(orders['order_id'].max())", "What is the largest order id?"),  # reads nothing untidy
        ("final_answer(1)", QUESTION),  # reads no frame
    ],
)
def test_nothing_is_offered_when_there_is_nothing_to_clean_or_the_frame_was_rebound(code, question):
    assert cleaned_program(code, question, {"orders": orders()}, ["orders"]) == ""


def test_the_small_model_sends_the_offered_program_and_its_answer_stands():
    first = (
        "Thought: total.\n```python\nper = orders.groupby('region')['amount'].sum()\nfinal_answer(per.to_dict())\n```"
    )

    def answer(messages, **kwargs):
        refused = re.search(r"cleaned first:\n```python\n(.*?)\n```", "\n".join(m.text for m in messages), re.S)
        return f"Thought: as offered.\n```python\n{refused.group(1)}\n```" if refused else first

    agent = small_agent(ScriptedModel(answer), max_steps=3)
    assert agent.run(QUESTION, additional_args={"orders": orders()}) == TIDY
    first = next(step for step in agent.memory.steps if isinstance(step, ActionStep))
    assert isinstance(first.error, AnswerRefused) and "Fix it: run your code with the data cleaned first:" in str(
        first.error
    )


def test_code_that_fails_on_numbers_written_as_text_is_offered_the_cleaned_program():
    model = ScriptedModel(
        [
            "Thought: total.\n```python\nper = orders.assign(amount=orders['amount'].astype(float))"
            ".groupby('region')['amount'].sum()\nfinal_answer(per.to_dict())\n```",
            "no answer",  # what the run's closing call gets after its one step
        ]
    )
    agent = small_agent(model, max_steps=1)
    agent.run(QUESTION, additional_args={"orders": orders()})
    error = str(next(step for step in agent.memory.steps if isinstance(step, ActionStep)).error)
    assert "holds numbers written as text" in error
    offered = re.search(r"cleaned first, as it is:\n```python\n(.*?)\n```", error, re.S).group(1)
    assert run_program(offered, orders()) == TIDY


def test_the_offer_after_a_failure_rebuilds_a_frame_an_earlier_step_made_from_the_task_frame():
    """The messy run's offer read `merged['amount']`, the raw frame an earlier step had made: still text."""
    model = ScriptedModel(
        [
            "Thought: later orders.\n```python\nlater = orders[orders['order_id'] > 1]\nprint(len(later))\n```",
            "Thought: total.\n```python\ntotal = later['amount'].astype(float).sum()\nfinal_answer(total)\n```",
            "no answer",
        ]
    )
    agent = small_agent(model, max_steps=2)
    question = "What is the total amount of the orders after the first in `orders`? Count each order once."
    agent.run(question, additional_args={"orders": orders()})
    error = str(agent.memory.action_steps()[1].error)
    offered = re.search(r"cleaned first, as it is:\n```python\n(.*?)\n```", error, re.S).group(1)
    assert "later = orders_clean[orders_clean['order_id'] > 1]" in offered
    assert run_program(offered, orders()) == 14.0  # orders 2 to 5, order 2 once


def test_groups_of_one_label_written_several_ways_are_noted_after_the_step_with_the_cleaned_program():
    """The messy run's totals by segment came in 22 groups for 3 labels; told only to go on from them, it printed
    them until it ran out of steps."""
    model = ScriptedModel(
        ["Thought: count.\n```python\nper = orders.groupby('region')['order_id'].count()\n```", "no answer"]
    )
    agent = small_agent(model, max_steps=1)
    agent.run("How many orders came from each region in `orders`?", additional_args={"orders": orders()})
    observed = agent.memory.action_steps()[0].observations
    assert "Note: per's keys ' NORTH', 'North', 'north ' are one label written several ways" in observed
    assert "write orders.groupby(orders['region'].str.strip().str.title())" in observed
    offered = re.search(r"cleaned first:\n```python\n(.*?)\n```", observed, re.S).group(1)
    made: dict = {}
    exec(offered, {"orders": orders()}, made)
    assert made["per"].to_dict() == {"North": 4, "South": 1}  # the blank label is a gap, not a group


def test_groups_already_read_as_a_person_reads_them_get_no_note():
    model = ScriptedModel(
        [
            "Thought: count.\n```python\nper = orders.groupby(orders['region'].str.strip().str.title())"
            "['order_id'].count()\n```",
            "no answer",
        ]
    )
    agent = small_agent(model, max_steps=1)
    agent.run("How many orders came from each region in `orders`?", additional_args={"orders": orders()})
    assert "written several ways" not in agent.memory.action_steps()[0].observations


def test_dates_written_as_text_are_read_as_dates_only_where_the_code_reads_dates():
    frame = orders().assign(day=["2024-01-05", "01/06/2024", "01/06/2024", "January 7, 2024", "2024-02-01", ""])
    monthly = "per = orders.groupby(orders['day'].dt.month)['order_id'].count()\nfinal_answer(per.to_dict())"
    program = cleaned_program(monthly, QUESTION, {"orders": frame}, ["orders"])
    assert "day=lambda f: pd.to_datetime(f['day'], format='mixed', errors='coerce')" in program
    assert run_program(program, frame) == {1: 3, 2: 1}
    textual = "final_answer(int(orders['day'].str.contains('2024').sum()))"
    assert "day=" not in cleaned_program(textual, QUESTION, {"orders": frame}, ["orders"])


def test_a_question_asked_by_month_has_the_frames_dates_read_as_dates_though_the_code_has_not_read_them():
    """The messy run totalled by region first for a monthly chart; its next step found the dates still text."""
    frame = orders().assign(day=["2024-01-05", "01/06/2024", "01/06/2024", "January 7, 2024", "2024-02-01", ""])
    by_region = "per = orders.groupby('region')['amount'].sum()\nfinal_answer(per.to_dict())"
    monthly = "Plot the monthly amount of each region in `orders`, one line per region."
    program = cleaned_program(by_region, monthly, {"orders": frame}, ["orders"])
    assert "day=lambda f: pd.to_datetime(f['day'], format='mixed', errors='coerce')" in program
    assert "day=" not in cleaned_program(by_region, QUESTION, {"orders": frame}, ["orders"])  # no time asked


def test_a_silent_total_of_text_numbers_is_noted_with_the_cleaned_program():
    model = ScriptedModel(
        ["Thought: total.\n```python\nper = orders.groupby('region')['amount'].sum()\nprint(per)\n```", "no answer"]
    )
    agent = small_agent(model, max_steps=1)
    agent.run(QUESTION, additional_args={"orders": orders()})
    observed = next(step for step in agent.memory.steps if isinstance(step, ActionStep)).observations
    assert "still holds numbers written as text" in observed
    offered = re.search(r"cleaned first:\n```python\n(.*?)\n```", observed, re.S).group(1)
    assert "orders_clean.groupby('region')" in offered


def test_after_a_step_noted_with_an_offer_the_next_step_runs_it_without_a_model_call():
    """The messy runs sent the offer back (or their refused line, or nothing) in 11 of 20 offers: a model call each."""
    counting = "Thought: count.\n```python\ncounts = orders['region'].value_counts()\nbest = counts.idxmax()\n```"
    answering = "Thought: answer.\n```python\nfinal_answer((best, int(counts.max())))\n```"
    model = ScriptedModel([counting, answering, "never asked"])
    agent = small_agent(model, max_steps=3)
    assert agent.run(
        "Which region in `orders` has the most orders, and how many?", additional_args={"orders": orders()}
    ) == (
        "North",
        4,  # every spelling of North, the repeated row too (the question does not ask to count each once)
    )
    assert len(model.calls) == 2  # counting, then answering: the offer in counting's note ran without one
    noted, in_place, answered = agent.memory.action_steps()
    assert "Or send your code with the data cleaned first" in noted.observations and noted.error is None
    assert in_place.code_action.startswith("orders_clean = orders.assign(region=")
    assert in_place.model_output.startswith("(nbagent ran the code it offered after your last step")
    assert in_place.token_usage.output_tokens == 0 and "`best`: str = 'North'" in in_place.observations
    assert agent.memory.total_token_usage().input_tokens > 0  # the run still counts the model's tokens
    assert answered.model_output.startswith("Thought: answer.") and answered.is_final_answer
    # the model reads nbagent's step as a turn in its own form that says whose code it was, not nbagent's words
    said = "\n".join(message.text for message in model.calls[1])
    assert "(nbagent ran the code it offered" not in said
    assert (
        "Thought: I run the code nbagent offered: my code on the data cleaned first.\n```python\norders_clean" in said
    )


def test_what_the_offers_run_said_goes_to_the_model_and_nbagent_never_runs_its_offers_in_a_row():
    first = "Thought: count.\n```python\nfinal_answer(int((orders['region'] == 'North').sum()))\n```"
    model = ScriptedModel([first, "Thought: done.\n```python\nfinal_answer(3)\n```"])
    agent = small_agent(model, max_steps=3)
    question = "How many orders came from the North region in `orders`? Count each order once."
    assert agent.run(question, additional_args={"orders": orders()}) == 3
    steps = agent.memory.action_steps()
    assert [step.model_output.startswith("(nbagent ran") for step in steps] == [False, True, False][: len(steps)]
    assert steps[1].code_action.startswith("orders_clean = orders.drop_duplicates()")
    said = "Fix it: run your code with the data cleaned first:\n```python\nfinal_answer(1)\n```"
    assert offer_in_place(said, True, ["x = 1"]) == ""  # never a chain of its own
    assert offer_in_place(said, False, ["x = 1"]) == "final_answer(1)"
    assert offer_in_place(said, False, ["final_answer(1)", "x = 1"]) == ""  # ran already: the model is asked
    assert ran_in_place(steps[1]) and not ran_in_place(steps[0])
    copied = ActionStep(step_number=3, model_output=offer_reply("x = 1"), token_usage=TokenUsage(900, 40))
    assert not ran_in_place(copied)  # the model copied the words: its tokens say it wrote them


def test_an_empty_reply_to_an_offer_runs_the_offer():
    """The last messy run replied with nothing to 3 offers in 20 questions, then lost the offer's fixes."""
    said = "Fix it: run your code with the data cleaned first:\n```python\norders_clean = orders\nfinal_answer(1)\n```"
    fix = offer_taken("", "final_answer(3)", said, {"orders": orders()})
    assert fix.code == "orders_clean = orders\nfinal_answer(1)"
    assert fix.notes[0].startswith("Your reply was empty: nbagent ran the code it offered")


def test_an_empty_reply_with_no_offer_before_is_still_told_it_was_empty():
    agent = small_agent(ScriptedModel(["", "no answer"]), max_steps=1)
    agent.run("How many orders are in `orders`?", additional_args={"orders": orders()})
    assert "Your reply was empty" in str(agent.memory.action_steps()[0].error)


def test_new_code_after_an_offer_runs_as_written():
    said = "Fix it: run your code with the data cleaned first:\n```python\norders_clean = orders\nfinal_answer(1)\n```"
    ns = {"orders": orders()}
    assert offer_taken("final_answer(2)", "final_answer(3)", said, ns).code == "final_answer(2)"  # not a repeat
    assert offer_taken("final_answer(3)", "final_answer(3)", said, ns).code == "orders_clean = orders\nfinal_answer(1)"
    assert offer_taken("final_answer(3)", "final_answer(3)", "refused: it is NaN", ns).code == "final_answer(3)"
    made = "orders_clean = orders[orders['region'] == 'x']\nfinal_answer(len(orders_clean))"
    assert offer_taken(made, "final_answer(3)", said, ns).code == made  # it makes its own


def test_code_reading_the_offered_clean_frame_it_never_made_gets_the_offers_cleaning_line_first():
    """The messy run copied the offer's last lines only: `orders_clean[...]` raised NameError."""
    said = (
        "Fix it: run your code with the data cleaned first:\n```python\nimport pandas as pd\n"
        "orders_clean = orders.drop_duplicates()\nn = len(orders_clean)\nfinal_answer(n)\n```"
    )
    fix = offer_taken("final_answer(len(orders_clean))", "final_answer(6)", said, {"orders": orders()})
    assert fix.code == "import pandas as pd\norders_clean = orders.drop_duplicates()\nfinal_answer(len(orders_clean))"
    assert fix.notes == ["nbagent ran the offered orders_clean line first: your code reads it."]
    made_before = {"orders": orders(), "orders_clean": orders(), "pd": pd}
    assert (
        offer_taken("final_answer(len(orders_clean))", "x", said, made_before).code == "final_answer(len(orders_clean))"
    )


def test_a_new_column_the_code_makes_on_the_frame_is_made_on_the_cleaned_frame():
    code = "orders['cents'] = orders['amount'] * 100\nfinal_answer(orders['cents'].sum())"
    program = cleaned_program(
        code, "What is the total amount in cents? Count each once.", {"orders": orders()}, ["orders"]
    )
    assert "orders_clean['cents'] = orders_clean['amount'] * 100" in program
    assert run_program(program, orders()) == 1500.0  # 1 + 1 + 2 + 2 + 9 dollars, the repeated row once


def test_code_with_a_clean_frame_of_its_own_gets_no_offer():
    code = "orders_clean = orders.dropna(subset=['amount'])\nfinal_answer(orders_clean['amount'].isna().sum())"
    assert cleaned_program(code, QUESTION, {"orders": orders()}, ["orders"]) == ""


def test_the_codes_own_text_cleaning_of_a_column_the_cleaning_made_numbers_runs_as_the_column():
    """The messy run's offer kept `pd.to_numeric(orders_clean['amount'].str.replace(...))`: .str raised on numbers."""
    code = "t = pd.to_numeric(orders['amount'].str.replace('[$,]', '', regex=True), errors='coerce').sum()\nfinal_answer(t)"
    program = cleaned_program(code, "What is the total amount? Count each once.", {"orders": orders()}, ["orders"])
    assert "t = pd.to_numeric(orders_clean['amount'], errors='coerce').sum()" in program
    assert run_program(program, orders()) == 15.0


def test_a_merged_column_read_through_its_suffix_is_cleaned_in_its_frame():
    """The messy run totalled merged['amount_y'] of two frames whose amounts are text; the offer left them text."""
    refunds = pd.DataFrame({"order_id": [1, 2, 2], "amount": ["-$1.00", "-$2.00", "-$2.00"]})
    code = "merged = refunds.merge(orders, on='order_id')\nfinal_answer(merged['amount_x'].sum())"
    namespace = {"orders": orders(), "refunds": refunds}
    program = cleaned_program(code, "How much was refunded? Count each refund once.", namespace, ["orders", "refunds"])
    assert "refunds_clean = refunds.drop_duplicates().assign(amount=lambda f: pd.to_numeric(" in program
    assert "merged = refunds_clean.merge(orders_clean, on='order_id')" in program
