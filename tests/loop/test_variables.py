"""What the model is told about a notebook variable: a schema, never the data."""

import numpy as np
import pandas as pd

from nbagent.loop.aids.data_card import (
    MAX_COLUMNS,
    NOTEBOOK_VARIABLES_HEADING,
    SAMPLE_ROWS,
    describe_value,
    describe_variables,
)


def test_a_dataframe_gives_shape_columns_index_and_a_few_rows():
    frame = pd.DataFrame(
        {"day": pd.date_range("2024-01-01", periods=50), "shop": ["Lyon", "Graz"] * 25, "qty": range(50)}
    ).set_index("day")
    lines = describe_value("orders", frame).splitlines()
    assert lines[0] == "- `orders`: pandas DataFrame, 50 rows × 2 columns"
    assert lines[1].startswith("  columns: shop (") and lines[1].endswith(", qty (int64)")
    assert (
        lines[2] == f"  index: DatetimeIndex 'day' ({frame.index.dtype}), 50 entries"
    )  # [ns] or [us] by pandas version
    assert lines[3] == f"  first {SAMPLE_ROWS} rows:"
    table = lines[4:]
    assert len(table) == 2 + SAMPLE_ROWS  # the header lines (columns, index name) and the rows
    assert "2024-01-05" in table[-1] and "2024-01-06" not in "\n".join(table)


def test_an_empty_frame_has_no_sample_rows():
    text = describe_value("empty", pd.DataFrame({"a": pd.Series([], dtype="int64")}))
    assert text.splitlines() == [
        "- `empty`: pandas DataFrame, 0 rows × 1 columns",
        "  columns: a (int64)",
        "  index: empty RangeIndex",
    ]


def test_a_wide_frame_lists_its_first_columns_and_says_how_many_more():
    wide = pd.DataFrame(np.zeros((3, MAX_COLUMNS + 12)), columns=[f"c{i}" for i in range(MAX_COLUMNS + 12)])
    columns_line = describe_value("wide", wide).splitlines()[1]
    assert f"c{MAX_COLUMNS - 1} (float64), … 12 more" in columns_line
    assert f"c{MAX_COLUMNS} " not in columns_line


def test_long_cells_and_table_lines_are_clipped():
    frame = pd.DataFrame({"note": ["x" * 500] * 3, "other": ["y" * 500] * 3})
    text = describe_value("notes", frame)
    assert "x" * 100 not in text
    assert max(len(line) for line in text.splitlines()) <= 170


def test_a_series_gives_dtype_length_index_and_first_values():
    series = pd.Series([1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5], name="price")
    assert describe_value("prices", series) == (
        "- `prices`: pandas Series 'price', 7 values, dtype float64; index: RangeIndex 0..6; "
        "first values: 1.5, 2.5, 3.5, 4.5, 5.5"
    )


def test_an_array_gives_shape_and_dtype_only():
    assert describe_value("grid", np.zeros((1000, 3), dtype="int32")) == (
        "- `grid`: numpy array, shape (1000, 3), dtype int32"
    )


def test_containers_and_scalars_are_clipped_reprs():
    long_list = list(range(10_000))
    text = describe_value("ids", long_list)
    assert text.startswith("- `ids`: list of 10000 items = [0, 1, 2")
    assert len(text) < 400
    assert describe_value("region", "North") == "- `region`: str = 'North'"


def test_the_heading_tells_the_model_the_variables_exist():
    text = describe_variables({"a": 1, "b": [2]}, NOTEBOOK_VARIABLES_HEADING)
    assert text.splitlines() == ["", NOTEBOOK_VARIABLES_HEADING, "- `a`: int = 1", "- `b`: list of 1 items = [2]"]
    assert "Use them by name" in NOTEBOOK_VARIABLES_HEADING
