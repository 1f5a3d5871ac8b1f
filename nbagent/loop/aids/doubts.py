"""A doubt the data proves: the kind of doubt about an answer that never lets the answer stand."""

from __future__ import annotations

__all__ = ["Contradiction", "ProvedUntidy", "Untidy"]


class Contradiction(str):
    """A doubt the data proves, not a guess: the answer is wrong as it stands, however sure the model is of it.

    A plain `str` everywhere else (said in the refusal, compared with what was said before); only the code step
    asks whether a doubt is one, to end a run without an answer rather than let a wrong one stand."""


class Untidy(str):
    """A doubt that cleaning the data the code read answers: rows counted twice, numbers or labels read as the text
    holds them, blanks missed. The refusal can then offer the answer's code on the data cleaned first
    (`cleaned_program`)."""


class ProvedUntidy(Contradiction, Untidy):
    """An untidy-data doubt the data proves."""
