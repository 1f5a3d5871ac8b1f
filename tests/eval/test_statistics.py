"""Evaluation numbers that respect their scale (issue 33 item 1): intervals inside the scores' scale, round axis
ticks, "varies" as the scorer compares answers, the run's own step count, agents taking turns."""

from __future__ import annotations

import itertools
import re
import threading

import pytest
from evalkit import task_text, tasks

from nbagent import CodeAgent, ScriptedModel
from nbagent.eval import evaluate
from nbagent.eval.display import plot_svg
from nbagent.eval.intervals import T_CLIPPED, WILSON, interval95, round_ticks
from nbagent.eval.scorers import exact_match, numeric


def sloppy(pattern):
    """A factory of agents that add a task's two numbers, wrong on the calls `pattern` marks (it cycles)."""
    calls, lock = itertools.cycle(pattern), threading.Lock()

    def answer(messages, **_):
        a, b = (int(x) for x in re.search(r"What is (\d+) \+ (\d+)", task_text(messages)).groups())
        with lock:
            off = next(calls)
        return f"Thought: add.\n```python\nfinal_answer({a + b + off})\n```"

    return lambda: CodeAgent(tools=[], model=ScriptedModel(answer), max_steps=2)


def test_the_interval_of_a_score_in_0_1_never_leaves_it():
    # the case: per-task means of 0/1 scores over 3 epochs gave `0.79 [0.54, 1.05]` with Student's t
    for values in ([1, 1, 2 / 3, 1, 1 / 3, 1, 2 / 3], [1, 1, 1, 1, 1, 2 / 3], [0, 0, 1 / 3], [1], [1, 0, 1, 1]):
        interval = interval95(values)
        assert 0 <= interval.low <= interval.mean <= interval.high <= 1, values
        assert interval.method == WILSON
    assert interval95([1, 1, 1, 1, 1, 1]).high == 1 and interval95([1, 1, 1, 1, 1, 1]).low < 1  # never certain


def test_a_score_on_another_scale_gets_a_clipped_t_interval():
    interval = interval95([0, 0, 0, 10])  # t reaches below 0, where no mean of such scores can be
    assert interval.method == T_CLIPPED
    assert interval.low == 0 and interval.high > 10
    assert 3 < interval95([4, 5, 6, 5]).low < 5 < interval95([4, 5, 6, 5]).high < 7  # inside the scale: as t gives
    assert interval95([-1, -1, 0, 1]).low == -1  # a scorer of -1 to 1 (its `minimum`): the floor follows it
    assert interval95([2.0]).method == T_CLIPPED and interval95([]).method == ""


def test_the_summary_keeps_its_intervals_in_0_1_and_says_which_method():
    results = evaluate({"sloppy": sloppy([0, 0, 1])}, tasks(6), epochs=3, progress=False, max_workers=1)
    summary = results.summary()
    low, high = summary.loc["sloppy", "exact_match_low"], summary.loc["sloppy", "exact_match_high"]
    assert 0 <= low < summary.loc["sloppy", "exact_match"] < high <= 1
    assert summary.attrs["intervals"] == {"exact_match": WILSON}
    assert "exact_match [95%, Wilson]" in results.to_html()


@pytest.mark.parametrize(
    ("maximum", "end", "step"), [(1.0, 1.0, 0.2), (1.047, 1.25, 0.25), (0.3, 0.3, 0.1), (7.3, 8, 2), (100, 100, 20)]
)
def test_axis_ticks_are_round_numbers(maximum, end, step):
    top, ticks = round_ticks(maximum)
    assert top == pytest.approx(end) and top >= maximum
    assert ticks[0] == 0 and ticks[-1] == top
    assert all(b - a == pytest.approx(step) for a, b in zip(ticks, ticks[1:]))
    assert all(len(f"{t:g}") <= 4 for t in ticks)


def test_the_plot_labels_its_axis_with_round_numbers():
    import pandas as pd

    summary = pd.DataFrame(
        {"score": [0.79, 3.1], "score_low": [0.54, 2.0], "score_high": [1.0, 4.73]}, index=["a", "b"]
    )
    labels = re.findall(r'text-anchor="middle">([^<]*)</text>', plot_svg(summary, ["score"]))
    assert labels == ["0", "1", "2", "3", "4", "5"]


def test_an_answer_written_as_text_or_as_a_number_is_the_same_answer():
    exact = exact_match()
    assert exact.answer_key("21") == exact.answer_key(21) == exact.answer_key(" 21.0 ")
    assert (
        exact.answer_key("Paris") == exact.answer_key("paris.") != exact_match(case_sensitive=True).answer_key("Paris.")
    )
    assert numeric().answer_key("20") != numeric().answer_key("22")


def test_varies_compares_answers_as_the_scorer_does():
    calls, lock = itertools.count(), threading.Lock()

    def answer(messages, **_):  # the same sum, as text on every other call: every epoch displays 21
        a, b = (int(x) for x in re.search(r"What is (\d+) \+ (\d+)", task_text(messages)).groups())
        with lock:
            text = next(calls) % 2 == 1
        value = repr(str(a + b)) if text else str(a + b)
        return f"Thought: add.\n```python\nfinal_answer({value})\n```"

    agents = {
        "steady": lambda: CodeAgent(tools=[], model=ScriptedModel(answer), max_steps=2),
        "flaky": sloppy([0, 1, 1, 0]),  # its calls: t0, t1, t0, t1: both tasks get a right and a wrong sum
    }
    results = evaluate(agents, tasks(2), epochs=2, progress=False, max_workers=1)
    df = results.df
    steady = df[df.agent == "steady"]
    assert {type(a) for a in steady.answer} == {str, int}  # the answers differ in type...
    assert not steady.nondeterministic.any()  # ...but are one answer to exact_match
    assert df[df.agent == "flaky"].nondeterministic.all()  # a different number still varies


def test_the_table_counts_the_steps_the_run_took():
    never = lambda: CodeAgent(  # noqa: E731
        tools=[], model=ScriptedModel(["Thought: look.\n```python\nprint(1)\n```", "I could not."]), max_steps=1
    )
    results = evaluate({"never": never}, tasks(1), progress=False)
    record = results.records[0]
    assert record["answered"] is False and record["steps"] == 1  # the closing reply after max steps is no step
    assert results.df.steps.tolist() == [1]


def test_agents_take_turns_going_first():
    order, lock = [], threading.Lock()

    def factory(name):
        def make():
            with lock:
                order.append(name)
            return CodeAgent(tools=[], model=ScriptedModel(["```python\nfinal_answer(1)\n```"]), max_steps=1)

        return make

    evaluate({"a": factory("a"), "b": factory("b")}, tasks(2), epochs=2, progress=False, max_workers=1)
    pairs = [tuple(order[i : i + 2]) for i in range(0, len(order), 2)]
    assert pairs == [("a", "b"), ("b", "a"), ("b", "a"), ("a", "b")]
