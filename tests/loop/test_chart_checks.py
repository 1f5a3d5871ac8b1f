"""A chart that answers the question: its marks against the groups the question asks for (monthly, per region)."""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.chart_checks import chart_only, chart_problems, chart_taken_note
from nbagent.loop.code_step import AnswerRefused
from nbagent.loop.prompting import SMALL
from nbagent.media import collect_images
from nbagent.media.figures import figure_summary


def frames() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(5)
    days = pd.date_range("2024-01-01", "2024-06-30", freq="D")  # 182 days, 6 months
    dates = np.sort(np.concatenate([days.values, rng.choice(days.values, 200 - len(days))]))
    sales = pd.DataFrame(
        {
            "date": dates,
            "region": rng.choice(["North", "South", "East", "West"], 200),
            "units": rng.integers(1, 9, 200),
        }
    )
    messy = pd.DataFrame(
        {
            "order_date": [d.strftime("%m/%d/%Y" if i % 2 else "%Y-%m-%d") for i, d in enumerate(sales["date"])],
            "region": [r.upper() if i % 3 == 0 else f" {r.lower()}" for i, r in enumerate(sales["region"])],
            "units": sales["units"],
        }
    )
    return {"sales": sales, "orders": messy}


def summary(draw) -> dict:
    figure, ax = plt.subplots()
    try:
        draw(ax)
        figure.canvas.draw()
        return figure_summary(figure)
    finally:
        plt.close(figure)


def problems(question: str, *figures: dict) -> list[str]:
    return chart_problems(list(figures), question, ["sales", "orders"], frames())


def per_row_bars(ax) -> None:
    ax.bar(range(200), frames()["sales"]["units"])


def monthly_bars(ax) -> None:
    sales = frames()["sales"]
    sales.groupby(sales["date"].dt.to_period("M"))["units"].sum().plot.bar(ax=ax)


# ---------------------------------------------------------------------------------------------- the summary


def test_the_summary_counts_the_largest_series_of_each_axes():
    bars = summary(monthly_bars)
    assert bars["marks"] == 6 and bars["axes"][0]["kind"] == "bar"
    ticks = bars["axes"][0]["ticks"]
    assert 1 <= len(ticks) <= 5 and "2024" in ticks[0]  # the labels as drawn (empty ones left out), up to 5
    many = summary(lambda ax: ax.bar([f"label {i}" for i in range(9)], range(9)))
    assert many["axes"][0]["ticks"] == [f"label {i}" for i in range(5)]
    line = summary(lambda ax: (ax.plot(range(30)), ax.plot([1, 2]), ax.axhline(3)))
    assert line["marks"] == 30 and line["axes"][0]["kind"] == "line"
    scatter = summary(lambda ax: ax.scatter(range(12), range(12)))
    assert scatter["marks"] == 12 and scatter["axes"][0]["kind"] == "scatter"
    assert summary(lambda ax: ax.pie([1, 2, 3]))["marks"] == 0  # no series counted: no evidence


def test_the_local_collector_records_a_summary_per_figure():
    figures: list = []
    with collect_images(load_matplotlib=True, figures=figures) as images:
        fig, ax = plt.subplots()
        per_row_bars(ax)
        fig2, ax2 = plt.subplots(1, 2)
        monthly_bars(ax2[0])
    assert len(images) == 2 and [figure["marks"] for figure in figures] == [200, 6]
    assert [len(figure["axes"]) for figure in figures] == [1, 2]


# ---------------------------------------------------------------------------------------------- the check


def test_a_per_day_chart_for_a_monthly_question_is_refused_with_its_count_and_the_way_to_fix_it():
    (said,) = problems("Plot the monthly units sold in `sales` as a bar chart.", summary(per_row_bars))
    assert said.startswith(
        "the chart has 200 bars, but the question asks for one per month: sales['date'] has 6 months"
    )
    assert "Group the rows by month first" in said and "final_answer" not in said
    assert problems("Plot the monthly units sold in `sales` as a bar chart.", summary(monthly_bars)) == []


@pytest.mark.parametrize(
    "question",
    [
        "Plot the units sold per month in `sales`.",
        "Make a chart of the units of each month in `sales`.",
        "Plot the units in `sales` by month.",
    ],
)
def test_the_month_is_asked_in_many_words(question):
    assert problems(question, summary(per_row_bars))


def test_text_dates_are_read_as_dates_and_labels_as_a_person_reads_them():
    assert problems("Plot the monthly units of `orders`.", summary(per_row_bars))[0].startswith(
        "the chart has 200 bars, but the question asks for one per month: orders['order_date'] has 6 months"
    )
    four = summary(lambda ax: ax.bar(["North", "South", "East", "West"], [1, 2, 3, 4]))
    assert problems("Make a bar chart of the units per region in `orders`.", four) == []  # 'NORTH', ' north': 4
    (said,) = problems("Make a bar chart of the units per region in `orders`.", summary(per_row_bars))
    assert said.startswith("the chart has 200 bars, but the question asks for one per region: orders['region'] has 4")
    assert "orders['region'] writes its 4 regions 8 ways" in said and "orders['region'].str.strip().str.title()" in said
    (said,) = problems("Make a bar chart of the units per region in `sales`.", summary(per_row_bars))
    assert said.endswith("Group the rows by region first, add up each group, then plot one value per region")


def test_yearly_weekly_and_quarterly_charts():
    assert problems("Plot the yearly units of `sales`.", summary(monthly_bars))  # 6 bars for 1 year
    assert problems("Plot the quarterly units of `sales`.", summary(monthly_bars))  # 6 bars for 2 quarters
    (said,) = problems("Plot the weekly units of `sales`.", summary(per_row_bars))
    assert "sales['date'] has 26 weeks" in said
    assert problems("Plot the weekly units of `sales`.", summary(monthly_bars)) == []  # fewer: not this check's
    assert problems("Plot the daily units of `sales`.", summary(per_row_bars)) == []  # 200 rows for 182 days


def test_one_line_per_region_names_the_series_not_the_marks():
    lines = summary(
        lambda ax: (
            frames()["sales"]
            .pivot_table(
                index=frames()["sales"]["date"].dt.to_period("M"), columns="region", values="units", aggfunc="sum"
            )
            .plot(ax=ax)
        )
    )
    assert lines["marks"] == 6
    assert problems("Plot the monthly units in `sales` as a line chart with one line per region.", lines) == []


def test_a_monthly_chart_of_one_point_per_line_is_refused():
    """The messy run's "monthly amount … one line per region" drew each region's total: 4 lines of one point."""
    question = "Plot the monthly units in `sales` as a line chart with one line per region."
    totals = frames()["sales"].groupby("region")["units"].sum()
    points = summary(lambda ax: [ax.plot([0], [total], marker="o") for total in totals])
    assert points["marks"] == 1
    found = problems(question, points)
    assert len(found) == 1 and found[0].startswith("every line of the chart has 1 point, but the question asks for")
    assert "sales['date'] has 6 months" in found[0]
    assert problems("Plot the units per region in `sales`.", summary(lambda ax: ax.bar(["North"], [3]))) == []


def test_one_fitting_figure_or_axes_is_enough_and_questions_without_a_chart_or_a_grain_are_not_read():
    assert problems("Plot the monthly units of `sales`.", summary(per_row_bars), summary(monthly_bars)) == []
    assert problems("What were the monthly units of `sales`?", summary(per_row_bars)) == []  # no chart asked
    assert problems("Plot the units of `sales`.", summary(per_row_bars)) == []  # no grain asked
    assert problems("Plot the units per order in `sales`.", summary(per_row_bars)) == []  # no such column


def test_distributions_and_groups_along_time_are_not_read():
    bins = summary(lambda ax: ax.hist(range(100), bins=20))
    assert problems("Plot a histogram of the units per region in `sales`.", bins) == []
    assert problems("Plot the units per region over time in `sales`.", summary(per_row_bars)) == []


# ---------------------------------------------------------------------------------------------- in the loop

QUESTION = "Plot the monthly units sold in `sales` as a bar chart.\n- `sales`: pandas DataFrame"
DAILY = "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.bar(range(len(sales)), sales['units'])"
MONTHLY = (
    "import matplotlib.pyplot as plt\nmonthly = sales.groupby(sales['date'].dt.to_period('M'))['units'].sum()\n"
    "fig, ax = plt.subplots()\nmonthly.plot.bar(ax=ax)\nfinal_answer(monthly)"
)


@pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")  # the local run is the point
@pytest.mark.parametrize(
    "executor_type",
    ["local", pytest.param("isolated", marks=pytest.mark.skipif(sys.platform != "linux", reason="a Linux worker"))],
)
def test_a_per_day_chart_is_refused_and_the_monthly_one_is_taken(executor_type):
    model = ScriptedModel([f"Thought: go.\n```python\n{body}\n```" for body in (DAILY, MONTHLY)])
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"sales": frames()["sales"]},
        executor_type=executor_type,
        additional_authorized_imports=["pandas", "matplotlib", "matplotlib.*"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=3,
    )
    try:
        answer = agent.run(QUESTION)
    finally:
        getattr(agent.python_executor, "close", lambda: None)()
    first, second = [step for step in agent.memory.steps if isinstance(step, ActionStep)]
    assert [figure["marks"] for figure in first.figures] == [200] and first.observations_images
    assert isinstance(first.error, AnswerRefused) and str(first.error).startswith(
        "The chart was refused: the chart has 200 bars, but the question asks for one per month: sales['date'] has "
        "6 months."
    )
    assert "the chart has 200 bars" in "\n".join(message.text for message in model.calls[1])
    assert [figure["marks"] for figure in second.figures] == [6] and second.error is None
    assert second.is_final_answer and list(answer) == list(
        frames()["sales"].groupby(frames()["sales"]["date"].dt.to_period("M"))["units"].sum()
    )


def drawn_then(question: str, replies: list[str]) -> CodeAgent:
    """A small model's agent that drew the monthly chart (no final_answer) and replies ``replies`` after."""
    drawn = MONTHLY.replace("\nfinal_answer(monthly)", "")
    model = ScriptedModel([f"Thought: go.\n```python\n{body}\n```" for body in (drawn, *replies)])
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"sales": frames()["sales"]},
        executor_type="local",
        additional_authorized_imports=["pandas", "matplotlib", "matplotlib.*"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=3,
    )
    agent.answer = agent.run(question)
    return agent


@pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")
def test_a_chart_asked_for_alone_and_taken_ends_the_run_with_the_values_it_plots():
    agent = drawn_then(QUESTION, ["final_answer(0)"])
    steps = agent.memory.action_steps()
    assert len(steps) == 1 and steps[0].is_final_answer and len(agent.model.calls) == 1
    assert steps[0].observations.endswith(
        "The chart draws what the question asks for: nbagent ended the run with final_answer(monthly).\n"
    )
    sales = frames()["sales"]
    assert list(agent.answer) == list(sales.groupby(sales["date"].dt.to_period("M"))["units"].sum())


@pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")
@pytest.mark.parametrize(
    "question",
    [
        QUESTION.replace("bar chart.", "bar chart and say which month sold the most."),
        QUESTION.replace("Plot", "Which month sold the most? Plot"),
    ],
)
def test_a_chart_the_checks_take_for_a_question_asking_more_is_followed_by_the_line_that_ends_the_run(question):
    agent = drawn_then(question, ["final_answer(monthly)"])
    first = agent.memory.action_steps()[0]
    assert (
        first.error is None
        and not first.is_final_answer
        and first.observations.endswith(
            "The chart draws what the question asks for. If it is the chart asked for, end the run now: "
            "final_answer(monthly).\n"
        )
    )
    drawn = MONTHLY.replace("\nfinal_answer(monthly)", "")
    namespace = {"sales": frames()["sales"], "monthly": {"a": 1}}
    assert chart_taken_note(drawn, "How many units were sold in `sales`?", namespace, ["sales"]) == ""  # no chart asked
    assert chart_taken_note("sales.plot()", QUESTION, namespace, ["sales"]).endswith(
        "final_answer with the values it plots.\n"
    )


def test_a_chart_that_draws_nothing_is_never_said_to_draw_what_was_asked(small_agent):
    """The messy run's monthly chart of an empty frame (0 marks) was told it drew what was asked, and answered."""
    empty = "import matplotlib.pyplot as plt\nmonthly = sales.head(0)\nplt.bar(monthly['region'], monthly['units'])"
    agent = small_agent([empty, "final_answer(0)"], {"sales": frames()["sales"]}, max_steps=1, executor_type="local")
    agent.run(QUESTION)
    step = agent.memory.action_steps()[0]
    assert step.error is None and step.figures and step.figures[0]["marks"] == 0
    assert "The chart draws what the question asks for" not in step.observations


REGIONS = "Make a bar chart of the total units per region in `orders`.\n- `orders`: pandas DataFrame"
BY_WRITTEN_REGION = (
    "import matplotlib.pyplot as plt\ntotals = orders.groupby('region')['units'].sum()\n"
    "plt.bar(totals.index, totals.values)\nplt.show()"
)


def spelled_many_ways() -> pd.DataFrame:
    """4 regions written 20 ways ('North', 'north', ' NORTH', …): a chart of them as written has 20 bars."""
    ways = [str.title, str.lower, str.upper, lambda r: f" {r}", lambda r: f"{r.lower()} "]
    regions = [way(region) for region in ("North", "South", "East", "West") for way in ways]
    return pd.DataFrame({"region": regions * 3, "units": range(60)})


@pytest.fixture
def run_regions(small_agent):
    def run(*bodies: str, max_steps: int | None = None, question: str = REGIONS) -> list[ActionStep]:
        agent = small_agent(list(bodies), {"orders": spelled_many_ways()}, max_steps=max_steps)
        agent.run(question)
        return [step for step in agent.memory.steps if isinstance(step, ActionStep)]

    return run


@pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")
def test_a_chart_of_labels_as_written_is_offered_its_code_on_the_labels_cleaned(run_regions):
    """The messy run drew 28 bars for 4 regions, was told how to fix the labels, and replied with nothing."""
    first, second, *_ = run_regions(BY_WRITTEN_REGION, BY_WRITTEN_REGION, "final_answer(totals)")
    said = str(first.error)
    assert said.startswith("The chart was refused: the chart has 20 bars, but the question asks for one per region")
    assert "Fix it: run your code with the data cleaned first:\n```python\norders_clean = " in said
    assert "totals = orders_clean.groupby('region')['units'].sum()" in said
    # sent again as it was, the step runs the offer: one bar per region, and the run ends with it
    assert "orders_clean" in second.code_action and [figure["marks"] for figure in second.figures] == [4]
    assert second.error is None and second.is_final_answer
    assert "nbagent ended the run with final_answer(totals)" in second.observations


@pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")
def test_a_chart_still_doubted_is_never_said_to_draw_what_was_asked(run_regions):
    """Its doubts said twice, the chart runs on untold: the messy run was then told '28 bars' were the chart asked."""
    bodies = [BY_WRITTEN_REGION, BY_WRITTEN_REGION + "\nx = 1", BY_WRITTEN_REGION + "\ny = 2"]  # not repeats
    asking_more = REGIONS.replace("`orders`.", "`orders` and say which region sold the most.")
    steps = run_regions(*bodies, "final_answer(totals)", max_steps=6, question=asking_more)  # the chart is no answer
    # after each refusal nbagent runs the offered code on the cleaned labels (4 bars) without asking the model
    by_model = [step for step in steps if not step.model_output.startswith("(nbagent ran the code it offered")]
    assert [step.code_action for step in by_model[:3]] == bodies
    assert [isinstance(step.error, AnswerRefused) for step in by_model[:3]] == [True, True, False]
    assert "draws what the question asks for" not in (by_model[2].observations or "")


def test_a_chart_across_the_labels_of_a_column_where_months_are_asked_is_refused():
    """The messy run drew one line across the regions for 'the monthly units … one line per region'."""
    question = "Plot the monthly units in `orders` as a line chart with one line per region."
    orders = frames()["orders"]

    def across_regions(ax) -> None:
        totals = orders.assign(region=orders["region"].str.strip().str.title()).groupby("region")["units"].sum()
        ax.plot(totals.index, totals.values)

    def per_month(ax) -> None:
        sales = frames()["sales"]
        sales.groupby([sales["date"].dt.to_period("M"), "region"])["units"].sum().unstack().plot(ax=ax)

    (problem,) = problems(question, summary(across_regions))
    assert problem.startswith("the chart's x axis shows orders['region'] ('East', 'North', …), not time")
    assert "orders['order_date'] has 6 months" in problem
    assert problems(question, summary(per_month)) == []
    assert problems("Make a bar chart of the units per region in `orders`.", summary(across_regions)) == []


@pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")
def test_the_values_a_chart_ends_the_run_with_are_checked_as_the_code_that_drew_it_made_them(small_agent):
    """The messy run's monthly chart was drawn by the offer on cleaned amounts, after a step that totalled the text
    amounts into the same name: the checks read that step's total, doubted it, and the model wrote final_answer."""
    sales = frames()["sales"].assign(amount=lambda f: [f"${units}.00" for units in f["units"]])
    totalled_as_text = "monthly = sales.groupby(sales['date'].dt.to_period('M'))['amount'].sum()\nprint(len(monthly))"
    drawn = (
        "import pandas as pd\nimport matplotlib.pyplot as plt\n"
        "amounts = pd.to_numeric(sales['amount'].str.replace('$', '', regex=False))\n"
        "monthly = amounts.groupby(sales['date'].dt.to_period('M')).sum()\nmonthly.plot.bar()"
    )
    agent = small_agent([totalled_as_text, drawn, "final_answer(0)"], {"sales": sales}, executor_type="local")
    answer = agent.run(QUESTION.replace("units sold", "amount"))
    steps = agent.memory.action_steps()  # the text total, nbagent's offer on cleaned amounts, the chart
    assert len(steps) == 3 and steps[2].is_final_answer and "nbagent ended the run" in steps[2].observations
    assert list(answer) == list(sales.groupby(sales["date"].dt.to_period("M"))["units"].sum().astype(float))


@pytest.mark.parametrize(
    ("question", "alone"),
    [
        ("Plot the monthly units sold in `sales` as a bar chart.", True),
        ("Plot how many clients signed up each year in `clients`, as a bar chart.", True),  # "how many" is the chart
        ("Draw a line chart of the monthly amount, one line per region.", True),
        ("Plot the monthly units as a bar chart and say which month sold the most.", False),
        ("Plot the monthly units. Which month sold the most?", False),
        ("Plot the units per region, then give the largest region's total.", False),
        ("Which month sold the most?", False),
    ],
)
def test_a_question_asks_for_a_chart_alone_when_each_of_its_clauses_asks_for_the_chart(question, alone):
    assert chart_only(question) is alone
