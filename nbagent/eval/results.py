"""`EvalResults`: the samples as a pandas DataFrame, a summary per agent, and every run reopenable."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

from nbagent.eval.compare import COLUMNS as COMPARISON_COLUMNS
from nbagent.eval.compare import SUGGESTED_EPOCHS, comparison_rows, epoch_note, epochs_run, nondeterministic
from nbagent.eval.intervals import interval95
from nbagent.eval.log import EvalLog, read_records
from nbagent.eval.outcomes import is_no_answer, settle
from nbagent.eval.progress import Tracker
from nbagent.eval.samples import Key, sample_key

__all__ = ["EvalResults"]

BASE_COLUMNS = [
    "agent",
    "id",
    "epoch",
    "task",
    "expected",
    "answer",
    "state",
    "answered",
    "outcome",
    "steps",
    "input_tokens",
    "output_tokens",
    "duration_s",
    "error",
]


class EvalResults:
    """The results of `evaluate()`: one record per (agent, task, epoch).

    - `.df`: a DataFrame, one row per sample (columns `agent, id, epoch, task, expected, answer,
      state, answered, outcome, steps, input_tokens, output_tokens, duration_s, error`, one per
      scorer, `scorer_errors`,
      `nondeterministic` (its task's answers or scores differ between epochs; NA with one epoch),
      `reproducible` with `evaluate(..., reproducible=True)` (the run's program, without the model, gives its
      answer; NA when it did not answer),
      `<scorer>_explanation` when a scorer explained itself, then the tasks' metadata columns).
      `answered` is False for a run that ended without a final answer (its `outcome` says why, e.g.
      "no answer (max steps)"; its `answer` is the model's closing reply, not scored): every
      scorer gave it its minimum, 0. It is NA when no run ended (`outcome` "error" or "cancelled");
    - `.summary()`: one row per agent;
    - `.compare()`: one row per pair of agents and scorer: the paired difference, its 95% interval,
      its p-value and whether it is significant (nbagent.eval.compare says how);
    - `.note`: what the results cannot tell (one epoch: sampling noise from a real difference), or "";
    - `.memory(id, agent=None, epoch=0)`: the `AgentMemory` of a sample's run; `.show(...)` shows it
      in the step widget;
    - `EvalResults.load(log_dir)`: the results of an evaluation run with `log_dir`.

    In a notebook it shows the summary, a plot of the score per agent and the table of samples;
    a click on a row opens that sample's run below the table.
    """

    def __init__(
        self,
        records: Iterable[dict[str, Any]],
        scorers: list[str],
        memories: dict[Key, Any] | None = None,
        log_dir: str | Path | None = None,
        cancelled: bool = False,
        agents: list[str] | None = None,
        task_order: list[str] | None = None,
        engine: str = "",
        elapsed_s: float | None = None,
    ) -> None:
        self.scorers = list(scorers)
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.cancelled = cancelled
        self.engine = engine
        self.elapsed_s = elapsed_s
        self._memories = dict(memories or {})
        records = [settle(record) for record in records]
        agent_order = list(agents or [])
        agent_order += [r["agent"] for r in records if r["agent"] not in agent_order]
        agent_order = list(dict.fromkeys(agent_order))
        order = {sample_id: i for i, sample_id in enumerate(dict.fromkeys(task_order or []))}
        records.sort(
            key=lambda r: (agent_order.index(r["agent"]), order.get(r["id"], len(order)), str(r["id"]), r["epoch"])
        )
        self.agents = [a for a in agent_order if any(r["agent"] == a for r in records)] or agent_order
        self.records = records
        self._by_key = {sample_key(r["agent"], r["id"], r["epoch"]): r for r in records}

    # ------------------------------------------------------------------------------------ loading

    @classmethod
    def load(cls, log_dir: str | Path) -> EvalResults:
        """The results saved in `log_dir` by `evaluate(..., log_dir=log_dir)` (finished or not)."""
        log = EvalLog(log_dir)
        if not log.spec_path.is_file():
            raise FileNotFoundError(f"{log_dir} is not an evaluation log (no eval.json in it)")
        spec = log.read_spec()
        order = []
        tasks_path = Path(log_dir) / "tasks.jsonl"
        if tasks_path.is_file():
            for line in tasks_path.read_text(encoding="utf-8").splitlines():
                try:
                    order.append(str(json.loads(line)["id"]))
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue
        records = list(read_records(log.results_path).values())
        return cls(
            records,
            spec.get("scorers", []),
            log_dir=log_dir,
            agents=spec.get("agents"),
            task_order=order,
            elapsed_s=log.elapsed_s(),
        )

    # ------------------------------------------------------------------------------------ tables

    @cached_property
    def df(self) -> Any:
        import pandas as pd

        rows = []
        explained = sorted({name for r in self.records for name in (r.get("explanations") or {})})
        meta_columns: list[str] = []
        for record in self.records:
            meta_columns += [c for c in record.get("metadata") or {} if c not in meta_columns]
        for record in self.records:
            row = {column: record.get(column) for column in BASE_COLUMNS}
            scores = record.get("scores") or {}
            for name in self.scorers:
                value = scores.get(name)
                row[name] = math.nan if value is None else float(value)
            errors = record.get("scorer_errors") or {}
            row["scorer_errors"] = "; ".join(f"{k}: {v}" for k, v in errors.items()) or None
            row["nondeterministic"] = self._varying.get((record["agent"], str(record["id"])))
            for name in explained:
                row[f"{name}_explanation"] = (record.get("explanations") or {}).get(name)
            for column in meta_columns:
                row[column] = (record.get("metadata") or {}).get(column)
            rows.append(row)
        reproducible = any("reproducible" in record for record in self.records)  # evaluate(..., reproducible=True)
        for row, record in zip(rows, self.records):
            if reproducible:
                row["reproducible"] = record.get("reproducible")
        columns = BASE_COLUMNS + self.scorers + ["scorer_errors", "nondeterministic"]
        columns += ["reproducible"] if reproducible else []
        columns += [f"{n}_explanation" for n in explained] + meta_columns
        frame = pd.DataFrame(rows, columns=columns)
        for column in ("expected", "answer", "error", "scorer_errors"):  # as recorded: no None -> NaN, no int -> float
            frame[column] = pd.Series([row[column] for row in rows], dtype=object, index=frame.index)
        for column in ("epoch", "steps", "input_tokens", "output_tokens"):
            frame[column] = frame[column].astype("int64")
        frame["answered"] = pd.array([row["answered"] for row in rows], dtype="boolean")  # NA: no run ended
        frame["duration_s"] = frame["duration_s"].astype("float64")
        frame["nondeterministic"] = frame["nondeterministic"].astype("boolean")  # NA: one epoch cannot tell
        if reproducible:  # NA: no answer, so no program
            frame["reproducible"] = pd.array([row["reproducible"] for row in rows], dtype="boolean")
        return frame

    @cached_property
    def _varying(self) -> dict[tuple[str, str], bool | None]:
        return nondeterministic(self.records)

    @property
    def epochs(self) -> int:
        """The most epochs any (agent, task) finished."""
        return epochs_run(self.records)

    @property
    def note(self) -> str:
        """What these results cannot tell: with one epoch and several agents, sampling noise from a real difference."""
        return epoch_note(self.epochs, len(self.agents))

    def summary(self) -> Any:
        """One row per agent: samples, epochs, the tasks whose answers vary between epochs
        (`nondeterministic`, NA with one epoch), each scorer's mean with its 95% interval
        (`<scorer>_low`, `<scorer>_high`), errors, the runs that ended without an answer (`no_answer`:
        they score every scorer's minimum, 0), mean steps, mean tokens and mean duration per sample.

        Samples that could not run and cancelled ones are counted, not scored. With epochs, a task's epochs are
        averaged first, so the interval is over tasks. The interval stays on the scores' scale: Wilson's
        when every value is in [0, 1] (0/1 scores and their per-task means), Student's t clipped to the
        values' scale otherwise; `.attrs["intervals"]` names the method per scorer (nbagent.eval.intervals). Whether two agents differ is `compare()`'s question, not the
        overlap of these intervals. `.attrs["note"]` holds `self.note` (one epoch cannot tell noise).
        """
        import pandas as pd

        rows, methods = [], {}
        for agent in self.agents:
            records = [r for r in self.records if r["agent"] == agent]
            finished = [r for r in records if r.get("state") != "cancelled"]
            flags = [flag for (name, _), flag in self._varying.items() if name == agent]
            row: dict[str, Any] = {
                "agent": agent,
                "samples": len(finished),
                "epochs": epochs_run(finished),
                "nondeterministic": sum(bool(f) for f in flags) if any(f is not None for f in flags) else pd.NA,
            }
            for name in self.scorers:
                per_task: dict[str, list[float]] = {}
                for r in finished:
                    value = (r.get("scores") or {}).get(name)
                    if value is not None and not math.isnan(value):
                        per_task.setdefault(r["id"], []).append(float(value))
                interval = interval95([sum(v) / len(v) for v in per_task.values()])
                row[name], row[f"{name}_low"], row[f"{name}_high"] = interval.mean, interval.low, interval.high
                methods[name] = interval.method or methods.get(name, "")
            row["errors"] = sum(r.get("state") == "error" for r in finished)
            row["no_answer"] = sum(is_no_answer(r) for r in finished)
            row["scorer_errors"] = sum(bool(r.get("scorer_errors")) for r in finished)
            row["cancelled"] = len(records) - len(finished)
            row["steps"] = _mean(r.get("steps") for r in finished)
            row["input_tokens"] = _mean(r.get("input_tokens") for r in finished)
            row["output_tokens"] = _mean(r.get("output_tokens") for r in finished)
            row["duration_s"] = _mean(r.get("duration_s") for r in finished)
            rows.append(row)
        columns = ["agent", "samples", "epochs", "nondeterministic"]
        columns += [f"{n}{s}" for n in self.scorers for s in ("", "_low", "_high")]
        columns += [
            "errors",
            "no_answer",
            "scorer_errors",
            "cancelled",
            "steps",
            "input_tokens",
            "output_tokens",
            "duration_s",
        ]
        frame = pd.DataFrame(rows, columns=columns).set_index("agent")
        frame["nondeterministic"] = frame["nondeterministic"].astype("Int64")
        frame.attrs["note"] = self.note
        frame.attrs["intervals"] = methods
        return frame

    def compare(self) -> Any:
        """Each agent against each earlier one (its `baseline`), per scorer: is the difference more than noise?

        Columns: `agent, baseline, scorer, tasks` (scored for both), `samples` (the (task, epoch)
        pairs), `agent_mean, baseline_mean` (over those pairs), `difference` (agent − baseline),
        `low, high` (its 95% interval), `p_value`, `significant` (p <= 0.05) and `verdict` in words.
        The samples are paired by (task, epoch); each task's differences are averaged over its
        epochs and the test is a paired sign-flip permutation test over tasks, exact for 14 tasks
        or fewer; the interval is that test inverted (see nbagent.eval.compare). It is honest for
        0/1 scores and few tasks: with fewer than 6 tasks nothing is significant. `.attrs["note"]`
        says when one epoch cannot tell sampling noise from a real difference.
        """
        import pandas as pd

        frame = pd.DataFrame(self._comparison_rows, columns=COMPARISON_COLUMNS)
        frame["significant"] = frame["significant"].astype(bool)
        frame.attrs["note"] = self.note
        return frame

    # ------------------------------------------------------------------------------------ runs

    def _key(self, sample_id: Any, agent: str | None, epoch: int) -> Key:
        sample_id = str(sample_id)
        if agent is None:
            if len(self.agents) != 1:
                raise ValueError(f"These results have several agents ({', '.join(self.agents)}): pass agent=...")
            agent = self.agents[0]
        key = sample_key(agent, sample_id, epoch)
        if key not in self._by_key:
            if agent not in self.agents:
                raise KeyError(f"No agent {agent!r} in these results; the agents are {self.agents}")
            ids = list(dict.fromkeys(r["id"] for r in self.records if r["agent"] == agent))
            epochs = sorted({r["epoch"] for r in self.records if r["agent"] == agent and r["id"] == sample_id})
            if epochs:
                raise KeyError(f"Task {sample_id!r} of {agent!r} has no epoch {epoch}; it has epochs {epochs}")
            shown = ", ".join(repr(i) for i in ids[:8]) + (", ..." if len(ids) > 8 else "")
            raise KeyError(f"No task {sample_id!r} for agent {agent!r}; its task ids are {shown}")
        return key

    def record(self, id: Any, agent: str | None = None, epoch: int = 0) -> dict[str, Any]:
        """The raw record of a sample (what results.jsonl holds)."""
        return self._by_key[self._key(id, agent, epoch)]

    def memory(self, id: Any, agent: str | None = None, epoch: int = 0) -> Any:
        """The `AgentMemory` of that sample's run (loaded from the log directory when not in memory)."""
        key = self._key(id, agent, epoch)
        if key in self._memories:
            return self._memories[key]
        record = self._by_key[key]
        path = record.get("memory_path")
        if self.log_dir is None or not path:
            raise LookupError(f"The run of {key} was not kept (it was {record.get('state')} before it started)")
        from nbagent.record import AgentMemory

        memory = AgentMemory.load(self.log_dir / path)
        self._memories[key] = memory
        return memory

    def run_widget(self, id: Any, agent: str | None = None, epoch: int = 0) -> Any:
        """The step widget (`AgentWidget`) of that sample's run."""
        from nbagent.notebook.widget import AgentWidget

        key = self._key(id, agent, epoch)
        return AgentWidget.from_memory(self.memory(*_args(key)), agent_name=key[0])

    def show(self, id: Any, agent: str | None = None, epoch: int = 0) -> None:
        """Display that sample's run in the step widget (the same widget as a live run)."""
        from IPython.display import display

        display(self.run_widget(id, agent, epoch))

    # ------------------------------------------------------------------------------------ display

    def widget(self) -> Any:
        """The interactive view: summary, plot, the table of samples, the opened run below it."""
        import ipywidgets

        from nbagent.eval.display import EvalPanel, header_widget, row_for

        tracker = Tracker(len(self.records), self.agents, self.scorers, self.engine, epochs=self.epochs)
        for record in self.records:
            tracker.add(record)
        tracker.status, tracker.finished_at = "cancelled" if self.cancelled else "done", tracker.started
        tracker.earlier_s = self.elapsed_s or 0.0
        # The header above the table shows the comparisons and the note: the table's own header does not repeat them.
        progress = {**tracker.snapshot(), "note": "", "comparisons": []}
        panel = EvalPanel(self.scorers, progress, lambda key: self.run_widget(key[1], key[0], key[2]))
        panel.view.rows = [row_for(r, self._varying.get((r["agent"], str(r["id"])))) for r in self.records]
        box = ipywidgets.VBox(
            [header_widget(self.summary(), self.scorers, self._comparison_rows, self.note), panel.box]
        )
        box.panel = panel  # for tests and code that opens a row: box.panel.view.selected = key_text(key)
        return box

    def to_html(self) -> str:
        """A static HTML page part: summary, plot and the table of samples (no JavaScript needed)."""
        from nbagent.eval.display import results_html

        return results_html(
            self.summary(), self.records, self.scorers, self.cancelled, self._comparison_rows, self.note, self._varying
        )

    @cached_property
    def _comparison_rows(self) -> list[dict[str, Any]]:
        return comparison_rows(self.records, self.agents, self.scorers) if len(self.agents) > 1 else []

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from nbagent.eval.display import bundle, widgets_available

        if not widgets_available():
            return {"text/html": self.to_html(), "text/plain": repr(self)}
        return bundle(self.widget(), self.to_html(), repr(self))

    def __repr__(self) -> str:
        n = len(self.records)
        parts = [
            f"{n} sample{'s' if n != 1 else ''}",
            f"{len(self.agents)} agent{'s' if len(self.agents) != 1 else ''}",
        ]
        errors = sum(r.get("state") == "error" for r in self.records)
        if errors:
            parts.append(f"{errors} error{'s' if errors != 1 else ''}")
        no_answer = sum(is_no_answer(r) for r in self.records)
        if no_answer:
            parts.append(f"{no_answer} without an answer")
        if self.cancelled:
            parts.append("cancelled")
        if self.scorers and self.records:
            summary = self.summary()
            first = self.scorers[0]
            scores = ", ".join(
                f"{a} {summary.loc[a, first]:.2f}" for a in self.agents if not math.isnan(summary.loc[a, first])
            )
            if scores:
                parts.append(f"{first}: {scores}")
            for row in self._comparison_rows:
                if row["scorer"] == first:
                    parts.append(f"{row['agent']} vs {row['baseline']}: {row['verdict']}")
        if self.note:
            parts.append(f"one epoch: use epochs={SUGGESTED_EPOCHS} or more to tell noise from a difference")
        return f"EvalResults({'; '.join(parts)})"


def _args(key: Key) -> tuple[str, str, int]:
    agent, sample_id, epoch = key
    return sample_id, agent, epoch


def _mean(values: Iterable[Any]) -> float:
    numbers = [float(v) for v in values if v is not None]
    return sum(numbers) / len(numbers) if numbers else math.nan
