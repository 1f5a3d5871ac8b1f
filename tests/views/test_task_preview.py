"""A DataFrame the task describes shows its first rows as a small table in the task panel, not run-together text.

The task text is made by the real describer (nbagent/loop/variables.py), so these tests read back what the model
reads; a layout that cannot be read back surely shows as its aligned text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bs4 import BeautifulSoup

from nbagent import AgentMemory, TaskStep
from nbagent.loop.aids.data_card import NOTEBOOK_VARIABLES_HEADING, describe_variables
from nbagent.record import RunStart
from nbagent.views.html import memory_to_html
from nbagent.views.state import RunStateBuilder, memory_to_state
from nbagent.views.task_preview import task_parts


def task_with(**frames) -> str:
    return "Which region sold most?" + describe_variables(frames, NOTEBOOK_VARIABLES_HEADING)


def tables(task: str) -> list[dict]:
    return [part["table"] for part in task_parts(task) if part["kind"] == "table"]


def test_a_frames_first_rows_become_a_table_and_the_rest_stays_markdown():
    sales = pd.DataFrame({"region": ["North America", "South"], "unit price": [1.5, np.nan], "units": [3, 4]})
    task = task_with(sales=sales, limit=3)
    parts = task_parts(task)
    assert [part["kind"] for part in parts] == ["markdown", "table", "markdown"]
    assert parts[0]["text"].startswith("Which region sold most?") and parts[0]["text"].endswith("  first 2 rows:")
    assert parts[2]["text"] == "- `limit`: int = 3"
    assert parts[1]["table"] == {
        "index_name": None,
        "columns": ["region", "unit price", "units"],
        "index": ["0", "1"],
        "rows": [["North America", "1.5", "3"], ["South", "NaN", "4"]],
        "more_columns": False,
    }


@pytest.mark.parametrize(
    ("frame", "index", "first_row", "index_name"),
    [
        (pd.DataFrame({"v": [1, 2]}, index=pd.Index(["x y", "zz"], name="key")), ["x y", "zz"], ["1"], "key"),
        (
            pd.DataFrame({"v": [1, 2]}, index=pd.to_datetime(["2024-01-01 10:00", "2024-01-01 11:00"])),
            ["2024-01-01 10:00:00", "2024-01-01 11:00:00"],
            ["1"],
            None,
        ),
        (pd.DataFrame({"v": range(200)}).iloc[97:], ["97", "98", "99", "100", "101"], ["97"], None),
        (
            pd.DataFrame({"when": pd.to_datetime(["2024-01-01 10:00", "2024-02-01 00:00"]), "ok": [True, False]}),
            ["0", "1"],
            ["2024-01-01 10:00:00", "True"],
            None,
        ),
        (pd.DataFrame({0: [1], "a, b (x)": ["y"]}), ["0"], ["1", "y"], None),
    ],
)
def test_indexes_dates_and_odd_column_names_are_read_back(frame, index, first_row, index_name):
    (table,) = tables(task_with(frame=frame))
    assert table["index"] == index and table["rows"][0] == first_row and table["index_name"] == index_name
    assert table["columns"] == [str(column) for column in frame.columns]


def test_a_wide_frame_shows_the_columns_that_fit_and_says_there_are_more():
    wide = pd.DataFrame(np.arange(80).reshape(2, 40), columns=[f"column_{i}" for i in range(40)])
    (table,) = tables(task_with(wide=wide))
    assert table["more_columns"] and 5 < len(table["columns"]) < 30
    assert table["columns"][:2] == ["column_0", "column_1"] and table["rows"][1][:2] == ["40", "41"]


def test_a_layout_that_cannot_be_read_back_shows_as_its_aligned_text():
    nested = pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")]))
    parts = task_parts(task_with(nested=nested))
    assert [part["kind"] for part in parts] == ["markdown", "text"]
    assert parts[1]["text"].splitlines()[-1].split() == ["0", "1", "2"]


def test_a_task_without_a_preview_has_no_parts():
    assert task_parts("What is 2 + 2?") == []
    assert task_parts(task_with(empty=pd.DataFrame({"x": []}))) == []  # no rows, no preview
    assert task_parts("  first 2 rows:\n    a  b\n    1  2") == []  # the person's own words are theirs


def test_the_widget_state_and_the_static_page_show_the_table():
    task = task_with(sales=pd.DataFrame({"region": ["North", "South"], "units": [3, 4]}))
    memory = AgentMemory("system")
    memory.steps = [TaskStep(task=task)]
    live = RunStateBuilder()
    live.apply(RunStart(task=task, agent_name="a"))
    assert live.run["steps"][0]["parts"] == memory_to_state(memory)[0]["steps"][0]["parts"] != []
    page = BeautifulSoup(memory_to_html(memory), "html.parser")
    rows = [[cell.text for cell in row.select("th, td")] for row in page.select(".nba-task .nba-preview tr")]
    assert rows == [["", "region", "units"], ["0", "North", "3"], ["1", "South", "4"]]
    assert "first 2 rows:" in page.select_one(".nba-task .nba-md").text


@pytest.mark.parametrize(("rows", "shown"), [(6, 6), (10, 10), (11, 5)])
def test_a_small_frame_shows_whole_in_the_task_box_a_larger_one_its_first_five(rows, shown):
    frame = pd.DataFrame({"region": [f"r{i}" for i in range(rows)], "units": range(rows)})
    (table,) = tables(task_with(frame=frame))
    assert table["index"] == [str(i) for i in range(shown)]  # issue 33: a 6-row frame showed 5 rows
    assert table["rows"][-1] == [f"r{shown - 1}", str(shown - 1)]
