"""The built-in scorers and their edge cases; custom callables; naming."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from nbagent import ScriptedModel
from nbagent.eval import Sample, Score
from nbagent.eval.scorers import (
    apply_scorer,
    exact_match,
    includes,
    llm_judge,
    normalize_scorers,
    numeric,
    regex,
    to_number,
)

SAMPLE = Sample(id="t0", task="What is the capital of France?", expected="Paris")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (12, "12"),
        ("12.0", 12),
        (12.0, "12"),
        (np.int64(12), "12"),
        ("1,200", 1200),
        (" Paris. ", "paris"),
        ('"Paris"', "Paris"),
        ("'Paris'.", "PARIS"),
        ("New  York", "new york"),
        (None, ""),
        (True, "true"),
        ([1, 2], "[1, 2]"),
    ],
)
def test_exact_match_normalises(answer, expected):
    assert exact_match()(answer, expected, SAMPLE) == 1.0


@pytest.mark.parametrize(
    ("answer", "expected"),
    [(13, "12"), ("Paris, France", "Paris"), ("12a", "12"), (True, 1), (None, "x"), ("1.2.3", "1.2")],
)
def test_exact_match_rejects(answer, expected):
    assert exact_match()(answer, expected, SAMPLE) == 0.0


def test_exact_match_case_sensitive():
    assert exact_match(case_sensitive=True)("Paris.", "Paris") == 1.0
    assert exact_match(case_sensitive=True)("paris", "Paris") == 0.0


def test_to_number():
    assert to_number(" 3.5. ") == 3.5 and to_number("-2e3") == -2000.0 and to_number("1,000") == 1000.0
    assert to_number("3 apples") is None and to_number(False) is None and to_number("") is None


def test_numeric_tolerance_absolute_and_relative():
    assert numeric(tol=0.01)(3.141, 3.14).value == 1.0
    assert numeric(tol=0.0001)(3.141, 3.14).value == 0.0
    assert numeric(tol=0.01, relative=True)(1005, 1000).value == 1.0
    assert numeric(tol=0.001, relative=True)(1005, 1000).value == 0.0
    assert numeric()(0.1 + 0.2, 0.3).value == 1.0


def test_numeric_reads_the_last_number_of_a_text():
    score = numeric()("First 3, then the total is 1,200.", "1200")
    assert score.value == 1.0 and score.answer == "1200.0"
    assert numeric()("no idea", 4) == Score(0.0, explanation="no number in the answer")


def test_numeric_reference_must_be_a_number():
    with pytest.raises(ValueError, match="not a number"):
        numeric()(3, "three")
    with pytest.raises(ValueError, match="tol"):
        numeric(tol=-1)


def test_includes():
    assert includes()("The capital is  PARIS, of course", "paris") == 1.0
    assert includes()("The capital is Lyon", "Paris") == 0.0
    assert includes()("It is Lyon", ["Paris", "Lyon"]) == 1.0
    assert includes(case_sensitive=True)("paris", "Paris") == 0.0
    assert includes()("anything", "") == 0.0  # an empty reference matches nothing


def test_regex_extracts_a_group_and_compares():
    scorer = regex(r"ANSWER:\s*(\S+)")
    assert scorer("reasoning... ANSWER: 42", "42.0").value == 1.0
    assert scorer("ANSWER: 41", 42) == Score(0.0, answer="41")
    assert regex(r"(?P<answer>\d{4})-\d\d")("in 2024-05", "2024").value == 1.0


def test_regex_without_groups_checks_the_shape():
    date = regex(r"^\d{4}-\d{2}-\d{2}$")
    assert date("2024-05-01", None).value == 1.0
    assert date("May 1st", None).value == 0.0


def test_builtins_pickle_and_show_their_settings():
    for scorer in (exact_match(), numeric(tol=0.5), includes(), regex(r"(\d+)")):
        copy = pickle.loads(pickle.dumps(scorer))
        assert copy("x 12", "12", SAMPLE) == scorer("x 12", "12", SAMPLE)
    assert repr(numeric(tol=0.5)) == "numeric(tol=0.5, relative=False)"


def test_llm_judge_grades_and_explains():
    judge = ScriptedModel(["The answer names the right city.\nGRADE: C", "Close but no.\nGRADE: **P**", "GRADE: I"])
    scorer = llm_judge(judge, rubric="Be strict.")
    first = scorer("Paris", "Paris", SAMPLE)
    assert first.value == 1.0 and "right city" in first.explanation
    assert scorer("Paris, Texas", "Paris", SAMPLE).value == 0.5
    assert scorer("Lyon", "Paris", SAMPLE).value == 0.0
    prompt = judge.calls[0][0]["content"][0]["text"]
    assert (
        "What is the capital of France?" in prompt and "Be strict." in prompt and "Submitted answer:\nParis" in prompt
    )


def test_llm_judge_without_a_grade_is_an_error():
    with pytest.raises(ValueError, match="no 'GRADE: C/P/I' line"):
        llm_judge(ScriptedModel(["I think it is fine."]))("a", "b", SAMPLE)
    with pytest.raises(TypeError, match="generate"):
        llm_judge("gpt")


def test_apply_scorer_accepts_what_callables_return():
    assert apply_scorer(lambda a, e, s: a == e, 1, 1, SAMPLE) == Score(1.0)
    assert apply_scorer(lambda a, e: 0.25, 1, 1, SAMPLE) == Score(0.25)
    assert apply_scorer(lambda a, e, s: None, 1, 1, SAMPLE) == Score(None)
    assert apply_scorer(lambda a, e, s: Score(True, explanation="ok"), 1, 1, SAMPLE) == Score(1.0, "ok")
    assert apply_scorer(lambda *args: np.float32(0.5), 1, 1, SAMPLE) == Score(0.5)
    assert apply_scorer(
        lambda a, e, s: s.metadata["level"] == 2, 1, 1, Sample("x", "t", 1, metadata={"level": 2})
    ) == Score(1.0)
    with pytest.raises(TypeError, match="must return a bool, a number, a Score or None"):
        apply_scorer(lambda a, e, s: "yes", 1, 1, SAMPLE)


def test_scorer_names():
    def close_enough(answer, expected, sample):
        return True

    named = normalize_scorers([exact_match(), close_enough, lambda a, e: 1, exact_match()])
    assert list(named) == ["exact_match", "close_enough", "scorer", "exact_match_2"]
    assert list(normalize_scorers({"em": exact_match()})) == ["em"]
    assert list(normalize_scorers(None)) == ["exact_match"]
    assert list(normalize_scorers(numeric())) == ["numeric"]
    with pytest.raises(TypeError, match="not a callable"):
        normalize_scorers({"x": 3})
    with pytest.raises(ValueError, match="empty"):
        normalize_scorers([])
