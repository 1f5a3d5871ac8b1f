"""Live progress: one protocol, a notebook view (the live table) and a terminal view (tqdm).

`Tracker` keeps the numbers (done / total, running score per agent, errors, runs without an answer, tokens, elapsed and
remaining time, the earlier calls' time of a resumed evaluation included), the records it saw, and
once it finishes, the paired comparisons of the agents. A progress view implements `start(tracker)`, `update(tracker, record)` (a sample
finished; `record` is None for a clock tick, a few times a second) and `close(tracker)`;
`evaluate(progress=...)` takes True (the notebook view in a kernel, tqdm elsewhere), False, or
any object with those three methods.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, Protocol

from nbagent.eval.compare import comparison_rows, display_cells, epoch_note, nondeterministic
from nbagent.eval.outcomes import is_no_answer
from nbagent.notebook.kernel import in_kernel

__all__ = ["Progress", "Tracker", "NotebookProgress", "TqdmProgress", "NoProgress", "make_progress"]


class Progress(Protocol):
    def start(self, tracker: Tracker) -> None: ...

    def update(self, tracker: Tracker, record: dict[str, Any] | None) -> None: ...

    def close(self, tracker: Tracker) -> None: ...


class Tracker:
    """The running numbers of an evaluation; `snapshot()` is what views show."""

    def __init__(
        self,
        total: int,
        agents: list[str],
        scorers: list[str],
        engine: str = "",
        epochs: int = 1,
        earlier_s: float = 0.0,
    ) -> None:
        self.total = total
        self.agents = list(agents)
        self.scorers = list(scorers)
        self.engine = engine
        self.epochs = epochs
        self.earlier_s = earlier_s  # the time of earlier calls on the same log_dir (a resumed evaluation)
        self.started = time.monotonic()
        self.finished_at: float | None = None
        self.records: list[dict[str, Any]] = []  # every record added, resumed ones first
        self.comparisons: list[dict[str, Any]] = []  # set when it finishes (compare.comparison_rows)
        self.done = 0
        self.resumed = 0  # finished in an earlier call (log_dir)
        self.errors = 0
        self.no_answer = 0  # runs that ended without a final answer (scored as failures)
        self.cancelled = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.status = "running"
        self.open_run: Any = None  # key -> a widget of that sample's run (set by evaluate)
        self._agent = {name: {"done": 0, "errors": 0, "no_answer": 0, "sums": {}, "counts": {}} for name in self.agents}
        self._varying_cache: dict[tuple[str, str], bool | None] = {}
        self._varying_at = -1

    def add(self, record: dict[str, Any], resumed: bool = False) -> None:
        self.records.append(record)
        state = record.get("state")
        stats = self._agent.setdefault(
            record["agent"], {"done": 0, "errors": 0, "no_answer": 0, "sums": {}, "counts": {}}
        )
        if state == "cancelled":
            self.cancelled += 1
            return
        self.done += 1
        self.resumed += int(resumed)
        stats["done"] += 1
        if state == "error":
            self.errors += 1
            stats["errors"] += 1
        if is_no_answer(record):
            self.no_answer += 1
            stats["no_answer"] += 1
        self.input_tokens += int(record.get("input_tokens") or 0)
        self.output_tokens += int(record.get("output_tokens") or 0)
        for name, value in (record.get("scores") or {}).items():
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                stats["sums"][name] = stats["sums"].get(name, 0.0) + float(value)
                stats["counts"][name] = stats["counts"].get(name, 0) + 1

    @property
    def elapsed_s(self) -> float:
        """The evaluation's whole time: this call's and, resumed, the earlier calls'."""
        return self.earlier_s + self.this_call_s

    @property
    def this_call_s(self) -> float:
        return (self.finished_at or time.monotonic()) - self.started

    @property
    def remaining_s(self) -> float | None:
        ran = self.done - self.resumed
        left = self.total - self.done - self.cancelled
        if self.status != "running":
            return 0.0
        if ran <= 0:
            return None
        return self.this_call_s / ran * max(left, 0)

    def score(self, agent: str, scorer: str) -> float | None:
        stats = self._agent.get(agent, {})
        count = stats.get("counts", {}).get(scorer, 0)
        return stats["sums"][scorer] / count if count else None

    def finish(self, status: str) -> None:
        self.status = status
        self.finished_at = time.monotonic()
        if len(self.agents) > 1:
            try:
                rows = comparison_rows(self.records, self.agents, self.scorers)
                self.comparisons = [display_cells(row) for row in rows]
            except ImportError:  # numpy is not installed: the results' summary needs pandas anyway
                self.comparisons = []

    @property
    def note(self) -> str:
        return epoch_note(self.epochs, len(self.agents))

    def snapshot(self) -> dict[str, Any]:
        remaining = self.remaining_s
        return {
            "status": self.status,
            "done": self.done,
            "total": self.total,
            "resumed": self.resumed,
            "errors": self.errors,
            "no_answer": self.no_answer,
            "cancelled": self.cancelled,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "elapsed_s": round(self.elapsed_s, 2),
            "remaining_s": None if remaining is None else round(remaining, 1),
            "engine": self.engine,
            "scorers": self.scorers,
            "epochs": self.epochs,
            "note": self.note,
            "comparisons": self.comparisons,
            "agents": [
                {
                    "agent": name,
                    "done": stats["done"],
                    "errors": stats["errors"],
                    "no_answer": stats["no_answer"],
                    "scores": {s: self.score(name, s) for s in self.scorers},
                    "nondeterministic": sum(bool(flag) for (agent, _), flag in self.varying().items() if agent == name),
                }
                for name, stats in self._agent.items()
            ],
        }

    def varying(self) -> dict[tuple[str, str], bool | None]:
        """(agent, task id) -> whether its epochs answered differently (compare.nondeterministic); {} with one epoch."""
        if self.epochs < 2:
            return {}
        if self._varying_at != len(self.records):
            self._varying_cache = nondeterministic(self.records)
            self._varying_at = len(self.records)
        return self._varying_cache

    def postfix(self) -> str:
        """One line: the first scorer's running mean per agent, errors, tokens."""
        parts = []
        if self.scorers:
            for name in self._agent:
                value = self.score(name, self.scorers[0])
                parts.append(f"{name} {'–' if value is None else f'{value:.2f}'}")
        if self.errors:
            parts.append(f"{self.errors} err")
        if self.no_answer:
            parts.append(f"{self.no_answer} no answer")
        parts.append(f"{format_count(self.input_tokens + self.output_tokens)} tok")
        return " · ".join(parts)


def format_count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 10_000:
        return f"{n / 1e3:.0f}k"
    if n >= 1000:
        return f"{n / 1e3:.1f}k"
    return str(n)


class NoProgress:
    def start(self, tracker: Tracker) -> None:
        pass

    def update(self, tracker: Tracker, record: dict[str, Any] | None) -> None:
        pass

    def close(self, tracker: Tracker) -> None:
        pass


class TqdmProgress:
    """A tqdm bar on stderr: samples done, and the running score per agent, errors and tokens after it."""

    def __init__(self, file: Any = None) -> None:
        self.file = file
        self.bar: Any = None

    def start(self, tracker: Tracker) -> None:
        from tqdm import tqdm

        self.bar = tqdm(
            total=tracker.total,
            initial=tracker.done,
            desc="evaluate",
            unit="sample",
            file=self.file or sys.stderr,
            dynamic_ncols=True,
            mininterval=0.2,
        )
        self.bar.set_postfix_str(tracker.postfix(), refresh=False)

    def update(self, tracker: Tracker, record: dict[str, Any] | None) -> None:
        if record is None or self.bar is None:
            return
        if record.get("state") != "cancelled":
            self.bar.set_postfix_str(tracker.postfix(), refresh=False)
            self.bar.update(1)

    def close(self, tracker: Tracker) -> None:
        if self.bar is None:
            return
        self.bar.set_postfix_str(tracker.postfix() + ("" if tracker.status == "done" else f" · {tracker.status}"))
        self.bar.close()
        out = self.file or sys.stderr
        for c in tracker.comparisons:  # under the bar: is a difference between agents more than noise?
            print(f"{c['pair']} ({c['scorer']}, {c['tasks']} tasks): {c['conclusion']}, {c['difference']}", file=out)
        if tracker.note:
            print(tracker.note, file=out)


class NotebookProgress:
    """The live table in the cell (rows appear as samples finish; a click opens a run below it).

    Shown with a display id: the final state replaces it when the evaluation ends. Without the
    widget front-end, the same display is refreshed as static HTML instead.
    """

    interval = 0.25  # seconds between pushes of the rows

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.panel: Any = None
        self.display_id = f"nbagent-eval-{id(self):x}-{time.monotonic_ns():x}"
        self._pushed = 0
        self._last = 0.0

    def start(self, tracker: Tracker) -> None:
        from IPython.display import display

        from nbagent.eval import display as views

        self.rows = [views.row_for(r) for r in tracker.records]  # resumed: the samples from the log come first
        if views.widgets_available():
            self.panel = views.EvalPanel(tracker.scorers, tracker.snapshot(), tracker.open_run)
        display(self._bundle(tracker), raw=True, display_id=self.display_id)

    def _marked(self, tracker: Tracker) -> list[dict[str, Any]]:
        """The rows, each with whether its task's answers vary between epochs (known once a second epoch ends)."""
        flags = tracker.varying()
        return [{**row, "nondeterministic": flags.get((row["agent"], row["id"]))} for row in self.rows]

    def _bundle(self, tracker: Tracker) -> dict[str, Any]:
        from nbagent.eval import display as views

        static = views.progress_html(tracker.snapshot(), self._marked(tracker))
        text = f"evaluate: {tracker.done}/{tracker.total} samples ({tracker.status})"
        if self.panel is None:
            return {"text/html": static, "text/plain": text}
        return self.panel.bundle(static, text)

    def update(self, tracker: Tracker, record: dict[str, Any] | None) -> None:
        from nbagent.eval.display import row_for

        if record is not None:
            self.rows.append(row_for(record))
        now = time.monotonic()
        if now - self._last >= self.interval * (1 + len(self.rows) / 2000):
            self._push(tracker)

    def _push(self, tracker: Tracker) -> None:
        self._last = time.monotonic()
        if self.panel is None:
            from IPython.display import update_display

            update_display(self._bundle(tracker), raw=True, display_id=self.display_id)
            return
        if len(self.rows) != self._pushed:
            self._pushed = len(self.rows)
            self.panel.view.rows = self._marked(tracker)
        self.panel.view.progress = tracker.snapshot()

    def close(self, tracker: Tracker) -> None:
        from IPython.display import update_display

        self._push(tracker)
        update_display(self._bundle(tracker), raw=True, display_id=self.display_id)


def make_progress(progress: Any) -> Any:
    if progress is False or progress is None:
        return NoProgress()
    if progress is True:
        if in_kernel():
            return NotebookProgress()
        return TqdmProgress()
    if all(callable(getattr(progress, m, None)) for m in ("start", "update", "close")):
        return progress
    raise TypeError(
        "progress must be True, False, or an object with start(tracker), update(tracker, record), close(tracker)"
    )
