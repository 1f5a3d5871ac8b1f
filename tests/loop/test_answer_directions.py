"""A direction the question asks for ("improved the most", "biggest drop", "grew") is checked against the sign the
code computed, where the code shows which way its difference runs."""

from __future__ import annotations

import pandas as pd
import pytest

from nbagent.loop.aids.answers import AnswerContext, answer_problems


def students() -> pd.DataFrame:
    return pd.DataFrame({"name": ["Ada", "Bo", "Cy", "Dee"], "before": [60, 75, 50, 80], "after": [72, 70, 65, 81]})


def doubts(question: str, code: str) -> list[str]:
    namespace: dict = {"students": students()}
    answered: list = []
    exec(code, {"final_answer": answered.append, "pd": pd}, namespace)
    return answer_problems(answered[-1], AnswerContext(question, ["students"], code, namespace))


IMPROVED = "Who improved the most in `students`?"
BY_NAME = "d = students.set_index('name')\n"


def test_who_improved_the_most_answered_with_the_largest_fall_is_refused():
    # the users' case: idxmin of after - before, the opposite direction
    (said,) = doubts(
        IMPROVED, "d = students['after'] - students['before']\nfinal_answer(students.loc[d.idxmin(), 'name'])"
    )
    assert said.startswith("the question asks for the largest increase, but the code picks the smallest value of `d`")
    assert "students['after'] - students['before'] (idxmin), which is the largest fall" in said
    assert "Pick the largest instead" in said and "'Cy'" not in said  # the way to fix it, not the answer


@pytest.mark.parametrize(
    "code",
    [
        "d = students['after'] - students['before']\nfinal_answer(students.loc[d.idxmax(), 'name'])",
        "d = students['before'] - students['after']\nfinal_answer(students.loc[d.idxmin(), 'name'])",  # turned round
        BY_NAME + "d = (d['after'] - d['before']).round(1)\nfinal_answer((d.idxmax(), d.max()))",
        BY_NAME + "d = d['after'] / d['before'] - 1\nfinal_answer(d.idxmax())",  # no difference: not read
        BY_NAME + "d = (d['after'] - d['before']).abs()\nfinal_answer(d.idxmin())",  # a size: not read
    ],
)
def test_the_right_pick_passes(code):
    assert doubts(IMPROVED, code) == []


def test_the_pick_is_followed_through_names_and_rounding():
    code = (
        "d = students['after'] - students['before']\nd = d.round(1)\nbest = d.idxmin()\n"
        "final_answer(students['name'][best])"
    )
    (said,) = doubts(IMPROVED, code)
    assert "picks the smallest value of `d` = d.round(1) (idxmin)" in said


def test_an_answer_that_went_the_other_way_is_refused_whatever_the_pick():
    code = BY_NAME + "d = d['after'] - d['before']\nfinal_answer(d.sort_values().index[0])"
    (said,) = doubts(IMPROVED, code)
    assert said.startswith("the question asks for the largest increase, but the answer's 'Bo' fell in `d`")


@pytest.mark.parametrize(
    ("difference", "pick", "refused"),
    [
        ("d['after'] - d['before']", "idxmax", True),  # the largest rise for the biggest drop
        ("d['after'] - d['before']", "idxmin", False),
        ("d['before'] - d['after']", "idxmax", False),
        ("d['before'] - d['after']", "idxmin", True),
    ],
)
def test_the_biggest_drop(difference, pick, refused):
    said = doubts(
        "Which student had the biggest drop in `students`?", f"{BY_NAME}d = {difference}\nfinal_answer(d.{pick}())"
    )
    assert bool(said) is refused
    assert not said or said[0].startswith("the question asks for the largest decrease, but the code picks")


def test_which_grew_lists_only_those_that_grew():
    question = "Which students improved their score in `students`? Give a list of names."
    grown = BY_NAME + "d = d['after'] - d['before']\n"
    assert doubts(question, grown + "final_answer(list(d[d > 0].index))") == []
    (said,) = doubts(question, grown + "final_answer(list(d.index))")
    assert said.startswith("the question asks for an increase, but the answer's 'Bo' fell in `d` (its change is -5)")


@pytest.mark.parametrize(
    ("later", "earlier"),
    [("score_2024", "score_2023"), ("end", "start"), ("new", "old"), ("June", "May"), ("q2", "q1"), ("last", "first")],
)
def test_the_way_a_difference_runs_is_read_from_its_sides(later, earlier):
    frame = f"s = students.set_index('name').rename(columns={{'after': '{later}', 'before': '{earlier}'}})\n"
    assert doubts(IMPROVED, f"{frame}d = s['{later}'] - s['{earlier}']\nfinal_answer(d.idxmax())") == []
    assert doubts(IMPROVED, f"{frame}d = s['{later}'] - s['{earlier}']\nfinal_answer(d.idxmin())")


def test_diff_and_positions_run_later_minus_earlier():
    rows = "s = students.set_index('name')[['before', 'after']].T\n"
    assert doubts(IMPROVED, rows + "d = s.diff().iloc[-1]\nfinal_answer(d.idxmin())")
    assert doubts(IMPROVED, rows + "d = s.iloc[-1] - s.iloc[0]\nfinal_answer(d.idxmax())") == []
    assert doubts(IMPROVED, rows + "d = s.iloc[-1] - s.iloc[0]\nfinal_answer(d.idxmin())")


def test_a_difference_without_a_time_order_is_not_read():
    frame = "s = students.set_index('name').rename(columns={'after': 'spring', 'before': 'fall'})\n"
    assert doubts(IMPROVED, f"{frame}d = s['spring'] - s['fall']\nfinal_answer(d.idxmin())") == []


def test_a_change_asked_without_a_direction_takes_any_sign():
    code = "d = students['after'] - students['before']\nfinal_answer(int(d.sum()))"
    assert doubts("By how much did the scores in `students` change in total (negative if they fell)?", code) == []
    assert doubts("How much did the scores in `students` increase in total?", code) == []  # a fall may be the answer
