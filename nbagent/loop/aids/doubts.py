"""A doubt the data proves: the kind of doubt about an answer that never lets the answer stand."""

from __future__ import annotations

__all__ = ["Contradiction", "Mended", "ProvedUntidy", "Untidy"]


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


class Mended(Contradiction):
    """A proved doubt whose fix is one expression of the code written another way: ``mend`` is (the expression as
    the code writes it, as it must be written), both as `ast.unparse` gives them. A program offered for the answer's
    other doubts is made from the code with the mend in (`Coach.cleaned_program`): the messy run's net revenue,
    offered its code with the repeats dropped, ran it with the refunds still subtracted and was refused again."""

    mend: tuple[str, str]

    def __new__(cls, text: str, mend: tuple[str, str]) -> Mended:
        doubt = super().__new__(cls, text)
        doubt.mend = mend
        return doubt
