"""A durable, resumable log directory.

    log_dir/
      eval.json                      what was evaluated: the tasks' fingerprint, the scorers, agents, epochs,
                                     and the time spent so far (`elapsed_s`)
      tasks.jsonl                    the tasks (prompt, reference, metadata)
      results.jsonl                  one JSON record per finished sample, appended as it finishes
      memories/<agent>/<id>-<epoch>.json (+ `_images/`)   each sample's AgentMemory, saved before its record

A sample's memory is written before its record line, so every record has its memory; a crash
loses at most the samples that were running (and a torn last line, which is ignored). Reading,
the last record of a (agent, id, epoch) wins: a retried sample replaces its error. A log of other
tasks or scorers is refused rather than mixed.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from nbagent.eval.outcomes import settle
from nbagent.eval.samples import CANCELLED, ERROR_STATES, Key, sample_key
from nbagent.eval.tasks import Sample

__all__ = ["EvalLog", "read_records", "LOG_FORMAT"]

LOG_FORMAT = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class EvalLog:
    """One log directory: `open(...)` checks or writes `eval.json`; `append(outcome)` records a sample."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.results_path = self.path / "results.jsonl"

    @property
    def spec_path(self) -> Path:
        return self.path / "eval.json"

    def open(self, samples: list[Sample], fingerprint: str, scorers: list[str], agents: list[str], epochs: int) -> None:
        """Create the directory, or check that it holds an evaluation of the same tasks and scorers."""
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"log_dir {self.path} is a file, not a directory")
        if self.spec_path.is_file():
            spec = self.read_spec()
            if spec.get("tasks_fingerprint") != fingerprint:
                raise ValueError(
                    f"log_dir {self.path} holds an evaluation of other tasks ({spec.get('n_tasks')} tasks, "
                    f"fingerprint {spec.get('tasks_fingerprint')}) than these ({len(samples)} tasks, fingerprint "
                    f"{fingerprint}). Use a new log_dir, or delete this one to start over."
                )
            if list(spec.get("scorers", [])) != list(scorers):
                raise ValueError(
                    f"log_dir {self.path} was scored with {spec.get('scorers')}, but these scorers are {scorers}. "
                    "Use a new log_dir (results scored differently are not mixed), or delete this one."
                )
            known = list(spec.get("agents", []))
            spec["agents"] = known + [a for a in agents if a not in known]
            spec["epochs"] = max(int(spec.get("epochs", 1)), epochs)
            self._write_spec(spec)
            self._end_torn_line()
            return
        if self.path.is_dir() and any(self.path.iterdir()):
            raise ValueError(
                f"log_dir {self.path} is not empty and holds no eval.json: it is not an evaluation log. "
                "Choose an empty or new directory."
            )
        self.path.mkdir(parents=True, exist_ok=True)
        from nbagent._version import __version__

        self._write_spec(
            {
                "format": LOG_FORMAT,
                "nbagent_version": __version__,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "tasks_fingerprint": fingerprint,
                "n_tasks": len(samples),
                "scorers": list(scorers),
                "agents": list(agents),
                "epochs": epochs,
            }
        )
        with (self.path / "tasks.jsonl").open("w", encoding="utf-8") as out:
            for sample in samples:
                row = {"id": sample.id, "task": sample.task, "expected": sample.expected, "metadata": sample.metadata}
                out.write(json.dumps(row, ensure_ascii=False, default=repr) + "\n")

    def _end_torn_line(self) -> None:
        """After a crash mid-write, end the torn last line so that the next record starts on its own."""
        if self.results_path.is_file() and self.results_path.stat().st_size:
            with self.results_path.open("rb+") as file:
                file.seek(-1, 2)
                if file.read(1) != b"\n":
                    file.write(b"\n")

    def read_spec(self) -> dict[str, Any]:
        try:
            return json.loads(self.spec_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise ValueError(f"{self.spec_path} cannot be read ({error}); is {self.path} an evaluation log?") from None

    def _write_spec(self, spec: dict[str, Any]) -> None:
        tmp = self.spec_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(spec, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(self.spec_path)

    def elapsed_s(self) -> float:
        """The time the evaluation has run so far, over every call: what the last call saved when it ended,
        or, if it never ended (the kernel died), the clock of its last record."""
        spec = self.read_spec() if self.spec_path.is_file() else {}
        stamps = [float(r.get("eval_elapsed_s") or 0.0) for r in self.records().values()]
        return max([float(spec.get("elapsed_s") or 0.0), *stamps])

    def save_elapsed(self, seconds: float) -> None:
        if self.spec_path.is_file():
            spec = self.read_spec()
            spec["elapsed_s"] = round(max(seconds, float(spec.get("elapsed_s") or 0.0)), 3)
            self._write_spec(spec)

    # ------------------------------------------------------------------------------------ records

    def records(self) -> dict[Key, dict[str, Any]]:
        return read_records(self.results_path)

    def done_keys(self, retry_errors: bool) -> dict[Key, dict[str, Any]]:
        """The records of samples that need not run again (cancelled ones always run again)."""
        done = {}
        for key, record in self.records().items():
            if record.get("state") == CANCELLED:
                continue
            if retry_errors and record.get("state") in ERROR_STATES:
                continue
            done[key] = record
        return done

    def memory_path(self, agent: str, sample_id: str, epoch: int) -> str:
        """The memory file of a sample, relative to the log directory."""
        return f"memories/{_safe(agent)}/{_safe(sample_id)}-{int(epoch)}.json"

    def append(self, record: dict[str, Any], memory: Any) -> None:
        """Save the sample's memory, then append its record (flushed at once)."""
        if memory is not None:
            relative = self.memory_path(record["agent"], record["id"], record["epoch"])
            target = self.path / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            memory.save(target)
            record["memory_path"] = relative
        line = json.dumps(record, ensure_ascii=False, default=repr)
        with self.results_path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
            out.flush()


def read_records(path: Path) -> dict[Key, dict[str, Any]]:
    """The last record of each (agent, id, epoch) in a results.jsonl; a torn line (a crash mid-write) is skipped."""
    records: dict[Key, dict[str, Any]] = {}
    if not path.is_file():
        return records
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key = sample_key(record["agent"], record["id"], record["epoch"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
        records[key] = settle(record)  # an older log's record: its outcome, no score for a run without an answer
    return records


def _safe(name: str) -> str:
    safe = _UNSAFE.sub("_", str(name)).strip(".") or "_"
    if safe != str(name):
        import hashlib

        safe = f"{safe[:60]}_{hashlib.sha1(str(name).encode()).hexdigest()[:6]}"
    return safe
