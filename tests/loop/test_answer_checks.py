"""A small model's final answer is checked against the question and the code that made it."""

from __future__ import annotations

import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.answers import AnswerContext, answer_problems
from nbagent.loop.aids.coach import Coach
from nbagent.loop.aids.data_card import NOTEBOOK_VARIABLES_HEADING, card_first, describe_variables, split_task
from nbagent.loop.code_step import AnswerRefused
from nbagent.loop.prompting import SMALL


def frames() -> dict[str, pd.DataFrame]:
    sales = pd.DataFrame(
        {
            "order_id": [1001, 1002, 1003, 1004],
            "date": pd.to_datetime(["2024-05-02", "2024-05-20", "2024-06-03", "2024-06-09"]),
            "region": ["South", "North", "South", "East"],
            "customer_id": [2, 1, 2, 3],
            "units": [1, 5, 2, 1],
            "unit_price": [10.0, 4.0, 30.0, 8.0],
        }
    )
    customers = pd.DataFrame({"customer_id": [1, 2, 3], "name": ["Ada", "Bo", "Cy"]})
    return {"sales": sales, "customers": customers}


def problems_of(question: str, code: str, names=("sales",)) -> list[str]:
    """Run `code` on the frames, then check what it gave `final_answer` as the answer to `question`."""
    namespace = {name: frame.copy() for name, frame in frames().items()}
    answered = []
    exec(code, {**namespace, "final_answer": answered.append}, namespace)
    return answer_problems(answered[-1], AnswerContext(question, list(names), code, namespace))


REVENUE = "revenue = sales['units'] * sales['unit_price']\n"


def test_a_row_number_given_for_an_id_is_doubted_with_the_line_to_write():
    said = problems_of(
        "Which order in `sales` had the largest revenue? Answer with its order_id.",
        REVENUE + "final_answer(int(revenue.idxmax()))",
    )
    assert said == [
        "revenue.idxmax() is a row number (2): the index of `revenue` counts the rows 0, 1, 2, …, it is not a value "
        'of the data. Read the value from that row: sales.loc[revenue.idxmax(), "order_id"]'
    ]
    assert (
        problems_of(
            "Which order has most revenue?", REVENUE + "final_answer(int(sales.loc[revenue.idxmax(), 'order_id']))"
        )
        == []
    )


def test_an_id_looked_up_as_a_row_number_is_doubted():
    code = "spent = (sales['units'] * sales['unit_price']).groupby(sales['customer_id']).sum()\n"
    question = "Which customer spent the most in `sales`? Answer with the name from `customers`."
    said = problems_of(
        question, code + "best = spent.idxmax()\nfinal_answer(customers.loc[best, 'name'])", ("sales", "customers")
    )
    assert len(said) == 1 and "`best` is a customer_id, but the index of `customers` counts the rows" in said[0]
    assert "customers.loc[customers[\"customer_id\"] == best, 'name'].iloc[0]" in said[0]
    assert Coach.proves_wrong(said[0])  # customers.loc[2] is customer 3's row: proved, it stands past any budget
    namespace = {name: frame.copy() for name, frame in frames().items()}
    namespace["customers"]["customer_id"] = [0, 1, 2]  # the row at position 2 is customer 2's: the doubt alone
    lookup = code + "best = spent.idxmax()\nfinal_answer(customers.loc[best, 'name'])"
    namespace["sales"]["customer_id"] = [1, 0, 1, 2]
    answered = []
    exec(lookup, {**namespace, "final_answer": answered.append}, namespace)
    (doubt,) = answer_problems(answered[-1], AnswerContext(question, ["sales", "customers"], lookup, namespace))
    assert "`best` is a customer_id" in doubt and not Coach.proves_wrong(doubt)
    right = code + "final_answer(customers.set_index('customer_id').loc[spent.idxmax(), 'name'])"
    assert problems_of(question, right, ("sales", "customers")) == []


def test_numbers_given_for_names_are_doubted():
    code = "final_answer(sales['units'].value_counts().head(2).index.tolist())"
    assert problems_of("Top 2 of `sales`? A list of region names.", code) == [
        "the question asks for names, but the answer is numbers; the names are in sales['region']"
    ]
    assert problems_of("Top 2 of `sales`? A list of names.", code) == [
        "the question asks for names, but the answer is numbers"  # no column holds them: none is named
    ]
    assert problems_of("Top 2 unit counts of `sales`?", code) == []
    assert not any(Coach.proves_wrong(said) for said in problems_of("Top 2 of `sales`? A list of region names.", code))


@pytest.mark.parametrize(
    "question",
    [
        "Which customer spent the most in `sales`? Answer with the customer's name from `customers`.",
        "Who bought the most units in `sales`? Reply with their name.",
        "Which customer spent the most in `sales`; what is their name in `customers`?",
    ],
)
def test_a_number_where_the_question_demands_a_name_is_proved_wrong(question):
    code = "final_answer(int(sales.groupby('customer_id')['units'].sum().idxmax()))"
    (said,) = [said for said in problems_of(question, code, ("sales", "customers")) if "asks for names" in said]
    assert Coach.proves_wrong(said) and "the names are in customers['name']" in said
    counted = problems_of("How many names are in `customers`?", "final_answer(3)", ("customers",))
    assert not any(Coach.proves_wrong(said) for said in counted)  # a count of names: a doubt at most


def test_one_value_per_group_where_one_number_was_asked_is_doubted():
    code = REVENUE + "final_answer(revenue.groupby(sales['region']).sum())"
    assert problems_of("What was the revenue in `sales`?", code) == [
        "the answer has one value per region, but the question does not ask per region"
    ]
    assert problems_of("What was the revenue in `sales`, counting each order once?", code) == [
        "the answer has one value per region, but the question does not ask per region"
    ]  # "each order once" asks for no group
    assert problems_of("What was the revenue of each region in `sales`?", code) == []
    assert problems_of("What was the revenue by region in `sales`?", code) == []
    monthly = REVENUE + "final_answer(revenue.groupby(sales['date'].dt.month).sum())"
    assert problems_of("What was the monthly revenue in `sales`?", monthly) == []


def test_the_distinct_rows_counted_for_how_many_repeat_are_proved_wrong():
    orders = pd.DataFrame({"id": [1, 2, 2, 3, 3, 4], "amount": [5, 6, 6, 7, 7, 8]})  # 2 repeats, 4 distinct rows

    def said(question, code):
        namespace = {"orders": orders}
        answered = []
        exec(code, {**namespace, "final_answer": answered.append}, namespace)
        return answer_problems(answered[-1], AnswerContext(question, ["orders"], code, namespace))

    question = "How many rows in `orders` are exact duplicates of an earlier row?"
    (found,) = said(question, "final_answer(orders.drop_duplicates().shape[0])")
    assert Coach.proves_wrong(found) and found == (
        "4 is the number of distinct rows of orders (what orders.drop_duplicates() keeps), but the question asks how "
        "many rows repeat an earlier one: orders.duplicated().sum() counts them"
    )
    assert said(question, "final_answer(int(orders.duplicated().sum()))") == []
    distinct = "How many orders are in `orders`, not counting duplicates?"  # the distinct rows are the answer here
    assert said(distinct, "final_answer(len(orders.drop_duplicates()))") == []


def test_a_percentage_asked_must_be_computed():
    question = "By how many percent did revenue in `sales` change from May to June?"
    by_month = REVENUE + "m = revenue.groupby(sales['date'].dt.month).sum()\n"
    assert problems_of(question, by_month + "final_answer(m[6] - m[5])") == [
        "the question asks for a percentage, but the code never computes one (a part / the whole * 100)"
    ]
    assert problems_of(question, by_month + "final_answer((m[6] - m[5]) / m[5] * 100)") == []
    assert problems_of(question, by_month + "final_answer(m.pct_change()[6])") == []


def test_a_pointed_at_variable_never_used_is_doubted():
    said = problems_of(
        "Revenue in `sales` divided by its target in `targets`?", "final_answer(3.0)", ("sales", "targets")
    )
    assert said == [
        "the question points at `sales`, but the code never uses it",
        "the question points at `targets`, but the code never uses it",
    ]


def test_a_value_the_question_asks_about_compared_only_with_not_equal_is_doubted():
    question = "How many units were sold in the South region of `sales`?"
    kept = "final_answer(sales[sales['region'] != 'South']['units'].sum())"
    said = (
        "the question asks about 'South', but the code leaves 'South' out of region (!= or ~isin), which keeps every "
        "row except those: select them with == instead"
    )
    assert problems_of(question, kept) == [said]
    # the messy run's ~isin(["North ", " NORTH", "north "]) counted every order but North's
    assert problems_of(question, "final_answer(sales[~sales['region'].isin(['South ', 'south'])]['units'].sum())") == [
        said
    ]
    assert problems_of(question, "final_answer(sales[sales['region'] == 'South']['units'].sum())") == []
    assert problems_of(question, "final_answer(sales[sales['region'].isin(['South'])]['units'].sum())") == []
    assert problems_of("How many units were sold outside the South region of `sales`?", kept) == []


def test_a_described_variable_the_question_does_not_name_may_go_unused():  # --vars '*' describes every frame
    assert (
        problems_of("How many orders are there in `sales`?", "final_answer(len(sales))", ("sales", "customers")) == []
    )


def test_a_value_the_question_names_must_be_selected_and_one_it_does_not_name_must_not():
    question = "What is the median revenue per order in the South region of `sales`?"
    assert problems_of(question, REVENUE + "final_answer(revenue.median())") == [
        "the question names 'South' (a value of sales['region']), but the code never selects it"
    ]
    assert problems_of(question, REVENUE + "final_answer(revenue[sales['region'] == 'South'].median())") == []
    assert problems_of(question, REVENUE + "final_answer(sales.query(\"region == 'South'\")['units'].sum())") == []
    invented = problems_of(
        "How many units did `sales` sell?", "final_answer(sales[sales['region'] == 'North']['units'].sum())"
    )
    assert invented == [
        "the code keeps only the rows where region is 'North', but the question does not ask for 'North': drop that "
        "condition (keep the others)"
    ]


def test_a_month_the_question_names_must_be_selected():
    question = "What was the South revenue in `sales` in May 2024?"
    south = REVENUE + "s = revenue[sales['region'] == 'South']\nfinal_answer(s"
    (never,) = problems_of(question, south + ".sum())")  # it reads no date: proved, not a guess
    assert (
        never
        == "the question names May, but the code never selects it: it reads no date, and sales['date'] holds 2 months"
    )
    assert Coach(True, lambda step: False).proves_wrong(never)
    by_day = REVENUE + "final_answer(revenue.set_axis(sales['date'])[sales['region'].values == 'South'].sum())"
    (doubt,) = problems_of(question, by_day)  # code that may read a date keeps it a doubt
    assert doubt == "the question names May, but the code never selects it" and not Coach(True, None).proves_wrong(
        doubt
    )
    assert problems_of(question, south + "[sales['date'].dt.month == 5].sum())") == []
    assert problems_of(question, south + "[sales['date'].dt.strftime('%Y-%m') == '2024-05'].sum())") == []
    assert problems_of("Which may be the South revenue of `sales`?", south + ".sum())") == []  # "may" is no month
    named = REVENUE + "may = revenue[sales['region'] == 'South']\nfinal_answer(may.sum())"  # a name picks nothing
    assert problems_of(question, named)[0].startswith("the question names May, but the code never selects it")
    by_month = (
        REVENUE + "m = revenue.groupby(sales['date'].dt.to_period('M')).sum()\nfinal_answer(m.iloc[-1] - m.iloc[-2])"
    )
    assert problems_of("Change from May to June in `sales`?", by_month) == []  # picked by position


SEGMENT_REVENUE = REVENUE + "per = revenue.groupby(sales['region']).sum()\n"


@pytest.mark.parametrize(
    "answer",
    [
        "per.idxmax()",  # the name alone
        "per.max()",  # the number alone
        "(per.idxmax(), per.idxmin())",  # two names, no amount
        "f'{per.idxmax()}'",  # text without a number
    ],
)
def test_which_and_how_much_needs_both_things(answer):
    question = "Which region of `sales` brought in the most revenue, and how much?"
    said = problems_of(question, f"{SEGMENT_REVENUE}final_answer({answer})")
    assert len(said) == 1 and said[0].startswith("the question asks two things (which one, and how much)")
    assert "answer both in one value" in said[0] and "final_answer({" in said[0]


def test_one_thing_alone_or_no_number_for_which_and_how_much_is_proved_wrong_but_a_pair_with_digits_is_a_doubt():
    question = "Which region of `sales` brought in the most revenue, and how much?"
    for one_thing in ("per.idxmax()", "per.max()", "f'{per.idxmax()}'", "(per.idxmax(), per.idxmin())", "{'': 'Ann'}"):
        (said,) = problems_of(question, f"{SEGMENT_REVENUE}final_answer({one_thing})")
        assert Coach.proves_wrong(said), one_thing
    (numbers_only,) = problems_of(question, f"{SEGMENT_REVENUE}final_answer((per.max(), per.min()))")
    assert not Coach.proves_wrong(numbers_only)  # two numbers: one may be a label (a year, an id)
    what = problems_of(
        "Which region of `sales` led, and what was its best product?", f"{SEGMENT_REVENUE}final_answer(per.idxmax())"
    )
    assert not Coach.proves_wrong(what[0])  # "and what" may be read several ways


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("final_answer(per.idxmax())", "final_answer({per.idxmax(): per.max()})"),
        ("final_answer(per.max())", "final_answer({per.idxmax(): per.max()})"),
        ("best = per.idxmin()\nfinal_answer(best)", "final_answer({per.idxmin(): per.min()})"),
        ("final_answer(str(per.idxmax()))", "final_answer({per.idxmax(): per.max()})"),
        ("final_answer('North')", "e.g. final_answer({name: amount})"),  # no pair in the code: the form
    ],
)
def test_the_refusal_gives_the_line_that_answers_both(code, line):
    question = "Which region of `sales` brought in the most revenue, and how much?"
    (said,) = problems_of(question, f"{SEGMENT_REVENUE}{code}")
    assert said.endswith(line)


@pytest.mark.parametrize(
    "answer",
    [
        "(per.idxmax(), per.max())",
        "[per.idxmax(), float(per.max())]",
        "{per.idxmax(): per.max()}",
        "per.nlargest(1)",  # a Series: its label and its value
        "f'{per.idxmax()}: {per.max():.2f}'",
    ],
)
def test_which_and_how_much_answered_with_both_passes(answer):
    question = "Which region of `sales` brought in the most revenue, and how much?"
    assert problems_of(question, f"{SEGMENT_REVENUE}final_answer({answer})") == []


def test_the_two_things_check_reads_only_such_questions():
    best = f"{SEGMENT_REVENUE}final_answer(per.idxmax())"
    assert problems_of("Which region of `sales` brought in the most revenue?", best) == []
    assert problems_of("How much revenue did `sales` bring, and which region led?", best)[0].startswith(
        "the question asks two things"
    )
    said = problems_of("Which region of `sales` led, and what was its best product?", best)
    assert said == [
        "the question asks two things (which one, and what), but the answer gives one value: answer both in one "
        "value, e.g. final_answer([first, second])"
    ]
    named_both = f"{SEGMENT_REVENUE}final_answer(f'{{per.idxmax()}}, Laptop')"
    assert problems_of("Which region of `sales` led, and what was its best product?", named_both) == []


@pytest.mark.parametrize(
    "code",
    [
        REVENUE + "final_answer(int(revenue.groupby(sales['date'].dt.month).sum().idxmax()))",  # a month number
        REVENUE + "final_answer(str(revenue.groupby(sales['date'].dt.month).sum().idxmax()))",  # the same, as text
        "final_answer(9)",
    ],
)
def test_which_month_needs_a_month_not_a_bare_number(code):
    said = problems_of("Which month had the highest revenue in `sales`?", code)
    assert said[0].startswith("the question asks which month, but the answer is a bare number, not a month")
    assert "(the dates are in sales['date'])" in said[0] and "'2024-10'" in said[0]


@pytest.mark.parametrize(
    "answer",
    [
        "str(per.idxmax())",
        "per.index[per.argmax()].strftime('%B %Y')",
        "pd.Timestamp('2024-06-01')",
        "(per.idxmax(), per.max())",  # a month and its revenue
    ],
)
def test_which_month_answered_with_a_month_passes(answer):
    code = REVENUE + f"per = revenue.groupby(sales['date'].dt.to_period('M')).sum()\nfinal_answer({answer})"
    namespace = {name: frame.copy() for name, frame in frames().items()}
    answered = []
    exec(code, {**namespace, "pd": pd, "final_answer": answered.append}, namespace)
    context = AnswerContext("Which month had the highest revenue in `sales`?", ["sales"], code, namespace)
    assert answer_problems(answered[-1], context) == []


def test_which_year_takes_a_year_and_other_questions_take_numbers():
    assert problems_of("Which year had the most orders in `sales`?", "sales\nfinal_answer(2024)") == []
    assert problems_of("Which year had the most orders in `sales`?", "sales\nfinal_answer(3)")[0].startswith(
        "the question asks which year, but the answer is a bare number"
    )
    assert problems_of("How many orders are in `sales`?", "final_answer(len(sales))") == []


def test_split_task_tells_the_question_from_the_described_variables():
    task = "Revenue of `sales`?" + describe_variables(frames(), NOTEBOOK_VARIABLES_HEADING)
    assert split_task(task) == ("Revenue of `sales`?", ["sales", "customers"])
    assert split_task("Just a question?") == ("Just a question?", [])


def test_card_first_puts_the_described_variables_before_the_question():
    card = describe_variables(frames(), NOTEBOOK_VARIABLES_HEADING)
    moved = card_first("Revenue of `sales`?" + card)
    assert moved == card.strip("\n") + "\nTask: Revenue of `sales`?"
    assert card_first("Just a question?") == "Just a question?"
    assert card_first(card) == card  # no question to put after it


# ---------------------------------------------------------------------------------------------- in the loop


def agent_for(responses: list[str]) -> tuple[CodeAgent, ScriptedModel]:
    model = ScriptedModel([f"Thought: go.\n```python\n{body}\n```" for body in responses])
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[], model=model, namespace=frames(), verbosity_level=-1, show_widget=False, max_steps=len(responses)
    )
    return agent, model


QUESTION = "What is the median revenue per order in the South region of `sales`?\n- `sales`: pandas DataFrame"


def test_a_doubted_answer_is_refused_with_the_reason_and_the_right_one_is_taken():
    agent, model = agent_for(
        [REVENUE + "final_answer(revenue.median())", "final_answer(revenue[sales['region'] == 'South'].median())"]
    )
    assert agent.run(QUESTION) == 35.0  # South: 10 and 60
    first = next(step for step in agent.memory.steps if isinstance(step, ActionStep))
    assert isinstance(first.error, AnswerRefused) and not first.is_final_answer
    assert "final_answer(np.float64(15.0)) was refused: the question names 'South'" in "\n".join(
        message.text for message in model.calls[1]
    )


def test_a_month_asked_and_answered_with_a_row_position_is_refused_then_the_month_is_taken():
    by_month = REVENUE + "per = revenue.groupby(sales['date'].dt.strftime('%Y-%m')).sum().reset_index(drop=True)\n"
    agent, model = agent_for(
        [by_month + "final_answer(per.idxmax())", "final_answer(sales['date'].dt.strftime('%Y-%m').max())"]
    )
    assert agent.run("Which month had the highest revenue in `sales`?\n- `sales`: pandas DataFrame") == "2024-06"
    told = "\n".join(message.text for message in model.calls[1])
    assert "the question asks which month, but the answer is a bare number" in told


def test_which_and_how_much_answered_by_half_is_refused_then_both_are_taken():
    question = "Which region of `sales` sold the most units, and how many?\n- `sales`: pandas DataFrame"
    per = "per = sales.groupby('region')['units'].sum()\n"
    agent, model = agent_for([per + "final_answer(per.idxmax())", per + "final_answer((per.idxmax(), per.max()))"])
    assert agent.run(question) == ("North", 5)
    assert "the question asks two things (which one, and how much)" in "\n".join(m.text for m in model.calls[1])


def test_the_same_doubt_is_said_once_so_a_sure_model_can_answer_again():
    agent, _ = agent_for([REVENUE + "final_answer(revenue.median())", "final_answer(revenue.median())"])
    assert agent.run(QUESTION) == 15.0


def test_a_doubt_that_persists_in_a_new_answer_is_said_again():
    agent, model = agent_for(
        [
            REVENUE + "final_answer(revenue.median())",  # South never selected
            "final_answer(revenue.mean())",  # another answer, South still never selected
            "final_answer(revenue[sales['region'] == 'South'].median())",
        ]
    )
    assert agent.run(QUESTION) == 35.0
    refused = [
        str(step.error) for step in agent.memory.steps if isinstance(getattr(step, "error", None), AnswerRefused)
    ]
    assert len(refused) == 2 and all("South" in text for text in refused)


def test_at_most_three_answers_are_refused_per_task():
    agent, _ = agent_for(
        [
            REVENUE + "final_answer(revenue.median())",  # South never selected
            "final_answer(revenue[sales['region'] == 'North'].median())",  # North not asked
            "final_answer(None)",  # no value
            "final_answer(revenue[sales['region'] == 'East'].median())",  # East not asked: three refusals were said
        ]
    )
    assert agent.run(QUESTION) == 8.0
    refused = [step for step in agent.memory.steps if isinstance(getattr(step, "error", None), AnswerRefused)]
    assert len(refused) == 3


@pytest.mark.parametrize("profile", [None, "standard"])
def test_standard_models_answers_are_not_checked(profile):
    model = ScriptedModel([f"Thought: go.\n```python\n{REVENUE}final_answer(revenue.median())\n```"])
    if profile:
        model.prompt_profile = profile
    agent = CodeAgent(tools=[], model=model, namespace=frames(), verbosity_level=-1, show_widget=False)
    assert agent.run(QUESTION) == 15.0


def test_odd_data_does_not_break_the_checks():
    twice = pd.DataFrame([["South", "x"], ["North", "y"]], columns=["region", "region"])  # two columns, one name
    namespace = {"sales": twice}
    context = AnswerContext("Rows of the South in `sales`?", ["sales"], "final_answer(len(sales))", namespace)
    assert answer_problems(2, context) == [
        "the question names 'South' (a value of sales['region']), but the code never selects it"
    ]


def test_a_failing_check_never_fails_the_run(monkeypatch):
    def broken(answer, context):
        raise RuntimeError("a check tripped over odd data")

    monkeypatch.setattr("nbagent.loop.aids.coach.answer_problems", broken)
    agent, _ = agent_for([REVENUE + "final_answer(revenue.median())"])
    assert agent.run(QUESTION) == 15.0


def test_a_series_sent_again_is_not_a_sure_answer():
    per_row = "final_answer(sales['units'] * sales['unit_price'])"
    agent, _ = agent_for([per_row, per_row, REVENUE + "final_answer(revenue[sales['region'] == 'South'].median())"])
    assert agent.run(QUESTION) == 35.0
    refused = [step for step in agent.memory.steps if isinstance(getattr(step, "error", None), AnswerRefused)]
    assert len(refused) == 2


def test_a_selection_the_answer_does_not_use_is_no_selection():
    """An earlier step's filter into a variable the answer never reads does not count as selecting the month."""
    question = "How many orders in `sales` were placed in May 2024?\n- `sales`: pandas DataFrame"
    agent, model = agent_for(
        [
            "may = sales[sales['date'].dt.strftime('%Y-%m') == '2024-05']\nprint(len(may))",
            "final_answer(len(sales))",  # every order: the May filter above is not on this answer's path
            "final_answer(len(may))",
        ]
    )
    assert agent.run(question) == 2
    refused = [step for step in agent.memory.steps if isinstance(getattr(step, "error", None), AnswerRefused)]
    assert len(refused) == 1 and "May" in str(refused[0].error)


def test_a_quantity_the_question_defines_as_a_product_is_doubted_when_a_factor_is_never_read():
    """The clean run gave the median of `units` as "the median revenue (units × unit_price)"."""
    question = "What is the median revenue (units × unit_price) per order in the South region of `sales`?"
    south = "south = sales[sales['region'] == 'South']\n"
    said = problems_of(question, south + "final_answer(float(south['units'].median()))")
    assert said == [
        "the question counts revenue as units × unit_price, but the code the answer comes from never reads "
        "'unit_price': compute revenue for each row first, then the answer from it"
    ]
    per_row = south + "final_answer(float((south['units'] * south['unit_price']).median()))"
    assert problems_of(question, per_row) == []
    assert problems_of(question.replace("unit_price", "unit_cost"), south + "final_answer(1.0)") == []  # no such column


def test_a_whole_table_by_columns_given_for_one_value_per_group_is_doubted():
    """The messy run answered "a dict from segment to amount" with groupby('segment').sum().to_dict()."""
    question = "What was the total units of each region in `sales`? Give a dict from region to units."
    said = problems_of(question, "final_answer(sales.groupby('region')[['units', 'unit_price']].sum().to_dict())")
    assert any(
        problem.startswith("the answer is a whole table, one entry per column (units, unit_price") for problem in said
    )
    assert problems_of(question, "final_answer(sales.groupby('region')['units'].sum().to_dict())") == []


def test_a_which_answer_is_checked_against_the_frame_the_task_gave_after_the_code_rebound_it():
    question = "Which region of `sales` sold the most units?\n- `sales`: pandas DataFrame"
    dropped = "sales = sales.drop(columns='region')\nprint(sales.columns.tolist())"
    agent, model = agent_for(
        [dropped, "final_answer(int(sales['units'].max()))", "final_answer('North' if len(sales) else '')"]
    )
    assert agent.run(question) == "North"
    told = "\n".join(message.text for message in model.calls[2])
    assert "is not a region of the data" in told and "sales['region']" in told


def test_a_row_number_of_a_frames_column_is_doubted_and_a_month_numbered_0_is_proved_wrong():
    """The messy run answered "which month" with monthly['amount'].idxmax() of a reset_index frame: 0, three times."""
    code = (
        "monthly = sales.groupby(sales['date'].dt.strftime('%Y-%m'))['units'].sum().rename_axis('month').reset_index()\n"
        "best = monthly['units'].idxmax()\nfinal_answer(best)"
    )
    row, bare = problems_of("Which month sold the most units in `sales`?", code)
    assert row.startswith("monthly['units'].idxmax() is a row number (0): the index of `monthly['units']` counts")
    assert row.endswith("monthly.loc[monthly['units'].idxmax(), \"month\"]")
    assert bare.startswith("the question asks which month, but the answer is a bare number")
    assert Coach(True, None).proves_wrong(bare)  # no month is numbered 0
    march = problems_of("Which month sold the most units in `sales`?", "final_answer(3)")
    assert not any(Coach(True, None).proves_wrong(problem) for problem in march)  # 3 may be March without its year


def test_the_offer_for_untidy_data_finds_the_row_by_its_id_too(small_agent):
    """The messy run's best client: refused for amounts summed as text and for an id looked up as a row number, it
    was offered its code with the amounts read as numbers and the lookup as it was, ran it and was refused again."""
    frames = {
        "sales": pd.DataFrame({"customer_id": [1, 1, 2, 3], "amount": ["$900.00", "$50.00", "$1,000.00", "$80.00"]}),
        "customers": pd.DataFrame({"customer_id": [2, 3, 1], "name": ["Bea", "Cal", "Al"]}),
    }
    lookup = (
        "spent = sales.groupby('customer_id')['amount'].sum()\nbest = spent.idxmax()\n"
        "final_answer(customers.loc[best, 'name'])"
    )
    agent = small_agent([lookup, "final_answer('Al')"], frames, max_steps=2)
    question = "Which customer spent the most in `sales`? Answer with the customer's name from `customers`."
    assert agent.run(question + "".join(f"\n- `{name}`: pandas DataFrame" for name in frames)) == "Bea"
    first, second = agent.memory.action_steps()
    said = str(first.error)
    assert "holds numbers written as text" in said and "`best` is a customer_id" in said
    assert "final_answer(customers.loc[customers['customer_id'] == best, 'name'].iloc[0])" in said  # (unparsed)
    assert second.token_usage.output_tokens == 0 and second.error is None  # the offer ran in the model's place
