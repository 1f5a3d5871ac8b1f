"""Tasks in every form: list of dicts, DataFrame, .jsonl, .csv, Samples; column names, ids, metadata."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from PIL import Image

from nbagent.eval import Sample
from nbagent.eval.tasks import load_tasks, tasks_fingerprint

ROWS = [
    {"id": "a", "task": "What is 1 + 2?", "answer": 3, "level": "easy"},
    {"id": "b", "task": "What is 2 + 3?", "answer": 5, "level": "hard"},
]


def check(samples: list[Sample]) -> None:
    assert [s.id for s in samples] == ["a", "b"]
    assert [s.task for s in samples] == ["What is 1 + 2?", "What is 2 + 3?"]
    assert [str(s.expected) for s in samples] == ["3", "5"]
    assert [s.metadata for s in samples] == [{"level": "easy"}, {"level": "hard"}]


def test_list_of_dicts():
    samples = load_tasks(ROWS)
    check(samples)
    assert samples[0].expected == 3 and samples[0].images is None and samples[0].additional_args is None


def test_dataframe_values_become_python():
    samples = load_tasks(pd.DataFrame(ROWS))
    check(samples)
    assert type(samples[0].expected) is int


def test_jsonl_file(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n\n")
    check(load_tasks(path))
    check(load_tasks(str(path)))


def test_csv_file_keeps_text(tmp_path):
    path = tmp_path / "tasks.csv"
    pd.DataFrame(ROWS).to_csv(path, index=False)
    samples = load_tasks(path)
    check(samples)
    assert samples[0].expected == "3"  # CSV cells are text; exact_match compares numbers as numbers


def test_samples_pass_through():
    samples = load_tasks(ROWS)
    assert load_tasks(samples) == samples


@pytest.mark.parametrize(
    ("prompt", "answer"), [("question", "target"), ("input", "expected"), ("prompt", "answer"), ("Question", "Answer")]
)
def test_accepted_column_names(prompt, answer):
    (sample,) = load_tasks([{prompt: "Name a colour.", answer: "red"}])
    assert (sample.task, sample.expected, sample.metadata) == ("Name a colour.", "red", {})


def test_first_accepted_prompt_column_wins_and_the_other_is_metadata():
    (sample,) = load_tasks([{"question": "q?", "task": "t?", "answer": 1}])
    assert sample.task == "t?" and sample.metadata == {"question": "q?"}


def test_missing_prompt_column_names_found_and_accepted():
    with pytest.raises(ValueError) as error:
        load_tasks([{"query": "What is 1 + 2?", "answer": 3}])
    message = str(error.value)
    assert "no prompt column" in message and "'query', 'answer'" in message
    assert "'task', 'question', 'input', 'prompt'" in message


def test_missing_answer_column_names_found_and_accepted(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("task,solution\nWhat is 1 + 2?,3\n")
    with pytest.raises(ValueError) as error:
        load_tasks(path)
    message = str(error.value)
    assert "no reference answer column" in message and f"the file {path}" in message
    assert "'task', 'solution'" in message and "'answer', 'expected', 'target'" in message


def test_ids_from_content_are_stable_and_unique():
    rows = [{"task": "What is 1 + 2?", "answer": 3}, {"task": "What is 2 + 3?", "answer": 5}]
    first = [s.id for s in load_tasks(rows)]
    again = [s.id for s in load_tasks(list(reversed(rows)))]
    assert first == list(reversed(again)) and first[0] != first[1] and first[0].startswith("t")
    twice = [s.id for s in load_tasks([rows[0], rows[0]])]
    assert twice == [first[0], first[0] + "-2"]


def test_given_ids_must_be_unique():
    with pytest.raises(ValueError, match="Duplicate task id 'a'"):
        load_tasks([ROWS[0], ROWS[0]])


def test_numeric_ids_become_strings():
    (sample,) = load_tasks([{"id": 7, "task": "x?", "answer": 1}])
    assert sample.id == "7"


def test_metadata_clashing_with_result_columns_is_renamed():
    (sample,) = load_tasks([{"task": "x?", "answer": 1, "steps": 3, "error": "none", "source": "gsm8k"}])
    assert sample.metadata == {"meta_steps": 3, "meta_error": "none", "source": "gsm8k"}


def test_images_and_additional_args(tmp_path):
    image = Image.new("RGB", (4, 4), "red")
    path = tmp_path / "tasks.csv"
    pd.DataFrame(
        [{"task": "Describe it.", "answer": "red", "images": '["a.png"]', "additional_args": '{"x": 2}'}]
    ).to_csv(path, index=False)
    (from_csv,) = load_tasks(path)
    assert from_csv.images == ["a.png"] and from_csv.additional_args == {"x": 2}
    (from_list,) = load_tasks(
        [{"task": "Describe it.", "answer": "red", "images": image, "additional_args": {"df": 1}}]
    )
    assert from_list.images == [image] and from_list.additional_args == {"df": 1}
    (one_path,) = load_tasks([{"task": "Describe it.", "answer": "red", "images": "a.png"}])
    assert one_path.images == ["a.png"]


def test_empty_cells_are_none():
    frame = pd.DataFrame([{"task": "x?", "answer": None, "note": float("nan")}])
    (sample,) = load_tasks(frame)
    assert sample.expected is None and sample.metadata == {"note": None}


@pytest.mark.parametrize(
    ("tasks", "error", "match"),
    [
        ([], ValueError, "No tasks"),
        ({"task": "x", "answer": 1}, TypeError, "not one dict"),
        (["What is 1 + 2?"], TypeError, r"tasks\[0\] is a str"),
        (42, TypeError, "got int"),
        ([{"task": "", "answer": 1}], ValueError, "non-empty string"),
        ([{"task": "x", "answer": 1, "additional_args": [1]}], TypeError, "additional_args must be a dict"),
    ],
)
def test_bad_tasks(tasks, error, match):
    with pytest.raises(error, match=match):
        load_tasks(tasks)


def test_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_tasks(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "x", "answer": 1}\n{oops\n')
    with pytest.raises(ValueError, match="line 2: not valid JSON"):
        load_tasks(bad)
    other = tmp_path / "tasks.parquet"
    other.write_text("")
    with pytest.raises(ValueError, match="use a .jsonl or .csv file"):
        load_tasks(other)


def test_fingerprint_changes_with_tasks():
    samples = load_tasks(ROWS)
    assert tasks_fingerprint(samples) == tasks_fingerprint(load_tasks(pd.DataFrame(ROWS)))
    changed = load_tasks([ROWS[0], {**ROWS[1], "answer": 6}])
    assert tasks_fingerprint(samples) != tasks_fingerprint(changed)
