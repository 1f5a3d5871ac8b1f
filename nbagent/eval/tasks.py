"""Tasks in, `Sample`s out: a list of dicts, a pandas DataFrame, or a `.jsonl` / `.csv` file.

Columns: the prompt is `task` (or `question`, `input`, `prompt`), the reference `answer` (or
`expected`, `target`); `id`, `images` and `additional_args` are optional; every other column is
kept as metadata and comes back as a column of the results (renamed `meta_<name>` if it would
clash with a results column).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Sample", "load_tasks", "tasks_fingerprint", "PROMPT_COLUMNS", "ANSWER_COLUMNS"]

PROMPT_COLUMNS = ("task", "question", "input", "prompt")
ANSWER_COLUMNS = ("answer", "expected", "target")
_OPTIONAL = ("id", "images", "additional_args")
# columns of EvalResults.df that a metadata column must not overwrite
RESULT_COLUMNS = frozenset(
    {
        "agent",
        "id",
        "epoch",
        "task",
        "expected",
        "answer",
        "state",
        "steps",
        "input_tokens",
        "output_tokens",
        "duration_s",
        "error",
        "scorer_errors",
        "memory_path",
    }
)


@dataclass(frozen=True)
class Sample:
    """One task: what scorers receive as their third argument (`sample.task`, `sample.metadata`, ...)."""

    id: str
    task: str
    expected: Any
    images: list[Any] | None = None
    additional_args: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def load_tasks(tasks: Any) -> list[Sample]:
    """Normalise `tasks` (list of dicts or `Sample`s, DataFrame, or a .jsonl/.csv path) into samples."""
    rows, source = _rows(tasks)
    if not rows:
        raise ValueError(f"No tasks: {source} is empty")
    if all(isinstance(row, Sample) for row in rows):
        samples = list(rows)
    else:
        samples = _samples_from_rows(rows, source)
    seen: set[str] = set()
    for sample in samples:
        if sample.id in seen:
            raise ValueError(f"Duplicate task id {sample.id!r} in {source}: ids must be unique")
        seen.add(sample.id)
    return samples


def tasks_fingerprint(samples: Sequence[Sample]) -> str:
    """A hash of the ids, prompts and references (what a log directory is checked against)."""
    digest = hashlib.sha256()
    for sample in samples:
        digest.update(_canonical([sample.id, sample.task, sample.expected]).encode())
        digest.update(b"\n")
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------------------------------------- reading


def _rows(tasks: Any) -> tuple[list[Any], str]:
    if isinstance(tasks, (str, Path)):
        return _read_file(Path(tasks)), f"the file {tasks}"
    if _is_dataframe(tasks):
        return [_plain_row(row) for row in tasks.to_dict("records")], "the DataFrame"
    if isinstance(tasks, Mapping):
        raise TypeError("tasks must be a list of dicts, a pandas DataFrame or a .jsonl/.csv path, not one dict")
    if isinstance(tasks, Sequence) and not isinstance(tasks, (bytes, bytearray)):
        for i, row in enumerate(tasks):
            if not isinstance(row, (Mapping, Sample)):
                raise TypeError(f"tasks[{i}] is a {type(row).__name__}; each task must be a dict (or a Sample)")
        return list(tasks), "the task list"
    raise TypeError(
        f"tasks must be a list of dicts, a pandas DataFrame or a path to a .jsonl/.csv file, got {type(tasks).__name__}"
    )


def _read_file(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise FileNotFoundError(f"No task file at {path}")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {number}: not valid JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}, line {number}: each line must be a JSON object, got {type(row).__name__}")
            rows.append(row)
        return rows
    if suffix == ".csv":
        import pandas as pd

        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        return [_plain_row(row) for row in frame.to_dict("records")]
    raise ValueError(f"Cannot read tasks from {path.name}: use a .jsonl or .csv file (or pass a list or a DataFrame)")


def _is_dataframe(value: Any) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "to_dict")


def _plain_row(row: Mapping[str, Any]) -> dict[str, Any]:
    return {str(key): _plain_value(value) for key, value in row.items()}


def _plain_value(value: Any) -> Any:
    """numpy scalars to Python, NaN/NA to None (what pandas hands out for empty cells)."""
    if hasattr(value, "item") and type(value).__module__ == "numpy" and getattr(value, "ndim", 1) == 0:
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


# ---------------------------------------------------------------------------------------------- samples


def _samples_from_rows(rows: list[Any], source: str) -> list[Sample]:
    columns: list[str] = []
    for row in rows:
        if isinstance(row, Sample):
            raise TypeError("tasks mixes Sample objects and dicts; use one kind")
        columns += [str(key) for key in row if str(key) not in columns]
    prompt = _pick(columns, PROMPT_COLUMNS, "prompt", source)
    answer = _pick(columns, ANSWER_COLUMNS, "reference answer", source)
    meta_columns = [c for c in columns if c not in (prompt, answer, *_OPTIONAL)]
    ids: dict[str, int] = {}
    samples = []
    for index, row in enumerate(rows):
        task = row.get(prompt)
        if not isinstance(task, str) or not task.strip():
            raise ValueError(
                f"Task {index} in {source}: the {prompt!r} column must be a non-empty string, got {task!r}"
            )
        expected = row.get(answer)
        sample_id = row.get("id")
        if sample_id is None or (isinstance(sample_id, str) and not sample_id.strip()):
            sample_id = _content_id(task, expected, ids)
        else:
            sample_id = str(sample_id).strip()
        samples.append(
            Sample(
                id=sample_id,
                task=task,
                expected=expected,
                images=_images(row.get("images"), index),
                additional_args=_additional_args(row.get("additional_args"), index),
                metadata={_meta_name(c): row.get(c) for c in meta_columns},
            )
        )
    return samples


def _pick(columns: list[str], accepted: tuple[str, ...], what: str, source: str) -> str:
    lowered = {c.lower(): c for c in columns}
    for name in accepted:
        if name in lowered:
            return lowered[name]
    found = ", ".join(repr(c) for c in columns) or "none"
    raise ValueError(
        f"The tasks have no {what} column: {source} has the columns {found}; "
        f"the {what} column must be named one of {', '.join(repr(a) for a in accepted)}"
    )


def _content_id(task: str, expected: Any, seen: dict[str, int]) -> str:
    """`t` + 8 hex digits of the prompt and reference: the same row gets the same id wherever it sits."""
    base = "t" + hashlib.sha1(_canonical([task, expected]).encode()).hexdigest()[:8]
    seen[base] = seen.get(base, 0) + 1
    return base if seen[base] == 1 else f"{base}-{seen[base]}"


def _meta_name(column: str) -> str:
    return f"meta_{column}" if column in RESULT_COLUMNS else column


def _images(value: Any, index: int) -> list[Any] | None:
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, (str, Path)):
        text = str(value)
        if text.startswith("["):  # a JSON list in a CSV cell
            value = json.loads(text)
        else:
            return [text]
    if isinstance(value, (list, tuple)):
        return list(value)
    if hasattr(value, "size") and hasattr(value, "mode"):  # one PIL image
        return [value]
    raise TypeError(f"Task {index}: images must be a list of PIL images or paths, got {type(value).__name__}")


def _additional_args(value: Any, index: int) -> dict[str, Any] | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"Task {index}: additional_args must be a dict or a JSON object string") from None
    if not isinstance(value, Mapping):
        raise TypeError(f"Task {index}: additional_args must be a dict, got {type(value).__name__}")
    return dict(value)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr, ensure_ascii=False)
