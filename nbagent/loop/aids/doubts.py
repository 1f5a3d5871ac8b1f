"""A doubt the data proves: the kind of doubt about an answer that never lets the answer stand."""

from __future__ import annotations

__all__ = ["Contradiction"]


class Contradiction(str):
    """A doubt the data proves, not a guess: the answer is wrong as it stands, however sure the model is of it.

    A plain `str` everywhere else (said in the refusal, compared with what was said before); only the code step
    asks whether a doubt is one, to end a run without an answer rather than let a wrong one stand."""
