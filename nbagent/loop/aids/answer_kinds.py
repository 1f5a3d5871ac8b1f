"""What kind of answer a question asks for, and whether the answer is of that kind.

Two shapes of question a small model answers by half (measured in a trial with the offline model):

* two things at once, "Which segment … and how much?": the answer must hold both, a name and a number
  (`("Consumer", 25124.05)`, `{"Consumer": 25124.05}`, "Consumer: 25124.05"), not the segment alone;
* a date, "Which month had the highest revenue?": the answer must be a date ("2024-10", "October 2024",
  a Timestamp), not a bare number such as 9 (a row position, or a month number without its year).

Both checks look only at the question's words and the answer's form, never at a benchmark's data: each
returns the sentence `answer_checks` refuses the answer with, or "".
"""

from __future__ import annotations

import re
from typing import Any

from .data_card import is_number
from .doubts import Contradiction

__all__ = ["asks_two_things", "both_things_missing", "certainly_one_thing", "date_missing"]

_WHICH = r"\b(?:which|who|whose)\b"
_HOW_MUCH = r"\bhow\s+(?:much|many)\b"
# "Which segment …, and how much?" / "Which month …, and what was its revenue?" / "How much … and which …?"
_TWO_THINGS = re.compile(
    rf"{_WHICH}[^?]*?\band\s+(?P<second>how\s+(?:much|many)|what)\b|{_HOW_MUCH}[^?]*?\band\s+(?P<first>which|who)\b",
    re.IGNORECASE,
)
_DATE_ASKED = re.compile(
    r"\b(?:which|what|on\s+which|in\s+which)\s+(?P<unit>month|day|date|year|week|quarter)\b", re.IGNORECASE
)
_TEXT_PARTS = re.compile(r"[:;,(=]|\s[-–]\s|\bwith\b|\bat\b", re.IGNORECASE)  # "Consumer: 25124.05", "May (12)"
_LETTERS = re.compile(r"[^\W\d_]")
_DIGITS = re.compile(r"\d")
_BARE_NUMBER = re.compile(r"^\s*-?\d+(?:\.\d+)?\s*$")
_YEAR = range(1000, 3000)


def asks_two_things(question: str) -> bool:
    """ "Which … and how much?": the answer holds a thing and an amount (or two things)."""
    return _TWO_THINGS.search(question) is not None


def both_things_missing(question: str, answer: Any, line: str = "") -> str:
    """ "Which … and how much?" answered with one of the two things; "" when both are there or one was asked.

    `line` is the line to write when the code shows it (`final_answer({per.idxmax(): per.max()})`).
    """
    asked = _TWO_THINGS.search(question)
    if not asked:
        return ""
    quantity = (asked.group("second") or "how").lower().startswith("how")  # "… and what …" may ask for a name
    parts = _parts(answer)
    if parts is None:  # text: both in one sentence ("Consumer: 25124.05", "2024-10 with 310 orders")
        digits, apart = bool(_DIGITS.search(answer)), bool(_LETTERS.search(answer) or _TEXT_PARTS.search(answer))
        has_both = digits and apart if quantity else bool(_TEXT_PARTS.search(answer)) or digits and apart
        only = "text without a number" if quantity and not digits else "one value"
    else:
        numbers = sum(is_number(part) for part in parts)
        has_both = len(parts) >= 2 and (0 < numbers < len(parts) if quantity else True)
        only = "one value" if len(parts) < 2 else "numbers only" if numbers == len(parts) else "names only"
    if has_both:
        return ""
    # one argument that holds both: a small model given final_answer((a, b)) drops the inner parentheses
    example = "final_answer({name: amount})" if quantity else "final_answer([first, second])"
    if quantity and line:
        return (
            f"the question asks two things (which one, and how much), but the answer gives {only}: answer both "
            f"in one value: {line}"
        )
    return (
        f"the question asks two things (which one, and {'how much' if quantity else 'what'}), but the answer "
        f"gives {only}: answer both in one value, e.g. {example}"
    )


def date_missing(question: str, answer: Any, date_columns: list[tuple[str, str]]) -> str:
    """ "Which month …?" answered with a bare number (a row position, or a month without its year)."""
    asked = _DATE_ASKED.search(question)
    if not asked:
        return ""
    unit = asked.group("unit").lower()
    parts = _parts(answer)
    values = [answer] if parts is None else parts
    if not values or not all(_bare_number(value, unit) for value in values):
        return ""
    where = f" (the dates are in {date_columns[0][0]}[{date_columns[0][1]!r}])" if date_columns else ""
    said = (
        f"the question asks which {unit}, but the answer is a bare number, not a {unit}: a number like this is "
        f"a row position or a {unit} without its year. Answer with the {unit} itself{where}, e.g. "
        f"{_DATE_EXAMPLES.get(unit, _DATE_EXAMPLES['date'])}"
    )
    # no month is numbered 0 or 13: such a number is a row position, whatever the model's certainty (the messy run
    # answered "which month" with a row number three times, and it stood)
    return Contradiction(said) if unit == "month" and not all(_month_number(value) for value in values) else said


_DATE_EXAMPLES = {
    "month": "'2024-10' (.dt.strftime('%Y-%m')) or 'October 2024'",
    "year": "2024",
    "week": "'2024-W41' or the week's first day '2024-10-07'",
    "quarter": "'2024Q4'",
    "date": "'2024-10-07' (.dt.strftime('%Y-%m-%d'))",
    "day": "'2024-10-07' (.dt.strftime('%Y-%m-%d')) or the weekday 'Monday'",
}


def certainly_one_thing(question: str, answer: Any) -> bool:
    """Whether a "which … and how much?" answer holds one thing beyond doubt: one number or name alone, or no
    number anywhere in it (text without a digit; a pair of texts, such as the messy run's `{'': 'Pia ChenOz Evans…'}`,
    a blank segment and the names a sum() joined). No reading of the question's words makes that both; a pair of
    the wrong kinds with a number in it might be."""
    asked = _TWO_THINGS.search(question)
    if not asked or not (asked.group("second") or "how").lower().startswith("how"):
        return False
    if isinstance(answer, str):
        return not _DIGITS.search(answer)
    parts = _parts(answer)
    if parts is None:
        return False
    if len(parts) == 1 and not isinstance(answer, (dict, list, tuple)):
        return True
    return not any(is_number(part) or isinstance(part, str) and _DIGITS.search(part) for part in parts)


def _parts(answer: Any) -> list[Any] | None:
    """The values an answer holds (a pair, a dict's key and value, a Series' labels and values); None for text."""
    if isinstance(answer, str):
        return None
    if isinstance(answer, dict):
        return [part for key, value in list(answer.items())[:50] for part in (key, value)]
    if type(answer).__name__ == "Series" and type(answer).__module__.startswith("pandas"):
        return [part for key, value in list(answer.items())[:50] for part in (key, value)]
    if isinstance(answer, (list, tuple)):
        return list(answer[:100])
    return [answer]


def _month_number(value: Any) -> bool:
    number = float(value)
    return number.is_integer() and 1 <= number <= 12


def _bare_number(value: Any, unit: str) -> bool:
    """A number (or digits as text) that cannot be the date asked: any number, but a year for "which year"."""
    if isinstance(value, str):
        if not _BARE_NUMBER.match(value):
            return False
        value = float(value)
    if not is_number(value):
        return False
    return not (unit == "year" and float(value).is_integer() and int(value) in _YEAR)
