"""Realistic data questions through the real `%%agent` magic: does the default model answer them?

    python benchmarks/data_questions.py                    # both sets, the offline default model
    python benchmarks/data_questions.py --set messy        # one set: clean or messy (default: all)
    python benchmarks/data_questions.py --only 7           # clean question 7 (several: --only 3,7,12)
    python benchmarks/data_questions.py --only messy:3,7   # messy questions 3 and 7 (both: --only 2,messy:3)
    python benchmarks/data_questions.py --model openai:gpt-4o-mini
    python benchmarks/data_questions.py --scripted         # a ScriptedModel writes the reference code (checks the harness)
    python benchmarks/data_questions.py --json /tmp/before.json   # per-question results, to compare runs

Two sets of questions. **clean** (24): three tidy DataFrames built here from a fixed seed: `sales` (200
orders, Jan-Jun 2024: date, region, product, customer_id, units, unit_price), `customers` (40 rows:
customer_id, name, segment, signup_date) and `targets` (monthly revenue targets per region). **messy** (20):
`orders`, `clients` and `refunds` from benchmarks/messy_data.py, as people's notebooks hold data: money as text
('$1,234.50', '-$18.46'), dates as text in mixed formats, labels in any case and spacing ('North', ' NORTH'),
missing values as None, NaN and '' in one column, exact duplicate rows, and join keys of different types (ints
in one frame, '017' in the other). Messy questions are asked as a person would, without saying how to clean;
four ask for a chart. Each question is answered once by pandas (the careful analyst's answer) and once by an
agent, asked the way a person would in a notebook:

    %%agent --quiet -o answer --imports pandas,numpy
    What was the total revenue (units × unit_price) by region in `sales`? ...

in an IPython shell with `%load_ext nbagent`, the frames in `user_ns` (with `pd` and `np`, as in the
notebook that made them; chart questions also allow matplotlib). Before each question the namespace is put
back as it was (fresh copies of the frames, the agent's own variables removed). Answers are compared by a
tolerant checker (numbers within 0.5 % or a rounding step, strings without case and quotes, dicts/Series/lists
element by element, a dict's extra key for missing values such as 'nan' or 'Unknown' ignored). A chart
question is answered by a figure: at least one image on the run's steps and, where a step carries figure
summaries (`step.figures`, each with the `marks` of its largest series), the last figure's marks equal the
question's group count ("image only" where no summary exists). A run that changed one of the user's frames
(edited in place, or the name bound to another object) is reported in a column of its own.

Prints a table per set, then per set: the score, the median seconds per question, the score per kind of
question and the failure kinds (wrong answer, error, max steps, parse error, timeout, no figure, wrong chart);
a one-line summary with both sets' scores last.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pandas as pd

MAGIC_OPTIONS = "--quiet -o answer --imports pandas,numpy"
CHART_IMPORTS = "pandas,numpy,matplotlib"  # a person asking for a plot lets the agent import matplotlib
NOTEBOOK_IMPORTS = "import numpy as np\nimport pandas as pd"
MODEL_VARIABLE = "_data_questions_model"  # a private name: never described to the model
REGIONS = ["North", "South", "East", "West"]
PRODUCTS = {"Laptop": 950.0, "Monitor": 240.0, "Keyboard": 45.0, "Mouse": 25.0, "Headset": 80.0}
SEGMENTS = ["Consumer", "Business", "Enterprise"]


# ---------------------------------------------------------------------------------------------- data


def _load_messy_data() -> Any:
    """benchmarks/messy_data.py by its path (the benchmarks folder is no package), once."""
    name = "nbagent_benchmarks_messy_data"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("messy_data.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def make_messy_frames(seed: int = 11) -> dict[str, pd.DataFrame]:
    """`orders`, `clients` and `refunds` as people's notebooks hold them (benchmarks/messy_data.py)."""
    return _load_messy_data().make_messy_frames(seed)


def make_frames(seed: int = 7) -> dict[str, pd.DataFrame]:
    """`sales`, `customers` and `targets`: realistic, reproducible, every day of Jan-Jun 2024 has a sale."""
    rng = np.random.default_rng(seed)
    days = pd.date_range("2024-01-01", "2024-06-30", freq="D")
    dates = np.sort(np.concatenate([days.values, rng.choice(days.values, 200 - len(days))]))
    products = rng.choice(list(PRODUCTS), len(dates), p=[0.15, 0.2, 0.25, 0.25, 0.15])
    list_price = np.array([PRODUCTS[p] for p in products])
    sales = pd.DataFrame(
        {
            "order_id": np.arange(1001, 1001 + len(dates)),
            "date": pd.to_datetime(dates),
            "region": rng.choice(REGIONS, len(dates), p=[0.3, 0.2, 0.25, 0.25]),
            "product": products,
            "customer_id": rng.integers(1, 41, len(dates)),
            "units": rng.integers(1, 9, len(dates)),
            "unit_price": np.round(list_price * rng.uniform(0.85, 1.1, len(dates)), 2),
        }
    )
    first = ["Ada", "Bo", "Cy", "Dee", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jo"]
    last = ["Stone", "Marsh", "Reyes", "Okafor"]
    customers = pd.DataFrame(
        {
            "customer_id": np.arange(1, 41),
            "name": [f"{first[i % 10]} {last[i // 10]}" for i in range(40)],
            "segment": rng.choice(SEGMENTS, 40, p=[0.5, 0.3, 0.2]),
            "signup_date": pd.to_datetime("2022-01-01") + pd.to_timedelta(rng.integers(0, 800, 40), unit="D"),
        }
    )
    months = pd.period_range("2024-01", "2024-06", freq="M").astype(str)
    targets = pd.DataFrame(
        [
            {"region": region, "month": month, "target": float(rng.integers(8, 30) * 1000)}
            for region in REGIONS
            for month in months
        ]
    )
    return {"sales": sales, "customers": customers, "targets": targets}


def _revenue(sales: pd.DataFrame) -> pd.Series:
    return sales["units"] * sales["unit_price"]


def _month_revenue(sales: pd.DataFrame) -> pd.Series:
    return _revenue(sales).groupby(sales["date"].dt.to_period("M").astype(str)).sum()


# ---------------------------------------------------------------------------------------------- questions


@dataclass
class Question:
    """A question as a person would type it in a `%%agent` cell, and the pandas code that answers it.

    `code` is the reference solution: it runs with the frames as variables and sets `result`.
    The expected answer is what it computes; `--scripted` has a ScriptedModel write it as the agent.
    """

    text: str
    code: str
    kind: str  # what the question exercises (group-by, join, ...), shown in the table
    month: bool = False  # the answer is a month in any spelling ('2024-05', 'May 2024'), not one format
    chart: int = 0  # a chart question: its chart's bars or points per series (the answer is the figure)
    either_sign: bool = False  # money given back: 1234.5 and -1234.5 are the same answer

    @property
    def imports(self) -> str:
        return CHART_IMPORTS if self.chart else "pandas,numpy"

    def expected(self, frames: dict[str, pd.DataFrame]) -> Any:
        if self.chart:  # not drawn here: a figure open in this process would reach the agent's worker
            return Chart(self.chart)
        namespace: dict[str, Any] = {"pd": pd, "np": np, **{k: v.copy() for k, v in frames.items()}}
        exec(self.code, namespace)
        return pd.Period(namespace["result"], freq="M") if self.month else namespace["result"]

    def check(self, got: Any, expected: Any) -> bool:
        """Is `got` the expected answer? (A chart question's figure is checked from the run's steps.)"""
        if check_answer(got, expected):
            return True
        number = _as_float(got) if self.either_sign else None
        return number is not None and check_answer(-number, expected)


@dataclass(frozen=True)
class Chart:
    """The expected answer of a chart question: a figure whose largest series has `marks` bars or points."""

    marks: int

    def __repr__(self) -> str:
        return f"a chart of {self.marks}"


QUESTIONS: list[Question] = [
    Question(
        "What is the total revenue in `sales` (revenue = units × unit_price)? Round to 2 decimals.",
        "result = round(float((sales['units'] * sales['unit_price']).sum()), 2)",
        "sum",
    ),
    Question(
        "What was the total revenue (units × unit_price) of each region in `sales`? "
        "Give a dict from region to revenue, rounded to 2 decimals.",
        "result = (sales['units'] * sales['unit_price']).groupby(sales['region']).sum().round(2).to_dict()",
        "group-by",
    ),
    Question(
        "Which region in `sales` brought in the most revenue (units × unit_price)? Answer with the region name.",
        "result = (sales['units'] * sales['unit_price']).groupby(sales['region']).sum().idxmax()",
        "group-by, arg-max",
    ),
    Question(
        "What are the top 3 products in `sales` by number of units sold? Give a list of product names, best first.",
        "result = sales.groupby('product')['units'].sum().nlargest(3).index.tolist()",
        "top-k",
    ),
    Question(
        "How many orders in `sales` were placed in March 2024?",
        "result = int((sales['date'].dt.strftime('%Y-%m') == '2024-03').sum())",
        "date filter",
    ),
    Question(
        "What was the revenue (units × unit_price) of the second quarter of 2024 (April to June) in `sales`? "
        "Round to 2 decimals.",
        "q2 = sales[(sales['date'] >= '2024-04-01') & (sales['date'] <= '2024-06-30')]\n"
        "result = round(float((q2['units'] * q2['unit_price']).sum()), 2)",
        "date range",
    ),
    Question(
        "By how many percent did monthly revenue (units × unit_price) in `sales` change from May 2024 to "
        "June 2024? Round to 1 decimal (negative if it fell).",
        "rev = (sales['units'] * sales['unit_price']).groupby(sales['date'].dt.strftime('%Y-%m')).sum()\n"
        "result = round(float((rev['2024-06'] - rev['2024-05']) / rev['2024-05'] * 100), 1)",
        "month-over-month",
    ),
    Question(
        "What is the average price of a Laptop in `sales`? Round to 2 decimals.",
        "result = round(float(sales.loc[sales['product'] == 'Laptop', 'unit_price'].mean()), 2)",
        "column named differently",
    ),
    Question(
        "Which month had the highest revenue (units × unit_price) in `sales`? Answer as 'YYYY-MM'.",
        "rev = (sales['units'] * sales['unit_price']).groupby(sales['date'].dt.strftime('%Y-%m')).sum()\n"
        "result = rev.idxmax()",
        "month group-by",
    ),
    Question(
        "What share of the total revenue (units × unit_price) in `sales` came from the West region, "
        "in percent? Round to 1 decimal.",
        "rev = sales['units'] * sales['unit_price']\n"
        "result = round(float(rev[sales['region'] == 'West'].sum() / rev.sum() * 100), 1)",
        "ratio",
    ),
    Question(
        "Join `sales` with `customers` on customer_id. What was the total revenue (units × unit_price) of "
        "each customer segment? Give a dict from segment to revenue, rounded to 2 decimals.",
        "m = sales.merge(customers, on='customer_id')\n"
        "result = (m['units'] * m['unit_price']).groupby(m['segment']).sum().round(2).to_dict()",
        "join, group-by",
    ),
    Question(
        "Which customer spent the most in `sales` (revenue = units × unit_price)? Answer with the customer's "
        "name from `customers`.",
        "spent = (sales['units'] * sales['unit_price']).groupby(sales['customer_id']).sum()\n"
        "result = customers.set_index('customer_id').loc[spent.idxmax(), 'name']",
        "join, arg-max",
    ),
    Question(
        "How many different customers placed an order in June 2024, according to `sales`?",
        "result = int(sales.loc[sales['date'].dt.strftime('%Y-%m') == '2024-06', 'customer_id'].nunique())",
        "distinct count",
    ),
    Question(
        "`targets` holds a monthly revenue target per region (month as 'YYYY-MM'). Which regions met or beat "
        "their June 2024 target with their June revenue (units × unit_price) in `sales`? "
        "Give a list of region names in alphabetical order.",
        "june = sales[sales['date'].dt.strftime('%Y-%m') == '2024-06']\n"
        "rev = (june['units'] * june['unit_price']).groupby(june['region']).sum()\n"
        "t = targets[targets['month'] == '2024-06'].set_index('region')['target']\n"
        "result = sorted(r for r in t.index if rev.get(r, 0) >= t[r])",
        "join with targets",
    ),
    Question(
        "What was the East region's revenue (units × unit_price) in `sales` in May 2024 divided by its May 2024 "
        "target in `targets`? Round to 2 decimals.",
        "may = sales[(sales['date'].dt.strftime('%Y-%m') == '2024-05') & (sales['region'] == 'East')]\n"
        "t = targets.loc[(targets['region'] == 'East') & (targets['month'] == '2024-05'), 'target'].iloc[0]\n"
        "result = round(float((may['units'] * may['unit_price']).sum() / t), 2)",
        "ratio with targets",
    ),
    Question(
        "Compute the daily revenue (units × unit_price, summed per date) from `sales`, then its 7-day rolling "
        "mean. What is the rolling mean on 2024-06-30? Round to 2 decimals.",
        "daily = (sales['units'] * sales['unit_price']).groupby(sales['date']).sum()\n"
        "result = round(float(daily.rolling(7).mean().iloc[-1]), 2)",
        "rolling",
    ),
    Question(
        "Which order in `sales` had the largest revenue (units × unit_price)? Answer with its order_id.",
        "result = int(sales.loc[(sales['units'] * sales['unit_price']).idxmax(), 'order_id'])",
        "arg-max row",
    ),
    Question(
        "What is the average number of units per order for each product in `sales`? "
        "Give a dict from product to average, rounded to 1 decimal.",
        "result = sales.groupby('product')['units'].mean().round(1).to_dict()",
        "group-by mean",
    ),
    Question(
        "How many orders from the North region in `sales` had more than 5 units?",
        "result = int(((sales['region'] == 'North') & (sales['units'] > 5)).sum())",
        "filter count",
    ),
    Question(
        "What was the total quantity of Monitors sold in `sales`?",
        "result = int(sales.loc[sales['product'] == 'Monitor', 'units'].sum())",
        "column named differently",
    ),
    Question(
        "How many customers in `customers` signed up in 2023?",
        "result = int((customers['signup_date'].dt.year == 2023).sum())",
        "date filter",
    ),
    Question(
        "What is the median revenue (units × unit_price) per order in the South region of `sales`? "
        "Round to 2 decimals.",
        "south = sales[sales['region'] == 'South']\n"
        "result = round(float((south['units'] * south['unit_price']).median()), 2)",
        "median",
    ),
    Question(  # asked as a person did in a trial: two things, which and how much
        "Join `sales` with `customers` on customer_id. Which customer segment brought in the most revenue "
        "(units × unit_price), and how much? Round the revenue to 2 decimals.",
        "m = sales.merge(customers, on='customer_id')\n"
        "per = (m['units'] * m['unit_price']).groupby(m['segment']).sum()\n"
        "result = (per.idxmax(), round(float(per.max()), 2))",
        "which and how much",
    ),
    Question(  # asked as a person did in a trial: a month, with no format given
        "Which month had the highest revenue (units × unit_price) in `sales`?",
        "rev = (sales['units'] * sales['unit_price']).groupby(sales['date'].dt.strftime('%Y-%m')).sum()\n"
        "result = rev.idxmax()",
        "which month",
        month=True,
    ),
]


# The messy set's reference code: the careful analyst counts each order and refund once (exact duplicate rows
# out), reads money and dates from their text, treats 'north ' and ' NORTH' as North, and None, NaN and '' as
# missing, and matches '017' with 17.
_ORDERS = (
    "o = orders.drop_duplicates()\n"
    "amount = pd.to_numeric(o['amount'].str.replace(r'[$,]', '', regex=True), errors='coerce')\n"
)
_ORDER_DAYS = "day = pd.to_datetime(o['order_date'], format='mixed', errors='coerce')\n"
_REGIONS = "region = o['region'].str.strip().str.title()\n"
_REFUNDS = (
    "r = refunds.drop_duplicates()\n"
    "refunded = pd.to_numeric(r['amount'].str.replace(r'[$,]', '', regex=True), errors='coerce')\n"
)
_SEGMENTS = "segment = clients['segment'].str.strip().str.title().replace('', np.nan)\n"
_PLOT = "import matplotlib.pyplot as plt\n"

MESSY_QUESTIONS: list[Question] = [
    Question(
        "What is the total amount of all orders in `orders`? Count each order once and round to 2 decimals.",
        _ORDERS + "result = round(float(amount.sum()), 2)",
        "money strings",
    ),
    Question(
        "What is the average order amount for Laptops in `orders`, counting each order once? Round to 2 decimals.",
        _ORDERS + "result = round(float(amount[o['product'] == 'Laptop'].mean()), 2)",
        "money strings",
    ),
    Question(
        "What is our net revenue: the total amount of `orders` minus the money given back in `refunds`? "
        "Count each order and each refund once, and round to 2 decimals.",
        _ORDERS + _REFUNDS + "result = round(float(amount.sum() + refunded.sum()), 2)  # refunds are negative",
        "money strings",
    ),
    Question(
        "How many orders in `orders` were placed in March 2024? Count each order once.",
        _ORDERS + _ORDER_DAYS + "result = int(((day.dt.year == 2024) & (day.dt.month == 3)).sum())",
        "mixed dates",
    ),
    Question(
        "Which month had the highest total order amount in `orders`? Count each order once.",
        _ORDERS + _ORDER_DAYS + "per_month = amount.groupby(day.dt.to_period('M')).sum()\n"
        "result = str(per_month.idxmax())",
        "mixed dates",
        month=True,
    ),
    Question(
        "How many clients in `clients` signed up in 2023?",
        "signed_up = pd.to_datetime(clients['signup_date'], format='mixed', errors='coerce')\n"
        "result = int((signed_up.dt.year == 2023).sum())",
        "mixed dates",
    ),
    Question(
        "What was the total order amount of each region in `orders`? Count each order once; give a dict from "
        "region to amount, rounded to 2 decimals.",
        _ORDERS + _REGIONS + "result = amount.groupby(region).sum().round(2).to_dict()",
        "labels",
    ),
    Question(
        "How many orders in `orders` came from the North region? Count each order once.",
        _ORDERS + _REGIONS + "result = int((region == 'North').sum())",
        "labels",
    ),
    Question(
        "Which segment in `clients` has the most clients, and how many clients is that?",
        _SEGMENTS + "counts = segment.value_counts()\nresult = (counts.idxmax(), int(counts.max()))",
        "labels",
    ),
    Question(
        "How many orders in `orders` have no amount recorded? Count each order once.",
        "o = orders.drop_duplicates()\n"
        "result = int((o['amount'].isna() | (o['amount'].astype(str).str.strip() == '')).sum())",
        "missing values",
    ),
    Question(
        "What percentage of the clients in `clients` have no segment on file? Round to 1 decimal.",
        "segment = clients['segment'].str.strip()\n"
        "result = round(float((segment.isna() | (segment == '')).mean() * 100), 1)",
        "missing values",
    ),
    Question(
        "How many rows in `orders` are exact duplicates of an earlier row?",
        "result = int(orders.duplicated().sum())",
        "duplicates",
    ),
    Question(
        "How many refunds are there in `refunds` if each refund is counted once?",
        "result = len(refunds.drop_duplicates())",
        "duplicates",
    ),
    Question(
        "Join `orders` with `clients` on client_id. What was the total order amount of each client segment? "
        "Count each order once; give a dict from segment to amount, rounded to 2 decimals.",
        _ORDERS + _SEGMENTS + "c = clients.assign(client_id=clients['client_id'].astype(int), segment=segment)\n"
        "m = o.assign(amount=amount).merge(c, on='client_id', how='left')\n"
        "result = m.groupby('segment')['amount'].sum().round(2).to_dict()",
        "key types",
    ),
    Question(
        "Which client spent the most in `orders`? Count each order once and answer with the client's name from "
        "`clients`.",
        _ORDERS + "spent = amount.groupby(o['client_id']).sum()\n"
        "names = clients.set_index(clients['client_id'].astype(int))['name']\n"
        "result = names[spent.idxmax()]",
        "key types",
    ),
    Question(
        "How much was refunded in total on orders from the West region? The refunds are in `refunds` and the "
        "orders in `orders`; count each refund once and round to 2 decimals.",
        _ORDERS + _REGIONS + _REFUNDS + "west = set(o.loc[region == 'West', 'order_id'])\n"
        "result = round(float(-refunded[r['order_id'].astype(int).isin(west)].sum()), 2)",
        "key types",
        either_sign=True,
    ),
    Question(
        "Plot the monthly total order amount in `orders` as a bar chart.",
        _PLOT + _ORDERS + _ORDER_DAYS + "monthly = amount.groupby(day.dt.to_period('M')).sum()\n"
        "fig, ax = plt.subplots()\nmonthly.plot.bar(ax=ax, title='Order amount per month')\n"
        "result = monthly.round(2)",
        "chart",
        chart=6,
    ),
    Question(
        "Make a bar chart of the total order amount per region in `orders`.",
        _PLOT + _ORDERS + _REGIONS + "per_region = amount.groupby(region).sum()\n"
        "fig, ax = plt.subplots()\nper_region.plot.bar(ax=ax, title='Order amount per region')\n"
        "result = per_region.round(2)",
        "chart",
        chart=4,
    ),
    Question(
        "Plot the monthly order amount in `orders` as a line chart with one line per region.",
        _PLOT
        + _ORDERS
        + _ORDER_DAYS
        + _REGIONS
        + "monthly = amount.groupby([day.dt.to_period('M'), region]).sum().unstack()\n"
        "fig, ax = plt.subplots()\nmonthly.plot(ax=ax, title='Order amount per month and region')\n"
        "result = monthly.round(2)",
        "chart",
        chart=6,
    ),
    Question(
        "Plot how many clients signed up each year in `clients`, as a bar chart.",
        _PLOT + "signed_up = pd.to_datetime(clients['signup_date'], format='mixed', errors='coerce')\n"
        "per_year = signed_up.dt.year.dropna().astype(int).value_counts().sort_index()\n"
        "fig, ax = plt.subplots()\nper_year.plot.bar(ax=ax, title='Clients signed up per year')\n"
        "result = per_year",
        "chart",
        chart=3,
    ),
]

SETS: dict[str, tuple[Callable[[], dict[str, pd.DataFrame]], list[Question]]] = {
    "clean": (lambda: make_frames(), QUESTIONS),
    "messy": (lambda: make_messy_frames(), MESSY_QUESTIONS),
}


# ---------------------------------------------------------------------------------------------- checking


# a group of the rows whose label is missing: an answer may list it beside the groups asked for
_MISSING_KEYS = frozenset({"", "nan", "none", "null", "<na>", "na", "n/a", "nat", "unknown", "missing", "(missing)"})


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, str):
        text = value.strip().strip("'\"").replace(",", "").replace("$", "").rstrip("%").strip()
        try:
            return float(text)
        except ValueError:
            return None
    if hasattr(value, "item") and getattr(value, "size", 2) == 1:  # a one-element array or Series
        return _as_float(value.item() if not hasattr(value, "iloc") else value.iloc[0])
    return None


def _close(got: float, expected: float) -> bool:
    """Equal up to the expected value's rounding step: 2.35 or 2.3 for 2.3 (rounded to 1 decimal); ints exactly."""
    if math.isnan(got):
        return False
    step = 0.0
    text = repr(float(expected))
    if not float(expected).is_integer() and "e" not in text:
        step = 10.0 ** -len(text.split(".")[1])
    elif isinstance(expected, float):
        step = 0.1  # 73.0: rounded to one decimal
    return abs(got - expected) <= step + 1e-9 * max(1.0, abs(expected))


def _as_mapping(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, pd.Series):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, pd.DataFrame):
        if value.shape[1] == 1:
            return {str(k): v for k, v in value.iloc[:, 0].items()}
        if value.shape[1] == 2:
            return {str(k): v for k, v in zip(value.iloc[:, 0], value.iloc[:, 1])}
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            import ast

            parsed = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            return None
        return _as_mapping(parsed) if isinstance(parsed, dict) else None
    return None


def _as_list(value: Any) -> list[Any] | None:
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (pd.Series, pd.Index, np.ndarray)):
        return list(value.tolist())
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                import ast

                parsed = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return None
            return list(parsed) if isinstance(parsed, (list, tuple)) else None
        if "," in text:
            return [part.strip().strip("'\"") for part in text.split(",")]
    return None


def _same_text(got: Any, expected: str) -> bool:
    return str(got).strip().strip("'\".").lower() == expected.lower()


def _same_month(got: Any, expected: pd.Period) -> bool:
    """'2024-05', 'May 2024', a Timestamp or a Period in May 2024 for Period('2024-05'); a row number is not."""
    if isinstance(got, (list, tuple)) and len(got) == 1:
        got = got[0]
    if isinstance(got, (int, float, np.integer, np.floating)):
        return False
    try:
        return pd.Period(got if isinstance(got, (pd.Timestamp, pd.Period)) else str(got).strip(), freq="M") == expected
    except (ValueError, TypeError):
        return False


def _has_both(got: Any, expected: tuple) -> bool:
    """A (name, number) answer in any form: a pair, a one-item dict or Series, or text holding both."""
    if isinstance(got, pd.Series) and len(got) == 1:
        got = {got.index[0]: got.iloc[0]}
    if isinstance(got, dict) and len(got) == 1:
        got = next(iter(got.items()))
    if isinstance(got, str):
        numbers = re.findall(r"-?\d[\d,]*(?:\.\d+)?", got)
        name, number = expected
        has_name = re.search(rf"\b{re.escape(str(name))}\b", got, re.IGNORECASE) is not None
        return has_name and any(check_answer(found, number) for found in numbers)
    if not isinstance(got, (list, tuple)) or len(got) != len(expected):
        return False
    return all(any(check_answer(part, wanted) for part in got) for wanted in expected)


def check_answer(got: Any, expected: Any) -> bool:
    """True when `got` is `expected` up to form: 3 == '3' == 3.0, {'a': 1.0} == Series, ['x'] == 'x'?"""
    if isinstance(expected, tuple):
        return _has_both(got, expected)
    if isinstance(expected, pd.Period):
        return _same_month(got, expected)
    if isinstance(expected, dict):
        mapping = _as_mapping(got)
        if mapping is None:
            return False
        wanted = {str(k).strip().lower() for k in expected}
        lowered = {k.strip().lower(): v for k, v in mapping.items()}
        lowered = {k: v for k, v in lowered.items() if k in wanted or k not in _MISSING_KEYS}
        if set(lowered) != wanted:
            return False
        return all(check_answer(lowered[str(k).strip().lower()], v) for k, v in expected.items())
    if isinstance(expected, list):
        items = _as_list(got)
        return items is not None and len(items) == len(expected) and all(map(check_answer, items, expected))
    if isinstance(expected, str):
        if isinstance(got, (list, tuple)) and len(got) == 1:
            got = got[0]
        return _same_text(got, expected)
    if isinstance(expected, (int, float, np.integer, np.floating)):
        number = _as_float(got)
        if number is None and isinstance(got, (list, tuple)) and len(got) == 1:
            number = _as_float(got[0])
        return number is not None and _close(number, expected if isinstance(expected, float) else int(expected))
    return got == expected


# ---------------------------------------------------------------------------------------------- running


@dataclass
class Outcome:
    """One question's run: the answer, whether it is right, how it ended, its time and steps."""

    number: int
    question: Question
    expected: Any
    answer: Any = None
    solved: bool = False
    kind: str = "solved"  # solved | wrong answer | no answer | error | max steps | parse error | timeout | no figure | wrong chart
    seconds: float = 0.0
    steps: int = 0
    tokens_out: int = 0
    step_errors: Counter = field(default_factory=Counter)
    detail: str = ""
    transcript: list[dict[str, Any]] = field(default_factory=list)  # per step: output, observations, error
    set_name: str = "clean"
    changed: list[str] = field(default_factory=list)  # the user's frames the run changed: "orders (edited)"
    figures: str = ""  # a chart question's figures: "1 figure, 6 marks", "1 figure, image only", "no figure"
    program: str = ""  # a solved answer's program (agent.to_code()): "reproduces", or "unchecked: <why>"


_ERROR_ANSWER = re.compile(r"^\s*(error|an error|traceback|exception)\b|Error:", re.IGNORECASE)


def _step_error_kinds(steps: Iterable[Any]) -> Counter:
    kinds: Counter = Counter()
    for step in steps:
        error = getattr(step, "error", None)
        if error is None or type(step).__name__ != "ActionStep":
            continue
        name = type(error).__name__
        kinds[
            {"AgentParsingError": "parse", "AgentExecutionError": "exec", "AgentMaxStepsError": "max"}.get(name, name)
        ] += 1
    return kinds


def _classify(outcome: Outcome, state: str | None, timed_out: bool, failed: bool) -> str:
    if outcome.solved:
        return "solved"
    if timed_out:
        return "timeout"
    if failed:
        return "error"
    if state in ("max_steps", "max_steps_error"):
        errors = outcome.step_errors
        return "parse error" if errors["parse"] and errors["parse"] >= errors["exec"] else "max steps"
    if outcome.question.chart:
        return "no figure" if outcome.figures.startswith("no figure") else "wrong chart"
    if isinstance(outcome.answer, str) and _ERROR_ANSWER.search(outcome.answer):
        return "error"
    if state == "stuck" or outcome.answer is None:  # ended without an answer, and said why: not a wrong one kept
        return "no answer"
    return "wrong answer"


def _chart_check(steps: list[Any], expected: Chart) -> tuple[bool, str]:
    """A chart question's check: a figure was drawn and, where the steps summarize their figures, the last one
    has the expected number of marks (bars or points of its largest series)."""
    images = sum(len(getattr(step, "observations_images", None) or []) for step in steps)
    summaries = [figure for step in steps for figure in (getattr(step, "figures", None) or [])]
    if not images and not summaries:
        return False, "no figure"
    drawn = f"{max(images, len(summaries))} figure{'s' if max(images, len(summaries)) != 1 else ''}"
    if not summaries:
        return True, f"{drawn}, image only"
    marks = summaries[-1].get("marks") if isinstance(summaries[-1], dict) else None
    return marks == expected.marks, f"{drawn}, {marks} marks"


def _changed_frames(before: dict[str, tuple[Any, pd.DataFrame]], namespace: dict[str, Any]) -> list[str]:
    """The frames a run changed: edited in place, replaced by other data, or the name bound to another object."""
    changed = []
    for name, (given, copy) in before.items():
        if name not in namespace:
            changed.append(f"{name} (deleted)")
            continue
        now = namespace[name]
        same_data = isinstance(now, pd.DataFrame) and now.equals(copy) and list(now.columns) == list(copy.columns)
        if now is given and same_data:
            continue
        if same_data:
            changed.append(f"{name} (another object, same data)")
        else:
            changed.append(f"{name} (edited)" if now is given else f"{name} (replaced)")
    return changed


class Bench:
    """An IPython shell with nbagent loaded and the frames defined: asks questions through `%%agent`."""

    def __init__(self, model: Any | None, frames: dict[str, pd.DataFrame], options: str = MAGIC_OPTIONS) -> None:
        from IPython.testing import globalipapp

        self.shell = globalipapp.start_ipython() or globalipapp.get_ipython()  # None after the first call
        if "AgentMagics" not in self.shell.magics_manager.registry:
            self.shell.run_line_magic("load_ext", "nbagent")
        self.magics = self.shell.magics_manager.registry["AgentMagics"]
        self.frames = frames
        self.options = options
        self.shell.run_cell(NOTEBOOK_IMPORTS)  # the notebook that made the frames imported pandas
        if model is not None:
            self.shell.user_ns[MODEL_VARIABLE] = model
            self.options += f" -m {MODEL_VARIABLE}"
        self._baseline = set(self.shell.user_ns)

    def close(self) -> None:
        """Take the frames, the model and the agent's variables out of the shell's namespace."""
        self.reset_namespace()
        for name in [*self.frames, MODEL_VARIABLE, "answer", "pd", "np"]:
            self.shell.user_ns.pop(name, None)
        self.magics.last_agent = None

    def reset_namespace(self) -> None:
        user_ns = self.shell.user_ns
        for name in set(user_ns) - self._baseline:
            del user_ns[name]
        user_ns.update({name: frame.copy() for name, frame in self.frames.items()})
        self._baseline = set(user_ns)

    def ask(
        self, number: int, question: Question, expected: Any, timeout: float, extra: str = "", set_name: str = "clean"
    ) -> Outcome:
        self.reset_namespace()
        self.magics.last_agent = None
        outcome = Outcome(number, question, expected, set_name=set_name)
        user_ns = self.shell.user_ns
        before = {name: (user_ns[name], user_ns[name].copy()) for name in self.frames}
        options = re.sub(r"--imports \S+", f"--imports {question.imports}", self.options)
        timed_out = threading.Event()

        def stop_when_late() -> None:
            agent = self.magics.last_agent
            if agent is not None:
                timed_out.set()
                agent.stop()

        timer = threading.Timer(timeout, stop_when_late)
        timer.daemon = True
        failed = False
        started = time.perf_counter()
        timer.start()
        try:
            outcome.answer = self.shell.run_cell_magic("agent", f"{options} {extra}".strip(), question.text)
        except Exception as error:  # a failed run is a result, not a crash of the benchmark
            failed = True
            outcome.answer = None
            outcome.detail = f"{type(error).__name__}: {error}"
        finally:
            timer.cancel()
        outcome.seconds = time.perf_counter() - started
        outcome.changed = _changed_frames(before, user_ns)
        agent = self.magics.last_agent
        state = None
        steps = []
        if agent is not None:
            steps = [s for s in agent.memory.steps if type(s).__name__ == "ActionStep"]
            outcome.steps = len(steps)
            outcome.tokens_out = sum(s.token_usage.output_tokens for s in steps if s.token_usage)
            outcome.step_errors = _step_error_kinds(steps)
            outcome.transcript = [
                {
                    "step": s.step_number,
                    "output": s.model_output if isinstance(s.model_output, str) else str(s.model_output),
                    "observations": s.observations,
                    "error": None if s.error is None else str(s.error),
                    "tokens": s.token_usage.dict() if s.token_usage else None,
                    "seconds": s.timing.duration,
                }
                for s in steps
            ]
            state = getattr(agent.last_result, "state", None)
            if outcome.answer is None and state == "success":  # -o keeps only a real answer, not "Error: …"
                outcome.answer = agent.last_result.output
            if state == "error" and not failed:  # --quiet: a failed run's cell ends quietly, its -o is None
                failed = True
                outcome.detail = str(getattr(agent.last_result, "error", "") or "the run failed")
            if state == "stopped" and not timed_out.is_set():
                failed = True
        if question.chart:
            right, outcome.figures = _chart_check(steps, expected)
        else:
            right = question.check(outcome.answer, expected)
        outcome.solved = not failed and not timed_out.is_set() and right
        outcome.kind = _classify(outcome, state, timed_out.is_set(), failed)
        if outcome.solved and not question.chart:  # after the clock: what the user pays for the answer is timed
            outcome.program = _program_check(agent)
        return outcome


def _program_check(agent: Any) -> str:
    """Whether the run's checked program (issue 31's `to_code()`) gives the answer again without the model."""
    try:
        program = agent.to_code()
    except Exception as error:  # a failure of to_code is a result of the benchmark, not its crash
        return f"unchecked: to_code raised {type(error).__name__}: {error}"
    return "reproduces" if program.checked else f"unchecked: {program.reason}"


def scripted_model(questions: list[Question]) -> Any:
    """A ScriptedModel that answers each question with its reference code, then `final_answer(result)`."""
    from nbagent.models import ScriptedModel

    def answer(messages: list[Any], **_: Any) -> str:
        text = "\n".join(_message_text(m) for m in messages)
        for question in questions:
            if question.text in text:
                return f"Thought: I will compute it with pandas.\n```python\n{question.code}\nfinal_answer(result)\n```"
        return "Thought: I do not know this question.\n```python\nfinal_answer('unknown question')\n```"

    return ScriptedModel(answer, model_id="scripted-reference")


def _message_text(message: Any) -> str:
    content = getattr(message, "content", None) if not isinstance(message, dict) else message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def run_questions(
    bench: Bench,
    questions: list[tuple[int, Question]],
    timeout: float,
    extra: str = "",
    on_outcome: Callable[[Outcome], None] | None = None,
    set_name: str = "clean",
) -> list[Outcome]:
    outcomes = []
    for number, question in questions:
        outcome = bench.ask(number, question, question.expected(bench.frames), timeout, extra, set_name)
        outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)
    return outcomes


# ---------------------------------------------------------------------------------------------- report


def _short(value: Any, width: int = 38) -> str:
    text = repr(value) if not isinstance(value, str) else value
    text = " ".join(text.split())
    return (text[: width - 1] + "…" if len(text) > width else text).replace("|", "\\|")


def row(outcome: Outcome) -> str:
    errors = ", ".join(f"{n} {k}" for k, n in sorted(outcome.step_errors.items())) or "-"
    answer = f"{outcome.figures} (answer: {_short(outcome.answer, 20)})" if outcome.question.chart else outcome.answer
    return (
        f"| {outcome.number} | {outcome.question.kind} | {_short(outcome.expected, 28)} | {_short(answer)} | "
        f"{outcome.kind} | {', '.join(outcome.changed) or '-'} | {outcome.seconds:.1f} | {outcome.steps} | "
        f"{outcome.tokens_out} | {errors} |"
    )


HEADER = (
    "| # | exercises | expected | answer | result | changed your data | seconds | steps | tokens out | step errors |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def summary(outcomes: list[Outcome], label: str) -> dict[str, Any]:
    times = [o.seconds for o in outcomes]
    kinds = Counter(o.kind for o in outcomes if not o.solved)
    per_kind: dict[str, list[int]] = {}
    for outcome in outcomes:
        counts = per_kind.setdefault(outcome.question.kind, [0, 0])
        counts[0] += outcome.solved
        counts[1] += 1
    return {
        "label": label,
        "solved": sum(o.solved for o in outcomes),
        "total": len(outcomes),
        "median": statistics.median(times) if times else 0.0,
        "seconds": sum(times),
        "kinds": dict(kinds),
        "step_errors": dict(sum((o.step_errors for o in outcomes), Counter())),
        "per_kind": per_kind,
        "changed": sum(bool(o.changed) for o in outcomes),
        "reproduces": sum(o.program == "reproduces" for o in outcomes),
        "image_only": sum(o.figures.endswith("image only") for o in outcomes),
    }


def charts_solved(outcomes: list[Outcome]) -> int:
    return sum(o.solved and o.question.chart > 0 for o in outcomes)


def _sets_of(outcomes: list[Outcome]) -> dict[str, list[Outcome]]:
    sets: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        sets.setdefault(outcome.set_name, []).append(outcome)
    return sets


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counter.items())) or "none"


def report(outcomes: list[Outcome], label: str, load: float) -> str:
    """Per set: score, median, per kind of question, failure kinds; then one summary line for all sets."""
    stats = summary(outcomes, label)
    lines = ["", f"machine load average {os.getloadavg()[0]:.1f} (2 cores); model load {load:.1f} s"]
    per_set = []
    for set_name, done in _sets_of(outcomes).items():
        part = summary(done, set_name)
        charts = sum(o.question.chart > 0 for o in done)
        lines += [
            "",
            f"{set_name}: solved {part['solved']}/{part['total']}, median {part['median']:.1f} s/question, "
            f"total {part['seconds']:.1f} s; changed your data: {part['changed']} question(s)"
            + (f"; charts checked by image only: {part['image_only']}/{charts}" if charts else ""),
            "per kind: " + ", ".join(f"{kind} {n}/{of}" for kind, (n, of) in part["per_kind"].items()),
            f"failure kinds: {_counts(part['kinds'])}; errors seen in steps: {_counts(part['step_errors'])}",
            f"programs: {part['reproduces']} of the {part['solved'] - charts_solved(done)} solved non-chart answers "
            "reproduce from their checked program (to_code)",
        ]
        per_set.append(f"{set_name} {part['solved']}/{part['total']} (median {part['median']:.1f} s)")
    lines.append(
        f"SUMMARY: {label}: {stats['solved']}/{stats['total']} solved, median {stats['median']:.1f} s/question, "
        f"total {stats['seconds']:.0f} s, failures: {_counts(stats['kinds'])}; " + ", ".join(per_set)
    )
    return "\n".join(lines)


def _log_record(outcome: Outcome) -> dict[str, Any]:
    return {
        "set": outcome.set_name,
        "number": outcome.number,
        "question": outcome.question.text,
        "expected": outcome.expected,
        "answer": outcome.answer,
        "kind": outcome.kind,
        "seconds": round(outcome.seconds, 1),
        "detail": outcome.detail,
        "program": outcome.program,
        "steps": outcome.transcript,
    }


def _result_record(outcome: Outcome) -> dict[str, Any]:
    """One question's result for --json: enough to compare two runs question by question."""
    answer = repr(outcome.answer)
    return {
        "set": outcome.set_name,
        "index": outcome.number,
        "kind": outcome.question.kind,
        "question": outcome.question.text,
        "correct": outcome.solved,
        "failure": None if outcome.solved else outcome.kind,
        "seconds": round(outcome.seconds, 1),
        "steps": outcome.steps,
        "tokens_out": outcome.tokens_out,
        "step_errors": dict(outcome.step_errors),
        "changed_data": outcome.changed,
        "figures": outcome.figures or None,
        "program": outcome.program or None,
        "expected": _short(outcome.expected, 200),
        "answer": answer if len(answer) <= 200 else answer[:199] + "…",
        "detail": outcome.detail[:300],
    }


def _pick(chosen: str, only: str | None) -> list[tuple[str, list[tuple[int, Question]]]]:
    """The questions to run, per set: all of `chosen` ('clean', 'messy' or 'all'), or those `only` names.

    `only` is numbers, each of the set named before it ('messy:3,7' is messy 3 and 7; '2,messy:3' is clean 2
    and messy 3); bare leading numbers are of the clean set, or of the messy one under --set messy.
    """
    names = list(SETS) if chosen == "all" else [chosen]
    if not only:
        return [(name, list(enumerate(SETS[name][1], start=1))) for name in names]
    wanted: dict[str, set[int]] = {}
    current = names[0]
    for part in (piece.strip() for piece in only.split(",")):
        if ":" in part:
            current, _, part = (text.strip() for text in part.partition(":"))
            if current not in names:
                raise SystemExit(f"--only {current}:…: the sets are {' and '.join(names)} (--set {chosen})")
        if not part:
            continue
        try:
            number = int(part)
        except ValueError:
            raise SystemExit(f"--only: {part!r} is no question number (e.g. --only 3,7 or --only messy:3,7)") from None
        if not 1 <= number <= len(SETS[current][1]):
            raise SystemExit(f"--only: no {current} question {number} (there are {len(SETS[current][1])})")
        wanted.setdefault(current, set()).add(number)
    return [
        (name, [(n, q) for n, q in enumerate(SETS[name][1], start=1) if n in wanted[name]])
        for name in SETS
        if name in wanted
    ]


def main(argv: list[str] | None = None) -> list[Outcome]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="all", choices=["clean", "messy", "all"], help="which questions (default all)")
    parser.add_argument("--only", default=None, help="question numbers to run, e.g. 7, 3,7,12 or messy:3,7")
    parser.add_argument("--model", default=None, help="a model spec for %%agent -m (default: the offline model)")
    parser.add_argument("--scripted", action="store_true", help="a ScriptedModel writes the reference code")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per question before it is stopped")
    parser.add_argument("--max-steps", type=int, default=None, help="passed to %%agent (default: its own)")
    parser.add_argument("--log", default=None, help="write each question's steps to this JSON-lines file")
    parser.add_argument("--json", default=None, help="write the per-question results to this JSON file")
    args = parser.parse_args(argv)

    chosen = _pick(args.set, args.only)
    count = sum(len(questions) for _, questions in chosen)
    started = time.perf_counter()
    if args.scripted:
        model, label = scripted_model([q for _, questions in chosen for _, q in questions]), "scripted reference"
    else:
        from nbagent.models.spec import model_from_spec

        model = model_from_spec(args.model or "default")
        label = args.model or "default model"
    load = time.perf_counter() - started
    extra = f"--max-steps {args.max_steps}" if args.max_steps else ""
    print(f"# {label}: {model!r}; {count} questions; %%agent {MAGIC_OPTIONS} -m {MODEL_VARIABLE} {extra}".rstrip())
    print(f"# load average at start {os.getloadavg()[0]:.1f} (2 cores)")
    outcomes: list[Outcome] = []

    def show(outcome: Outcome) -> None:
        outcomes.append(outcome)
        print(row(outcome), flush=True)
        if args.log:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps(_log_record(outcome), default=repr) + "\n")
        if args.json:
            results = {"label": label, "results": [_result_record(o) for o in outcomes]}
            Path(args.json).write_text(json.dumps(results, indent=1, default=repr) + "\n", encoding="utf-8")

    for set_name, questions in chosen:
        bench = Bench(model, SETS[set_name][0]())
        print(f"\n## {set_name} set: {len(questions)} questions over {', '.join(f'`{n}`' for n in bench.frames)}")
        print(HEADER, flush=True)
        try:
            run_questions(bench, questions, args.timeout, extra, on_outcome=show, set_name=set_name)
        finally:
            bench.close()
    print(report(outcomes, label, load), flush=True)
    return outcomes


if __name__ == "__main__":
    main()
