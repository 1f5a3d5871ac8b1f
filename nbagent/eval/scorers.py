"""Scorers: `exact_match()`, `numeric(tol=...)`, `includes()`, `regex(pattern)`, `llm_judge(model, rubric=...)`.

A scorer is any callable `(answer, expected, sample) -> bool | float | Score | None`
(`sample` is the task's `nbagent.eval.Sample`: `.task`, `.id`, `.metadata`, ...); two-argument
callables `(answer, expected)` work too. `True`/`False` count as 1/0, `None` as "not scored".
Its name (the results column) is its `name` attribute, else its `__name__`; pass a dict
`{name: scorer}` to choose names. A scorer that raises records an error for that sample and
scorer (the `scorer_errors` column) and the evaluation goes on.

Scorers grade answers only: a run that ended without a final answer (max steps reached, stopped,
timed out, stuck, failed) is not passed to any scorer and scores each one's minimum: 0, or the
scorer's `minimum` attribute when it has one (a scorer of -1 to 1 sets `minimum = -1`).

The built-ins are small classes, so they pickle (process pools, Dask) and show their settings.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Score",
    "answer_key",
    "exact_match",
    "numeric",
    "includes",
    "regex",
    "llm_judge",
    "normalize_text",
    "to_number",
]


@dataclass
class Score:
    """A scorer's verdict: `value` (1 = right, 0 = wrong, or anything in between; None = not scored).

    `explanation` says why (an LLM judge's reasoning); `answer` is what was compared, when the
    scorer extracted it from a longer output; `metadata` holds anything else.
    """

    value: float | None
    explanation: str | None = None
    answer: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------- normalising

_QUOTES = "\"'`“”‘’"
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def normalize_text(value: Any, case_sensitive: bool = False) -> str:
    """Runs of whitespace as one space, surrounding quotes and a trailing period removed, lower case."""
    text = "" if value is None else " ".join(str(value).split())
    while True:
        stripped = text.strip().rstrip(".").strip()
        if len(stripped) >= 2 and stripped[0] in _QUOTES and stripped[-1] in _QUOTES:
            stripped = stripped[1:-1]
        if stripped == text:
            return text if case_sensitive else text.casefold()
        text = stripped


def to_number(value: Any) -> float | None:
    """The value as a float when it is a number or reads as exactly one (`"12"`, `"1,200"`, `" 3.5. "`), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return to_number(value.item())
    text = normalize_text(value)
    if not text or not _NUMBER.fullmatch(text):
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def answer_key(answer: Any, case_sensitive: bool = False) -> str:
    """What of an answer a scorer compares: its number when it reads as one (`'21'`, `21`, `21.0` alike), else its
    normalised text. Two epochs whose answers have equal keys gave the same answer (nbagent.eval.compare)."""
    number = to_number(answer)
    if number is not None and math.isfinite(number):
        return repr(float(number))
    return normalize_text(answer, case_sensitive)


def _numbers_in(value: Any) -> list[float]:
    number = to_number(value)
    if number is not None:
        return [number]
    found = []
    for match in _NUMBER.findall("" if value is None else str(value)):
        try:
            found.append(float(match.replace(",", "").rstrip(".")))
        except ValueError:
            continue
    return found


class _Scorer:
    name = "scorer"

    def answer_key(self, answer: Any) -> str:
        """What this scorer compares of `answer` (its `Score.answer` when it extracted one)."""
        return answer_key(answer, getattr(self, "case_sensitive", False))

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{self.name}({options})"


# ---------------------------------------------------------------------------------------------- built-ins


class exact_match(_Scorer):
    """1 when the answer equals the reference after normalising: case, surrounding whitespace and quotes,
    a trailing period; numbers compare as numbers, so `12`, `12.0` and `"12"` match."""

    name = "exact_match"

    def __init__(self, case_sensitive: bool = False) -> None:
        self.case_sensitive = case_sensitive

    def __call__(self, answer: Any, expected: Any, sample: Any = None) -> float:
        a, e = to_number(answer), to_number(expected)
        if a is not None and e is not None:
            return float(math.isclose(a, e, rel_tol=1e-9, abs_tol=1e-12))
        same = normalize_text(answer, self.case_sensitive) == normalize_text(expected, self.case_sensitive)
        return float(same)


class numeric(_Scorer):
    """1 when the answer is within `tol` of the reference (`relative=True`: within `tol * |reference|`).

    The answer's number is the answer itself when it is one, else the last number in its text
    (`"The total is 1,200."` gives 1200); no number scores 0.
    """

    name = "numeric"

    def __init__(self, tol: float = 1e-6, relative: bool = False) -> None:
        if tol < 0:
            raise ValueError(f"numeric(tol=...) must be >= 0, got {tol}")
        self.tol = tol
        self.relative = relative

    def __call__(self, answer: Any, expected: Any, sample: Any = None) -> Score:
        reference = to_number(expected)
        if reference is None:
            numbers = _numbers_in(expected)
            if len(numbers) != 1:
                raise ValueError(f"numeric(): the reference {expected!r} is not a number")
            reference = numbers[0]
        found = _numbers_in(answer)
        if not found:
            return Score(0.0, explanation="no number in the answer")
        value = found[-1]
        limit = self.tol * abs(reference) if self.relative else self.tol
        close = abs(value - reference) <= limit or math.isclose(value, reference, rel_tol=1e-12)
        return Score(float(close), answer=repr(value))


class includes(_Scorer):
    """1 when the reference appears in the answer (case and whitespace folded unless `case_sensitive`).

    A list of references scores 1 when any of them appears.
    """

    name = "includes"

    def __init__(self, case_sensitive: bool = False) -> None:
        self.case_sensitive = case_sensitive

    def __call__(self, answer: Any, expected: Any, sample: Any = None) -> float:
        references = expected if isinstance(expected, (list, tuple)) else [expected]
        text = normalize_text(answer, self.case_sensitive)
        folded = [normalize_text(reference, self.case_sensitive) for reference in references]
        return float(any(reference in text for reference in folded if reference))


class regex(_Scorer):
    """Match `pattern` against the answer (`re.search`).

    With a group, the first group (or the group named `answer`) is extracted and compared with the
    reference as `exact_match` does; without groups, a match scores 1 (the reference is not used:
    "does the answer look like an ISO date?").
    """

    name = "regex"

    def __init__(self, pattern: str, flags: int = re.IGNORECASE | re.DOTALL) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled = re.compile(pattern, flags)

    def __getstate__(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "flags": self.flags}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["pattern"], state["flags"])

    def __call__(self, answer: Any, expected: Any, sample: Any = None) -> Score:
        match = self._compiled.search("" if answer is None else str(answer))
        if match is None:
            return Score(0.0, explanation=f"no match for {self.pattern!r}")
        if not self._compiled.groups:
            return Score(1.0, answer=match.group(0))
        groups = match.groupdict()
        extracted = groups["answer"] if "answer" in groups else match.group(1)
        return Score(exact_match()(extracted, expected), answer=extracted)


JUDGE_TEMPLATE = """You are grading an answer to a task.

Task:
{task}

Reference answer:
{expected}

Submitted answer:
{answer}

Grading instructions:
{rubric}

Explain your reasoning in one or two sentences, then end with a line `GRADE: C` (correct), \
`GRADE: P` (partially correct) or `GRADE: I` (incorrect)."""

DEFAULT_RUBRIC = "The submitted answer is correct when it means the same as the reference answer; wording may differ."
_GRADE = re.compile(r"GRADE\s*:\s*\**\s*([CPI])\b", re.IGNORECASE)
_GRADES = {"C": 1.0, "P": 0.5, "I": 0.0}


class llm_judge(_Scorer):
    """A model grades the answer against the reference and a rubric: C = 1, P = 0.5, I = 0.

    `model` is any nbagent model (`generate(messages) -> ChatMessage`); `template` may use
    `{task}`, `{expected}`, `{answer}` and `{rubric}`. The judge's text is the score's
    explanation; a reply without a `GRADE:` line is a scorer error (not a silent 0).
    """

    name = "llm_judge"

    def __init__(self, model: Any, rubric: str = DEFAULT_RUBRIC, template: str = JUDGE_TEMPLATE) -> None:
        if not callable(getattr(model, "generate", None)) and not callable(model):
            raise TypeError(f"llm_judge(model=...) needs a model with generate(messages), got {type(model).__name__}")
        self.model = model
        self.rubric = rubric
        self.template = template

    def __call__(self, answer: Any, expected: Any, sample: Any = None) -> Score:
        prompt = self.template.format(
            task=getattr(sample, "task", ""), expected=expected, answer=answer, rubric=self.rubric
        )
        messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
        generate = getattr(self.model, "generate", None) or self.model
        reply = generate(messages)
        text = getattr(reply, "content", reply)
        text = text if isinstance(text, str) else str(text)
        grades = _GRADE.findall(text)
        if not grades:
            raise ValueError(f"the judge's reply has no 'GRADE: C/P/I' line: {text[-300:]!r}")
        return Score(_GRADES[grades[-1].upper()], explanation=text.strip())

    def __repr__(self) -> str:
        return f"llm_judge(model={getattr(self.model, 'model_id', type(self.model).__name__)!r})"


# ---------------------------------------------------------------------------------------------- using scorers


def scorer_name(scorer: Callable[..., Any]) -> str:
    name = getattr(scorer, "name", None) or getattr(scorer, "__name__", None) or type(scorer).__name__
    return "scorer" if name == "<lambda>" else str(name)


def normalize_scorers(scorers: Any) -> dict[str, Callable[..., Any]]:
    """`None` (exact_match), one scorer, a list, or a dict `{name: scorer}` -> `{unique name: scorer}`."""
    if scorers is None:
        return {"exact_match": exact_match()}
    if isinstance(scorers, Mapping):
        items = [(str(name), scorer) for name, scorer in scorers.items()]
    elif callable(scorers):
        items = [(scorer_name(scorers), scorers)]
    elif isinstance(scorers, (list, tuple)):
        items = [(scorer_name(s), s) for s in scorers]
    else:
        raise TypeError(
            f"scorers must be a scorer, a list of scorers or a dict name -> scorer, got {type(scorers).__name__}"
        )
    named: dict[str, Callable[..., Any]] = {}
    for name, scorer in items:
        if not callable(scorer):
            raise TypeError(
                f"The scorer {name!r} is a {type(scorer).__name__}, not a callable (answer, expected, sample)"
            )
        unique, n = name, 1
        while unique in named:
            n += 1
            unique = f"{name}_{n}"
        named[unique] = scorer
    if not named:
        raise ValueError("scorers is empty: pass at least one scorer (or None for exact_match)")
    return named


def apply_scorer(scorer: Callable[..., Any], answer: Any, expected: Any, sample: Any) -> Score:
    """Call a scorer (3 or 2 positional arguments) and turn what it returns into a `Score`."""
    result = scorer(answer, expected, sample) if _takes_three(scorer) else scorer(answer, expected)
    if isinstance(result, Score):
        value = result.value
        if value is not None:
            result.value = _as_float(value)
        return result
    return Score(None if result is None else _as_float(result))


def _as_float(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) or (type(value).__module__ == "numpy" and hasattr(value, "item")):
        return float(value)
    raise TypeError(f"a scorer must return a bool, a number, a Score or None, not {type(value).__name__}")


def _takes_three(scorer: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(scorer).parameters.values())
    except (TypeError, ValueError):
        return True
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3
