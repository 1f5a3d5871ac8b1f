"""A hint after a failed step names the mistake, not its symptom: a row label missed in the index is not a
missing column, a misspelled method is not a column, a Series grouped by a column name needs its table, a
merge key one side lacks has a matching column on that side, text compared with a number holds text.

Every failure here comes from running the failing code in the executor the agent uses; no error text is
pasted, so a new pandas wording shows up as a failing test.
"""

from __future__ import annotations

import datetime
import warnings

import numpy as np
import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.hints import execution_hint
from nbagent.loop.prompting import SMALL
from nbagent.sandbox import ExecutionError, LocalPythonExecutor


def data() -> dict:
    """Small frames with the shapes of the mistakes: a date index, a number index, codes held as text."""
    days = pd.to_datetime(["2024-04-17", "2024-04-18", "2024-04-19", "2024-04-22"])
    sales = pd.DataFrame(
        {"product": ["a", "b", "a", "c"], "units": [1, 2, 3, 4], "price": [2.0, 3.0, 4.0, 5.0], "rep": [1, 2, 3, 1]}
    )
    return {
        "daily": pd.DataFrame({"units": [5, 6, 7, 8]}, index=pd.Index(days, name="day")),
        "sales": sales,
        "reps": pd.DataFrame({"rep_id": [1, 2, 3], "name": ["Ann", "Bob", "Cy"]}),
        "coded_reps": pd.DataFrame({"rep_id": ["001", "002", "003"], "name": ["Ann", "Bob", "Cy"]}),
        "stores": pd.DataFrame({"store_id": ["017", "018", "019"], "city": ["Graz", "Lyon", "Porto"]}),
        "named_stores": pd.DataFrame({"store_id": ["S17", "S18", "S19"], "city": ["Graz", "Lyon", "Porto"]}),
        "orders": pd.DataFrame({"store_id": [17, 18, 19, 17], "total": [1.5, 2.5, 3.5, 4.5]}),
        "by_store": pd.DataFrame({"total": [1.5, 2.5, 3.5]}, index=pd.Index([17, 18, 19], name="store_id")),
        "pd": pd,
        "np": np,
        "datetime": datetime,
    }


@pytest.fixture(scope="module")
def hint_for():
    """The hint after running `code` (which must fail) in a real executor over `data()`."""
    namespace = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the local executor's notice
        executor = LocalPythonExecutor(
            additional_authorized_imports=["pandas", "numpy", "datetime"], namespace=namespace
        )
    executor.send_tools({})

    def hint(code: str) -> str:
        with pytest.raises(ExecutionError) as failure:
            executor(code)
        return execution_hint(failure.value, code, namespace, "task")

    return hint


# ---------------------------------------------------------------------------------------------- row labels


def test_a_date_missed_in_a_date_index_is_a_row_label_there_as_a_timestamp(hint_for):
    hint = hint_for('x = daily.loc[datetime.date(2024, 4, 19), "units"]')
    assert "datetime.date(2024, 4, 19) is not a row label of `daily`" in hint
    assert "Its index 'day' holds dates" in hint and "pd.Timestamp('2024-04-17')" in hint
    assert "The label is there as pd.Timestamp('2024-04-19') (a Timestamp, not a datetime.date)" in hint
    assert "no column" not in hint and "datetime.date(2024, 4, 19)'" not in hint


def test_a_label_missing_in_every_type_gets_the_index_and_how_to_find_a_row_by_a_column(hint_for):
    hint = hint_for('x = daily.loc["2024-04-21"]')
    assert "'2024-04-21' is not a row label of `daily`" in hint
    assert "from pd.Timestamp('2024-04-17') to pd.Timestamp('2024-04-22')" in hint
    assert "To find a row by a column's value, write daily[daily['column'] == value]" in hint
    assert "no column" not in hint


def test_text_looked_up_in_a_number_index_is_there_as_the_number(hint_for):
    hint = hint_for('x = by_store.loc["17", "total"]')
    assert "'17' is not a row label of `by_store`" in hint and "holds numbers (int64)" in hint
    assert "The label is there as 17 (a number, not text): look it up as 17" in hint


def test_a_value_of_a_column_looked_up_as_a_row_label_gets_that_column(hint_for):
    hint = hint_for('x = sales.loc["b", "units"]')
    assert "'b' is not a row label of `sales`" in hint and "rows are labelled 0 to 3 (row numbers)" in hint
    assert "The value is in the column 'product': write sales[sales['product'] == 'b']" in hint


def test_a_missing_column_after_a_found_row_is_still_a_missing_column(hint_for):
    hint = hint_for('x = sales.loc[0, "revenue"]')
    assert "There is no column 'revenue' in `sales`" in hint and "row label" not in hint


# ---------------------------------------------------------------------------------------------- methods


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("x = sales.summ()", "DataFrame"),
        ('x = sales["units"].summ()', "Series"),
        ('x = sales.groupby("product").summ()', "DataFrameGroupBy"),
        ('x = sales.groupby("product")["units"].summ()', "SeriesGroupBy"),
    ],
)
def test_a_misspelled_method_gets_the_close_method_names_not_a_missing_column(hint_for, code, kind):
    hint = hint_for(code)
    assert f"'summ' is not a method of a {kind}; did you mean .sum()" in hint
    assert "no column" not in hint and "has the columns" not in hint


def test_an_attribute_not_called_is_a_column_unless_a_method_is_close(hint_for):
    assert "did you mean .sum()" in hint_for("x = sales.summ")
    hint = hint_for("x = sales.revenue")
    assert "There is no column 'revenue' in `sales`" in hint and "method" not in hint
    hint = hint_for("x = sales.prodcut")  # a misspelled column: the close column, not a method
    assert "(did you mean 'product'?)" in hint


# ---------------------------------------------------------------------------------------------- grouping


def test_a_frames_column_grouped_by_a_column_name_gets_the_frame_level_line(hint_for):
    hint = hint_for('x = sales["units"].groupby("product").sum()')
    assert "`sales[\"units\"]` is one column (a Series), so it has no column 'product'" in hint
    assert 'sales.groupby("product")["units"].sum()' in hint
    assert "There is no column" not in hint
    assert 'sales.groupby("product")["units"].mean()' in hint_for('x = sales["units"].groupby("product").mean()')
    hint = hint_for('x = sales[sales["price"] > 2]["units"].groupby("product").sum()')  # a column of some rows
    assert 'sales[sales["price"] > 2].groupby("product")["units"].sum()' in hint


@pytest.mark.parametrize(
    "code, fixed",
    [
        (
            'units = sales["units"]\nx = units.groupby(sales["product"])["units"].sum()',
            'x = units.groupby(sales["product"]).sum()',
        ),
        (
            'x = sales["units"].groupby(sales["product"])["units"].mean()',
            'sales["units"].groupby(sales["product"]).mean()',
        ),
    ],
)
def test_a_column_picked_after_a_series_groupby_is_said_to_be_the_series_itself(hint_for, code, fixed):
    hint = hint_for(code)
    assert "is already one column (a Series), so its groupby has no column 'units' to pick" in hint, hint
    assert hint.endswith(fixed) and "has the columns" not in hint


def test_a_series_expression_grouped_by_a_column_name_is_grouped_by_the_tables_column(hint_for):
    hint = hint_for('x = (sales["units"] * sales["price"]).groupby("product").sum()')
    assert "is a Series, not a table, so it has no column 'product'" in hint
    assert '(sales["units"] * sales["price"]).groupby(sales[\'product\']).sum()' in hint


# ---------------------------------------------------------------------------------------------- merges


@pytest.mark.parametrize("key", ["rep", "name"])  # the model alternated between the two
def test_a_merge_key_one_side_lacks_gets_the_matching_columns_of_each_side(hint_for, key):
    hint = hint_for(f'x = sales.merge(reps, on="{key}")')
    lacking = "reps" if key == "rep" else "sales"
    assert f"`{lacking}` has no column '{key}' to merge on" in hint
    assert "`sales`.rep (int64) and `reps`.rep_id (int64): similar names, 3 of 3 values shared" in hint
    assert "Write sales.merge(reps, left_on='rep', right_on='rep_id')." in hint


def test_a_merge_key_matching_in_another_type_says_how_to_convert(hint_for):
    hint = hint_for('x = pd.merge(sales, coded_reps, on="rep", how="left")')
    assert "`sales`.rep (int64) and `coded_reps`.rep_id (str): similar names, 3 of 3 values shared" in hint
    assert "Write pd.merge(sales, coded_reps, left_on='rep', right_on='rep_id', how=\"left\")." in hint
    assert (
        "convert the text, into a new frame (your notebook's `coded_reps` stays as it is): "
        "coded_reps.assign(rep_id=coded_reps['rep_id'].astype(int))"
    ) in hint


def test_merge_keys_of_two_types_say_which_types_and_which_side_to_convert(hint_for):
    hint = hint_for('x = orders.merge(stores, on="store_id")')
    assert "`orders['store_id']` is int64 (17, 18, 19) and `stores['store_id']` is str ('017', '018', '019')" in hint
    assert "stores.assign(store_id=stores['store_id'].astype(int))" in hint and "astype(str)" not in hint
    hint = hint_for('x = orders.merge(named_stores, on="store_id")')  # text that is not numbers
    assert "convert the numbers with orders['store_id'].astype(str)" in hint and "astype(int)" not in hint


def test_a_merge_on_a_key_written_as_text_is_offered_its_code_on_the_keys_read_as_numbers(small_agent):
    """The messy runs converted the key in the notebook's own frame (`clients['client_id'] = ….astype(int)`), two
    model calls after the merge failed; the offer runs in the model's place, the notebook's frame untouched."""
    frames = {
        "orders": pd.DataFrame({"client_id": [1, 2, 2], "amount": [10.0, 20.0, 5.0]}),
        "clients": pd.DataFrame({"client_id": ["001", "002"], "segment": ["Retail", "Business"]}),
    }
    merged = "merged = orders.merge(clients, on='client_id')\nfinal_answer(merged.groupby('segment')['amount'].sum().to_dict())"
    agent = small_agent([merged, "final_answer({})"], frames, max_steps=2)
    question = "What was the total order amount of each client segment? Join `orders` with `clients` on client_id."
    answer = agent.run(question + "".join(f"\n- `{name}`: pandas DataFrame" for name in frames))
    assert answer == {"Business": 25.0, "Retail": 10.0}
    first, second = agent.memory.action_steps()
    assert "Or send your code with the data cleaned first" in str(first.error)
    assert second.token_usage.output_tokens == 0 and second.error is None  # the offer ran in the model's place
    assert frames["clients"]["client_id"].tolist() == ["001", "002"]


# ---------------------------------------------------------------------------------------------- comparisons


def test_text_compared_with_a_number_says_the_column_holds_text(hint_for):
    hint = hint_for('x = stores[stores["store_id"] > 17]')
    assert "`stores[\"store_id\"]` holds text ('017', '018', '019'), the code compares it with the number 17" in hint
    assert 'stores["store_id"].astype(int) > 17' in hint


def test_a_filter_that_found_nothing_because_of_the_types_says_so(hint_for):
    hint = hint_for('row = stores[stores["store_id"] == 17]\nx = row["city"].iloc[0]')
    assert hint.startswith('Hint: nothing was selected: `stores["store_id"]` holds text')
    hint = hint_for('x = orders[orders["total"] > "2"]')
    assert "holds numbers (float64), the code compares it with the text '2'" in hint
    assert 'write the number without quotes: orders["total"] > 2' in hint


# ---------------------------------------------------------------------------------------------- through the agent


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


@pytest.mark.parametrize("profile", [None, SMALL])
def test_the_hint_reaches_the_models_next_prompt(profile):
    failing = 'x = sales["units"].groupby("product").sum()'
    fixed = 'x = sales.groupby("product")["units"].sum()\nfinal_answer(x.to_dict())'
    model = ScriptedModel([code(failing), code(fixed)])
    if profile:
        model.prompt_profile = profile
    agent = CodeAgent(tools=[], model=model, namespace=data(), verbosity_level=-1, show_widget=False, max_steps=3)
    assert agent.run("Units per product in `sales`?") == {"a": 4, "b": 2, "c": 4}
    first = next(step for step in agent.memory.steps if isinstance(step, ActionStep))
    assert 'sales.groupby("product")["units"].sum()' in str(first.error)
    assert 'Group the table, then pick the column: sales.groupby("product")["units"].sum()' in "\n".join(
        message.text for message in model.calls[1]
    )


# ---------------------------------------------------------------------------------------------- another table's column


def test_a_column_of_another_table_is_said_with_the_merge_that_brings_it(hint_for):
    hint = hint_for('x = orders[orders["city"] == "Graz"]')
    assert "'city' is a column of `stores`, not of `orders`: bring it over by the column both have" in hint
    assert "orders.merge(stores[['store_id', 'city']], on='store_id')" in hint
    assert "did you mean" not in hint


def hint_after_failing(code: str, namespace: dict) -> str:
    """The hint for `code`, which must fail, run by the local executor on `namespace`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the local executor's notice
        executor = LocalPythonExecutor(additional_authorized_imports=["pandas"], namespace=namespace)
    executor.send_tools({})
    with pytest.raises(ExecutionError) as failure:
        executor(code)
    return execution_hint(failure.value, code, namespace, "task")


def test_the_merge_that_brings_a_column_drops_repeated_pairs_first():
    """The messy run merged `orders[['order_id', 'region']]` into `refunds`: orders repeats 16 rows, and the 150
    refunds became 159."""
    orders = pd.DataFrame({"order_id": [1, 2, 2], "region": ["N", "S", "S"]})
    namespace = {"orders": orders, "refunds": pd.DataFrame({"order_id": [1, 2], "amount": [5.0, 6.0]})}
    code = 'x = refunds[refunds["region"] == "S"]'
    hint = hint_after_failing(code, namespace)
    assert "refunds.merge(orders[['order_id', 'region']].drop_duplicates(), on='order_id')" in hint
    assert "`orders` repeats 1 of those pairs" in hint


def test_a_join_made_earlier_that_holds_the_column_is_named_instead_of_a_merge(hint_for):
    """The messy run merged `orders` with `clients` into `merged`, then grouped `orders` by 'segment'."""
    hint_for('merged = orders.merge(stores.assign(store_id=stores["store_id"].astype(int)), on="store_id")\n1/0')
    hint = hint_for('x = orders.groupby("city")["total"].sum()')
    assert "'city' is a column of `merged`, which also has every column of `orders`: use `merged`." in hint
    assert ".merge(" not in hint


def test_a_series_the_code_computed_looked_up_as_a_column_is_named_as_the_variable(hint_for):
    """The clean run computed `revenue`, then looked up sales["revenue"] for eight steps."""
    hint = hint_for('revenue = sales["units"] * sales["price"]\nbest = sales[sales["revenue"] == revenue.max()]')
    assert "`revenue` is your variable (a Series with one value per row of `sales`), not a column of `sales`" in hint
    assert "did you mean" not in hint


def test_a_column_of_another_table_without_a_shared_column_is_named(hint_for):
    hint = hint_for('x = sales["name"]')
    assert "'name' is a column of `reps`, not of `sales`." in hint


def test_a_column_a_merge_suffixed_is_named_with_its_suffixes():
    """The clean run's merged frame had date_x and date_y; told to merge 'date' over again, it ran out of steps."""
    sales = pd.DataFrame({"order_id": [1, 2], "date": pd.to_datetime(["2024-05-01", "2024-06-01"]), "units": [1, 2]})
    merged = sales.merge(sales[["order_id", "date"]], on="order_id")
    namespace = {"sales": sales, "merged": merged}
    code = 'x = merged.groupby("date")["units"].sum()'
    hint = hint_after_failing(code, namespace)
    assert "'date' is in `merged` twice, as 'date_x' and 'date_y'" in hint
    assert "Use merged['date_x'] (the left frame's)" in hint and ".merge(" not in hint
