"""What the model is told about a notebook variable: a schema, never the data."""

import numpy as np
import pandas as pd

from nbagent.loop.aids import data_card
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


# ------------------------------------------------------------------------------------------ what to check first


def messy_orders(copies: int = 1) -> pd.DataFrame:
    """12 orders as people type them (the last two rows repeat earlier ones), `copies` times over."""
    rows = [
        (5001, "2024-03-05", "North", "$1,234.50"),
        (5002, "03/07/2024", "north ", "-$18.46"),
        (5003, "March 9, 2024", " NORTH", ""),
        (5004, "2024-03-10", "South", None),
        (5005, "", "South", np.nan),
        (5006, "03/12/2024", "North", "$5.00"),
        (5007, "2024-03-12", "South", "$7.25"),
        (5008, "2024-03-13", "North", "$1,100.00"),
        (5009, None, "South", "$3.10"),
        (5010, "2024-03-15", "South", "$2.00"),
    ]
    frame = pd.DataFrame(rows + rows[:2], columns=["order_id", "day", "region", "amount"])
    return pd.concat([frame] * copies, ignore_index=True) if copies > 1 else frame


def notes_of(text: str) -> list[str]:
    """The card's lines between the index and the sample rows."""
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("  index:")) + 1
    end = next((n for n, line in enumerate(lines) if line.startswith("  first ")), len(lines))
    return lines[start:end]


def test_a_messy_frame_gets_a_line_per_kind_of_mess_with_its_raw_values():
    orders = messy_orders()
    notes = notes_of(describe_value("orders", orders))
    assert notes == [
        "  day: text holding dates in mixed formats ('2024-03-05', '03/07/2024', 'March 9, 2024')",
        "  region: 2 labels written 4 ways ('North', 'north ', ' NORTH' are one label)",
        "  amount: text holding numbers ('$1,234.50', '-$18.46', '$5.00')",
        "  missing: day 2 (1 of them ''), amount 3 (1 of them ''); isna() misses the ''",
        "  duplicates: 2 rows repeat an earlier row; orders.drop_duplicates() keeps one",
    ]


def test_the_notes_name_no_cleaning_helper():
    """Measured: naming nbagent.data's helpers in the card did not help the default model (README)."""
    text = describe_variables({"orders": messy_orders()})
    assert not any(name in text for name in ("to_number", "to_dates", "clean_labels", "is_missing"))


def test_numbers_that_are_not_all_numbers_say_which_are_not():
    frame = pd.DataFrame({"price": ["$1.50", "$2.00", "n/a"] + ["$3.25"] * 27})
    (note,) = notes_of(describe_value("items", frame))
    assert note == "  price: text holding numbers ('$1.50', '$2.00', '$3.25'), 1 not numbers ('n/a')"


def test_a_clean_frame_gets_no_notes():
    frame = pd.DataFrame(
        {
            "code": ["001", "002", "017"] * 10,  # codes, not numbers
            "day": ["2024-03-05", "2024-03-06", "2024-03-07"] * 10,  # dates in one format
            "region": ["North", "South", "East"] * 10,
            "name": [f"client {i}" for i in range(30)],
            "units": range(30),
        }
    )
    lines = describe_value("tidy", frame).splitlines()
    assert lines[3] == f"  first {SAMPLE_ROWS} rows:"


def test_the_card_never_changes_the_data():
    orders = messy_orders()
    before = orders.copy(deep=True)
    cells = [orders.iat[i, 3] for i in range(len(orders))]
    describe_variables({"orders": orders, "other": orders.assign(order_id=orders["order_id"].astype(str))})
    pd.testing.assert_frame_equal(orders, before)
    assert all(a is b for a, b in zip(cells, (orders.iat[i, 3] for i in range(len(orders)))))


def test_awkward_frames_are_described_without_an_error():
    same_names = pd.DataFrame([["a ", "1"], ["A", "2"]] * 5, columns=["x", "x"])
    assert describe_value("twice", same_names).startswith("- `twice`: pandas DataFrame, 10 rows × 2 columns")
    lists = pd.DataFrame({"tags": [["a"], ["b"], None, ["a"]], "n": [1, 1, 2, 1]})
    notes = notes_of(describe_value("tagged", lists))
    assert notes == ["  missing: tags 1"]  # no duplicate count over unhashable cells
    empty = pd.DataFrame({"amount": pd.Series([], dtype=object)})
    assert describe_value("empty", empty).splitlines()[-1] == "  index: empty RangeIndex"


def test_a_big_frame_is_checked_on_a_bounded_sample():
    big = messy_orders(copies=10_000)  # 120,000 rows
    text = describe_value("big", big)
    assert f"missing (in {data_card.CHECKED_ROWS:,} of the 120,000 rows, evenly spaced): day " in text
    assert "amount: text holding numbers" in text
    assert len(data_card._spread(len(big), data_card.CHECKED_ROWS)) <= data_card.CHECKED_ROWS


def test_a_join_key_that_is_a_number_in_one_frame_and_text_in_another_is_said_once():
    orders = pd.DataFrame({"client_id": [17, 18], "amount": [1.0, 2.0]})
    clients = pd.DataFrame({"client_id": ["017", "018"], "name": ["Ada", "Bo"]})
    lines = describe_variables({"orders": orders, "clients": clients}).splitlines()
    assert lines[-1] == (
        "- `client_id` is a number in `orders` (int64) but text in `clients` ('017', '018'): "
        "compare or merge them as clients['client_id'].astype(int)"
    )
    codes = describe_variables({"orders": orders, "codes": clients.assign(client_id=["A1", "B2"])})
    assert codes.splitlines()[-1].endswith("text in `codes` ('A1', 'B2'): compare or merge them as one type")
    same = describe_variables({"orders": orders, "more": orders.assign(client_id=[1.5, 2.5])})
    assert "compare or merge" not in same
