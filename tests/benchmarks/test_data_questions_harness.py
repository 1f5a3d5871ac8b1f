"""The data-questions benchmark's harness, checked with scripted models (CI checks the harness, not the model).

The scripted reference writes each question's pandas code through the real `%%agent` magic, so every
question must come out solved; scripted wrong answers, errors, parse errors and slow models must come
out as the failure kind they are.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nbagent import ScriptedModel
from nbagent.loop.aids.answers import AnswerContext, answer_problems

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "data_questions.py"


@pytest.fixture(scope="module")
def dq():
    spec = importlib.util.spec_from_file_location("data_questions", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["data_questions"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("data_questions", None)


@pytest.fixture
def bench_for(dq):
    made = []

    def make(model):
        bench = dq.Bench(model, dq.make_frames())
        bench.magics.show_widget = False
        made.append(bench)
        return bench

    yield make
    for bench in made:
        bench.close()


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


def test_there_are_at_least_20_questions_with_pandas_answers(dq):
    frames = dq.make_frames()
    assert len(dq.QUESTIONS) >= 20
    assert frames["sales"].shape == (200, 7) and set(frames) == {"sales", "customers", "targets"}
    assert frames["sales"]["date"].dt.normalize().nunique() == 182  # every day of Jan-Jun 2024 has a sale
    kinds = " ".join(q.kind for q in dq.QUESTIONS)
    for exercised in ("group-by", "top-k", "date", "month-over-month", "ratio", "join", "rolling", "named differently"):
        assert exercised in kinds
    for question in dq.QUESTIONS:
        assert "`" in question.text  # the frames are pointed at, as the magic wants
        assert question.expected(frames) is not None
    assert dq.make_frames()["sales"].equals(frames["sales"])  # the same data every time


def test_the_scripted_reference_solves_every_question_through_the_magic(dq, bench_for):
    questions = list(enumerate(dq.QUESTIONS, start=1))
    bench = bench_for(dq.scripted_model([q for _, q in questions]))
    outcomes = dq.run_questions(bench, questions, timeout=60)
    assert [o.kind for o in outcomes] == ["solved"] * len(questions)
    assert all(o.steps == 1 for o in outcomes)
    stats = dq.summary(outcomes, "scripted")
    assert stats["solved"] == stats["total"] == len(questions) and stats["kinds"] == {}


def test_the_namespace_is_put_back_before_each_question(dq, bench_for):
    bench = bench_for(
        ScriptedModel([code("sales['revenue'] = 1\nleftover = 5\nfinal_answer(1)"), code("final_answer(2)")])
    )
    first, second = dq.QUESTIONS[0], dq.QUESTIONS[1]
    bench.ask(1, first, first.expected(bench.frames), timeout=30)
    assert "revenue" in bench.shell.user_ns["sales"]  # the agent changed the notebook's frame
    assert "leftover" not in bench.shell.user_ns  # a scratch name stays in the agent's scope (issue 28)
    bench.shell.user_ns["leftover"] = 5  # as a name the agent was asked to keep would be
    bench.ask(2, second, second.expected(bench.frames), timeout=30)
    assert "leftover" not in bench.shell.user_ns and "revenue" not in bench.shell.user_ns["sales"]


def test_failures_are_sorted_into_their_kinds(dq, bench_for):
    question = dq.QUESTIONS[4]  # an int answer
    expected = question.expected(dq.make_frames())

    def ask(model, **kwargs):
        return bench_for(model).ask(5, question, expected, **{"timeout": 30, **kwargs})

    wrong = ask(ScriptedModel([code(f"final_answer({expected + 1})")]))
    assert (wrong.kind, wrong.solved, wrong.answer) == ("wrong answer", False, expected + 1)
    failing = ScriptedModel([code("x = sales['nope']")] * 3)
    stuck = ask(failing, extra="--max-steps 2")
    assert stuck.kind == "max steps" and stuck.step_errors["exec"] == 2
    prose = ScriptedModel(["I think the answer is somewhere."] * 3)
    assert ask(prose, extra="--max-steps 2").kind == "parse error"
    broken = ScriptedModel(lambda messages, **_: (_ for _ in ()).throw(RuntimeError("model crashed")))
    crashed = ask(broken)
    assert crashed.kind == "error" and "model crashed" in crashed.detail
    errors = ask(ScriptedModel([code("final_answer('Error: no column revenue')")]))
    assert errors.kind == "error"
    nothing = ask(ScriptedModel([code("final_answer(None)")]))
    assert nothing.kind == "no answer" and not nothing.solved  # honestly none: not counted as a wrong answer kept
    slow = ScriptedModel([code(f"final_answer({expected})")], latency=1.5)
    late = ask(slow, timeout=0.3)
    assert late.kind == "timeout" and not late.solved


@pytest.mark.parametrize(
    ("got", "expected"),
    [
        (32, 32),
        ("32", 32),
        (32.0, 32),
        (169676.5, 169676.51),  # one rounding step
        ("73.0%", 73.0),
        (" 'West' ", "West"),
        ("west", "West"),
        (["West"], "West"),
        (pd.Series({"East": 1.5, "West": 2.25}), {"East": 1.5, "West": 2.25}),
        ({"east": 1.5, "west": 2.25}, {"East": 1.5, "West": 2.25}),
        (pd.DataFrame({"region": ["East", "West"], "rev": [1.5, 2.25]}), {"East": 1.5, "West": 2.25}),
        ("['East', 'West']", ["East", "West"]),
        (pd.Index(["East", "West"]), ["East", "West"]),
        ("East, West", ["East", "West"]),
        (("Consumer", np.float64(101452.83)), ("Consumer", 101452.83)),  # which, and how much
        ({"Consumer": 101452.83}, ("Consumer", 101452.83)),
        ("Consumer: 101,452.83", ("Consumer", 101452.83)),
        ("2024-06", pd.Period("2024-06", "M")),  # which month
        ("June 2024", pd.Period("2024-06", "M")),
        (pd.Timestamp("2024-06-30"), pd.Period("2024-06", "M")),
    ],
)
def test_the_checker_accepts_the_same_answer_in_another_form(dq, got, expected):
    assert dq.check_answer(got, expected)


@pytest.mark.parametrize(
    ("got", "expected"),
    [
        (33, 32),
        (169676.4, 169676.51),
        (0.362, 36.2),
        ("Wes", "West"),
        ({"East": 1.5}, {"East": 1.5, "West": 2.25}),
        ({"East": 1.5, "West": 9.0}, {"East": 1.5, "West": 2.25}),
        (["West", "East"], ["East", "West"]),
        (None, 32),
        (True, 1),
        ("Error: KeyError", "West"),
        ("Consumer", ("Consumer", 101452.83)),  # half of "which, and how much"
        (101452.83, ("Consumer", 101452.83)),
        ("Consumer: 9.0", ("Consumer", 101452.83)),
        (6, pd.Period("2024-06", "M")),  # a bare number is no month
        ("9", pd.Period("2024-06", "M")),
        ("2024-07", pd.Period("2024-06", "M")),
    ],
)
def test_the_checker_refuses_wrong_answers(dq, got, expected):
    assert not dq.check_answer(got, expected)


def test_main_prints_a_table_and_a_one_line_summary_last(dq, capsys):
    outcomes = dq.main(["--scripted", "--only", "2,7"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert [o.number for o in outcomes] == [2, 7] and all(o.solved for o in outcomes)
    assert any(line.startswith("| 2 | group-by |") for line in lines)
    assert lines[-1].startswith("SUMMARY: scripted reference: 2/2 solved, median")
    assert any(line.startswith("failure kinds: none") for line in lines)


@pytest.mark.parametrize("chosen", ["clean", "messy"])
def test_the_small_models_answer_checks_take_every_reference_answer(dq, chosen):
    """No right answer is doubted: the reference code of every question of both sets passes the answer checks."""
    frames, questions = (
        (dq.make_frames(), dq.QUESTIONS) if chosen == "clean" else (dq.make_messy_frames(), dq.MESSY_QUESTIONS)
    )
    for question in questions:
        if question.kind == "chart":  # a chart's reference draws; its answer is the figure, checked apart
            continue
        namespace = {"pd": pd, "np": np, **{name: frame.copy() for name, frame in frames.items()}}
        code = question.code + "\nfinal_answer(result)"
        exec(question.code, namespace)
        context = AnswerContext(question.text, re.findall(r"`(\w+)`", question.text), code, namespace)
        assert answer_problems(namespace["result"], context) == [], question.text
