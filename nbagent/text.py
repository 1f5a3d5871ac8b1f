"""Shortening text for people and models: one helper, with named policies.

Every place that clips text (an observation fed back to the model, a value shown
in the prompt, a one-line summary, a managed agent's run summary) names one of
the policies below, so a limit is changed in one place and reads the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Truncation", "truncate", "OBSERVATION", "MODEL_ECHO", "RUN_SUMMARY", "VALUE_REPR", "ONE_LINE"]


@dataclass(frozen=True)
class Truncation:
    """Keep at most `limit` characters: the head, or head and tail ("middle"); `marker` says what was cut.

    `marker` may use `{dropped}` (the number of characters left out).
    """

    limit: int
    keep: str = "head"  # "head" | "middle"
    marker: str = "…"

    def __call__(self, text: str) -> str:
        if len(text) <= self.limit:
            return text
        mark = self.marker.format(dropped=len(text) - self.limit)
        if self.keep == "middle":
            half = self.limit // 2
            return text[:half] + mark + text[-half:]
        return text[: self.limit] + mark


OBSERVATION = Truncation(20_000, marker="\n[… {dropped} more characters]")  # code output the model reads
MODEL_ECHO = Truncation(2_000, marker="\n[…]")  # the model's own text quoted back in an error
RUN_SUMMARY = Truncation(2_000, keep="middle", marker="\n[…]\n")  # a managed agent's messages in its report
VALUE_REPR = Truncation(200)  # a variable's repr in the task text
ONE_LINE = Truncation(80)  # a final answer in a one-line summary


def truncate(text: str, policy: Truncation) -> str:
    """`text` shortened by `policy` (e.g. `truncate(logs, OBSERVATION)`)."""
    return policy(text)
