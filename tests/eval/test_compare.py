"""Signal or noise: the paired comparison of agents, the samples that vary between epochs, the one-epoch note."""

from __future__ import annotations

import itertools
import random
import re
import threading

import pytest
from evalkit import task_text, tasks

from nbagent import CodeAgent, ScriptedModel
from nbagent.eval import evaluate
from nbagent.eval.compare import ALPHA, min_tasks, paired_test


def adder(wrong=(), flip=None):
    """A factory of agents that add the two numbers of a task: off by one on the `wrong` task ids, and on
    `flip`'s task every other time it is asked (a nondeterministic answer)."""
    calls = itertools.count()
    lock = threading.Lock()

    def answer(messages, **_):
        text = task_text(messages)
        a, b = (int(x) for x in re.search(r"What is (\d+) \+ (\d+)", text).groups())
        off = f"t{a}" in wrong
        if flip == f"t{a}":
            with lock:
                off = next(calls) % 2 == 1
        return f"Thought: add.\n```python\nfinal_answer({a + b + off})\n```"

    return lambda: CodeAgent(tools=[], model=ScriptedModel(answer), max_steps=3)


# ---------------------------------------------------------------------------------------------- the test


def brute_force_p(d: list[float]) -> float:
    """The sign-flip p-value by enumeration, written independently of the module under test."""
    observed = abs(sum(d))
    patterns = list(itertools.product((1, -1), repeat=len(d)))
    return sum(abs(sum(s * x for s, x in zip(signs, d))) >= observed - 1e-9 for signs in patterns) / len(patterns)


@pytest.mark.parametrize("seed", range(8))  # seed 3 is significant, the others not
def test_the_p_value_is_exact_and_the_interval_agrees_with_it(seed):
    rng = random.Random(seed)
    d = [rng.choice([-1, 0, 1, 1, 1, 1 / 3, -2 / 3]) for _ in range(rng.randint(6, 12))]
    test = paired_test(d)
    assert test.p_value == pytest.approx(brute_force_p(d))
    assert test.low <= test.mean <= test.high
    assert test.significant == (test.p_value <= ALPHA)
    if test.significant:  # the interval is the test inverted: 0 is outside it exactly when the test rejects 0
        assert not test.low <= 0 <= test.high
    else:
        assert test.low <= 1e-6 and test.high >= -1e-6
    for edge in (test.low, test.high):  # just inside an edge is accepted, just outside rejected
        if abs(edge) < 1:
            step = 1e-4 if edge > test.mean else -1e-4
            assert brute_force_p([x - (edge - step) for x in d]) > ALPHA
            assert brute_force_p([x - (edge + step) for x in d]) <= ALPHA


def test_few_tasks_can_never_be_significant():
    assert min_tasks() == 6  # the smallest p of n tasks is 2 / 2^n: 0.0625 for 5, 0.031 for 6
    five, six = paired_test([1] * 5), paired_test([1] * 6)
    assert not five.significant and (five.low, five.high) == (-1, 1)  # any difference is compatible
    assert six.significant and six.p_value == 2 / 2**6


def test_many_tasks_use_random_sign_patterns_with_a_stable_answer():
    d = [1] * 12 + [-1] * 4 + [0] * 24  # 40 tasks: 2^40 patterns are not enumerated
    first, again = paired_test(d), paired_test(d)
    assert first == again and first.p_value == pytest.approx(brute_force_p([1] * 12 + [-1] * 4), abs=0.01)


# ---------------------------------------------------------------------------------------------- evaluations


def test_one_differing_answer_in_one_epoch_is_not_a_difference():
    """The evaluator's case: 1.00 vs 0.90 on ten tasks, one answer apart, one epoch."""
    results = evaluate({"max_steps_3": adder(), "max_steps_6": adder(wrong={"t4"})}, tasks(10), progress=False)
    summary = results.summary()
    assert list(summary.exact_match) == [1.0, 0.9] and list(summary.epochs) == [1, 1]
    assert summary.nondeterministic.isna().all()  # one epoch cannot tell
    (row,) = results.compare().to_dict("records")
    assert (row["agent"], row["baseline"], row["tasks"], row["samples"]) == ("max_steps_6", "max_steps_3", 10, 10)
    assert row["difference"] == pytest.approx(-0.1) and row["p_value"] == 1.0 and not row["significant"]
    assert row["low"] < -0.1 and row["high"] >= 0
    assert row["verdict"].startswith("not significant: -0.10 [")
    note = results.note
    assert "cannot be told from sampling noise" in note and "epochs=3" in note
    assert summary.attrs["note"] == note and results.compare().attrs["note"] == note
    assert results.df.nondeterministic.isna().all()
    assert "max_steps_6 vs max_steps_3: not significant" in repr(results) and "epochs=3" in repr(results)


def test_a_real_difference_is_significant():
    results = evaluate(
        {"worse": adder(wrong={"t0", "t1", "t2", "t3", "t4", "t5", "t6"}), "better": adder()},
        tasks(10),
        progress=False,
    )
    (row,) = results.compare().to_dict("records")
    assert row["significant"] and row["difference"] == pytest.approx(0.7) and row["low"] > 0
    assert row["p_value"] == 2 / 2**7 and row["verdict"].startswith("better is better: +0.70 [")


def test_answers_that_vary_between_epochs_are_flagged_and_paired_by_epoch():
    results = evaluate({"steady": adder(), "flaky": adder(flip="t2")}, tasks(4), epochs=3, progress=False)
    df = results.df
    flagged = df[df.nondeterministic]
    assert set(zip(flagged.agent, flagged.id)) == {("flaky", "t2")} and len(flagged) == 3
    assert not df.nondeterministic.isna().any()
    assert sorted(set(df[(df.agent == "flaky") & (df.id == "t2")].answer)) == [5, 6]
    summary = results.summary()
    assert summary.loc["flaky", "nondeterministic"] == 1 and summary.loc["steady", "nondeterministic"] == 0
    assert list(summary.epochs) == [3, 3] and results.note == "" and summary.attrs["note"] == ""
    (row,) = results.compare().to_dict("records")
    assert row["tasks"] == 4 and row["samples"] == 12
    assert row["difference"] == pytest.approx(-1 / 12)  # t2: one wrong in three epochs, averaged over 4 tasks
    assert not row["significant"]


def test_an_agent_compared_with_each_earlier_one_per_scorer():
    from nbagent.eval.scorers import exact_match, numeric

    results = evaluate(
        {"a": adder(), "b": adder(), "c": adder(wrong={"t1"})},
        tasks(3),
        scorers=[exact_match(), numeric()],
        progress=False,
    )
    frame = results.compare()
    assert list(zip(frame.agent, frame.baseline, frame.scorer)) == [
        ("b", "a", "exact_match"), ("b", "a", "numeric"), ("c", "a", "exact_match"),
        ("c", "a", "numeric"), ("c", "b", "exact_match"), ("c", "b", "numeric"),
    ]  # fmt: skip
    assert (frame[frame.agent == "b"].difference == 0).all() and frame.significant.dtype == bool


def test_a_single_agent_has_nothing_to_compare():
    results = evaluate(adder(), tasks(3), progress=False)
    assert results.compare().empty and results.note == ""
