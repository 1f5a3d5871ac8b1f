"""Realistic data questions through the real `%%agent` magic: does the default model answer them?

    python benchmarks/data_questions.py                 # all questions, the offline default model
    python benchmarks/data_questions.py --only 7        # question 7 only (several: --only 3,7,12)
    python benchmarks/data_questions.py --model openai:gpt-4o-mini
    python benchmarks/data_questions.py --scripted      # a ScriptedModel writes the reference code (checks the harness)

Three DataFrames are built here from a fixed seed: `sales` (200 orders, Jan-Jun 2024: date, region,
product, customer_id, units, unit_price), `customers` (40 rows: customer_id, name, segment,
signup_date) and `targets` (monthly revenue targets per region). Each question is answered once by
pandas (the expected answer) and once by an agent, asked the way a person would in a notebook:

    %%agent --quiet -o answer --imports pandas,numpy
    What was the total revenue (units × unit_price) by region in `sales`? ...

in an IPython shell with `%load_ext nbagent`, the frames in `user_ns` (with `pd` and `np`, as in the
notebook that made them). Before each question the
namespace is put back as it was (fresh copies of the frames, the agent's own variables removed).
Answers are compared by a tolerant checker (numbers within 0.5 % or a rounding step, strings
without case and quotes, dicts/Series/lists element by element). Prints a row per question, the
failure kinds (wrong answer, error, max steps, parse error, timeout), and a one-line summary last.
"""

from __future__ import annotations

import argparse
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
NOTEBOOK_IMPORTS = "import numpy as np\nimport pandas as pd"
MODEL_VARIABLE = "_data_questions_model"  # a private name: never described to the model
REGIONS = ["North", "South", "East", "West"]
PRODUCTS = {"Laptop": 950.0, "Monitor": 240.0, "Keyboard": 45.0, "Mouse": 25.0, "Headset": 80.0}
SEGMENTS = ["Consumer", "Business", "Enterprise"]


# ---------------------------------------------------------------------------------------------- data


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

    def expected(self, frames: dict[str, pd.DataFrame]) -> Any:
        namespace: dict[str, Any] = {"pd": pd, "np": np, **{k: v.copy() for k, v in frames.items()}}
        exec(self.code, namespace)
        return pd.Period(namespace["result"], freq="M") if self.month else namespace["result"]


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


# ---------------------------------------------------------------------------------------------- checking


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
        if mapping is None or set(map(str.lower, mapping)) != {str(k).lower() for k in expected}:
            return False
        lowered = {k.lower(): v for k, v in mapping.items()}
        return all(check_answer(lowered[str(k).lower()], v) for k, v in expected.items())
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
    kind: str = "solved"  # solved | wrong answer | error | max steps | parse error | timeout
    seconds: float = 0.0
    steps: int = 0
    tokens_out: int = 0
    step_errors: Counter = field(default_factory=Counter)
    detail: str = ""
    transcript: list[dict[str, Any]] = field(default_factory=list)  # per step: output, observations, error


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
    if isinstance(outcome.answer, str) and _ERROR_ANSWER.search(outcome.answer):
        return "error"
    return "wrong answer"


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

    def ask(self, number: int, question: Question, expected: Any, timeout: float, extra: str = "") -> Outcome:
        self.reset_namespace()
        self.magics.last_agent = None
        outcome = Outcome(number, question, expected)
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
            outcome.answer = self.shell.run_cell_magic("agent", f"{self.options} {extra}".strip(), question.text)
        except Exception as error:  # a failed run is a result, not a crash of the benchmark
            failed = True
            outcome.answer = None
            outcome.detail = f"{type(error).__name__}: {error}"
        finally:
            timer.cancel()
        outcome.seconds = time.perf_counter() - started
        agent = self.magics.last_agent
        state = None
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
        outcome.solved = not failed and not timed_out.is_set() and check_answer(outcome.answer, expected)
        outcome.kind = _classify(outcome, state, timed_out.is_set(), failed)
        return outcome


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
) -> list[Outcome]:
    outcomes = []
    for number, question in questions:
        outcome = bench.ask(number, question, question.expected(bench.frames), timeout, extra)
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
    return (
        f"| {outcome.number} | {outcome.question.kind} | {_short(outcome.expected, 28)} | {_short(outcome.answer)} | "
        f"{outcome.kind} | {outcome.seconds:.1f} | {outcome.steps} | {outcome.tokens_out} | {errors} |"
    )


HEADER = (
    "| # | exercises | expected | answer | result | seconds | steps | tokens out | step errors |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def summary(outcomes: list[Outcome], label: str) -> dict[str, Any]:
    times = [o.seconds for o in outcomes]
    kinds = Counter(o.kind for o in outcomes if not o.solved)
    return {
        "label": label,
        "solved": sum(o.solved for o in outcomes),
        "total": len(outcomes),
        "median": statistics.median(times) if times else 0.0,
        "seconds": sum(times),
        "kinds": dict(kinds),
        "step_errors": dict(sum((o.step_errors for o in outcomes), Counter())),
    }


def report(outcomes: list[Outcome], label: str, load: float) -> str:
    stats = summary(outcomes, label)
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(stats["kinds"].items())) or "none"
    step_errors = ", ".join(f"{k} {n}" for k, n in sorted(stats["step_errors"].items())) or "none"
    lines = [
        "",
        f"machine load average {os.getloadavg()[0]:.1f} (2 cores); model load {load:.1f} s",
        f"solved {stats['solved']}/{stats['total']}, median {stats['median']:.1f} s/question, "
        f"total {stats['seconds']:.1f} s",
        f"failure kinds: {kinds}; errors seen in steps: {step_errors}",
        f"SUMMARY: {label}: {stats['solved']}/{stats['total']} solved, median {stats['median']:.1f} s/question, "
        f"total {stats['seconds']:.0f} s, failures: {kinds}",
    ]
    return "\n".join(lines)


def _log_record(outcome: Outcome) -> dict[str, Any]:
    return {
        "number": outcome.number,
        "question": outcome.question.text,
        "expected": outcome.expected,
        "answer": outcome.answer,
        "kind": outcome.kind,
        "seconds": round(outcome.seconds, 1),
        "detail": outcome.detail,
        "steps": outcome.transcript,
    }


def _pick(only: str | None) -> list[tuple[int, Question]]:
    numbered = list(enumerate(QUESTIONS, start=1))
    if not only:
        return numbered
    wanted = {int(part) for part in only.split(",") if part.strip()}
    unknown = wanted - {n for n, _ in numbered}
    if unknown:
        raise SystemExit(f"--only: no question {sorted(unknown)} (there are {len(QUESTIONS)})")
    return [(n, q) for n, q in numbered if n in wanted]


def main(argv: list[str] | None = None) -> list[Outcome]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="question numbers to run, e.g. 7 or 3,7,12")
    parser.add_argument("--model", default=None, help="a model spec for %%agent -m (default: the offline model)")
    parser.add_argument("--scripted", action="store_true", help="a ScriptedModel writes the reference code")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per question before it is stopped")
    parser.add_argument("--max-steps", type=int, default=None, help="passed to %%agent (default: its own)")
    parser.add_argument("--log", default=None, help="write each question's steps to this JSON-lines file")
    args = parser.parse_args(argv)

    questions = _pick(args.only)
    frames = make_frames()
    started = time.perf_counter()
    if args.scripted:
        model, label = scripted_model([q for _, q in questions]), "scripted reference"
    else:
        from nbagent.models.spec import model_from_spec

        model = model_from_spec(args.model or "default")
        label = args.model or "default model"
    load = time.perf_counter() - started
    bench = Bench(model, frames)
    extra = f"--max-steps {args.max_steps}" if args.max_steps else ""
    print(f"# {label}: {model!r}; {len(questions)} questions; %%agent {bench.options} {extra}".rstrip())
    print(f"# load average at start {os.getloadavg()[0]:.1f} (2 cores)")
    print(HEADER, flush=True)

    def show(outcome: Outcome) -> None:
        print(row(outcome), flush=True)
        if args.log:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps(_log_record(outcome), default=repr) + "\n")

    outcomes = run_questions(bench, questions, args.timeout, extra, on_outcome=show)
    print(report(outcomes, label, load), flush=True)
    return outcomes


if __name__ == "__main__":
    main()
