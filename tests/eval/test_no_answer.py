"""A run that ended without a final answer is a failure for every scorer, never scored on its closing reply."""

from __future__ import annotations

import io
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from evalkit import failing_model, task_text, tasks

from nbagent import CodeAgent, ScriptedModel
from nbagent.eval import EvalResults, Score, evaluate
from nbagent.eval import display as views
from nbagent.eval.progress import TqdmProgress
from nbagent.eval.scorers import exact_match, includes, llm_judge, numeric, regex

TASK = [{"id": "sum", "task": "What is 10 + 11?", "answer": 21}]


def code(source: str) -> str:
    return f"Thought: go on.\n```python\n{source}\n```"


class Calls:
    """A custom scorer that records what it was called with (it would pass anything)."""

    name = "calls"

    def __init__(self) -> None:
        self.seen: list[tuple[Any, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, answer: Any, expected: Any, sample: Any) -> Score:
        with self.lock:
            self.seen.append((answer, expected))
        return Score(1.0, explanation="called")


def judge() -> tuple[llm_judge, list[Any]]:
    """An LLM judge whose model records its calls (and grades everything correct)."""
    asked: list[Any] = []

    def grade(messages: list[Any], **_: Any) -> str:
        asked.append(messages)
        return "It matches.\nGRADE: C"

    return llm_judge(ScriptedModel(grade)), asked


def scorers() -> tuple[dict[str, Any], Calls, list[Any]]:
    calls, (graded, asked) = Calls(), judge()
    named = {
        "exact_match": exact_match(),
        "numeric": numeric(),
        "includes": includes(),
        "regex": regex(r"(\d+)"),
        "judge": graded,
        "calls": calls,
    }
    return named, calls, asked


def maxed_out(reply: str | None = None, steps: int = 2):
    """A factory: the model writes code that does not answer until max_steps, then its closing reply is `reply`
    (None: the right sum of the task)."""

    def make() -> CodeAgent:
        calls = [0]

        def answer(messages: list[Any], **_: Any) -> str:
            calls[0] += 1
            if calls[0] <= steps:
                return code("print('thinking')")
            if reply is not None:
                return reply
            a, b = (int(x) for x in re.search(r"What is (\d+) \+ (\d+)", task_text(messages)).groups())
            return str(a + b)

        return CodeAgent(tools=[], model=ScriptedModel(answer), max_steps=steps)

    return make


def interrupted() -> CodeAgent:
    """A step callback stops the run after its first step (the model would answer 21 at the second)."""

    def stop(step: Any, agent: Any = None) -> None:
        agent.interrupt()

    model = ScriptedModel([code("x = 10 + 11\nprint(x)"), code("final_answer(21)")])
    return CodeAgent(tools=[], model=model, step_callbacks=[stop])


def stuck() -> CodeAgent:
    return CodeAgent(tools=[], model=ScriptedModel(lambda messages, **_: code("print(21)\n1 / 0")), max_steps=8)


def timed_out() -> CodeAgent:
    return CodeAgent(tools=[], model=ScriptedModel([code("import time\ntime.sleep(30)")]), max_time=0.3)


def answers(reply: Any):
    def make() -> CodeAgent:
        return CodeAgent(tools=[], model=ScriptedModel([code(f"final_answer({reply!r})")]))

    return make


def assert_no_answer(results: EvalResults, outcome: str, calls: Calls, asked: list[Any]) -> None:
    row = results.df.iloc[0]
    assert not row.answered and row.outcome == outcome
    for name in ("exact_match", "numeric", "includes", "regex", "judge", "calls"):
        assert row[name] == 0.0, name
    assert calls.seen == [] and asked == []  # no scorer was called, a model-graded one included
    assert row.scorer_errors is None and "judge_explanation" not in results.df.columns
    assert results.summary().loc[results.agents[0], "no_answer"] == 1


def test_max_steps_with_the_right_closing_reply_scores_0_on_every_scorer_and_calls_none():
    named, calls, asked = scorers()
    results = evaluate(maxed_out("21"), TASK, scorers=named, progress=False)
    row = results.df.iloc[0]
    assert row.state == "max_steps_error" and row.answer == "21"  # the closing reply is kept, as it was said
    assert exact_match()(row.answer, row.expected) == 1.0  # it would have passed, were it scored
    assert_no_answer(results, "no answer (max steps)", calls, asked)
    summary = results.summary().loc[results.agents[0]]
    assert summary.exact_match == 0.0 and summary.errors == 0


@pytest.mark.parametrize(
    ("factory", "state", "outcome"),
    [
        (interrupted, "stopped", "no answer (stopped)"),
        (lambda: CodeAgent(tools=[], model=ScriptedModel(failing_model)), "error", "no answer (model error)"),
        (stuck, "stuck", "no answer (stuck)"),
        (timed_out, "timed_out", "no answer (timed out)"),
    ],
    ids=["stopped", "failed", "stuck", "timed_out"],
)
def test_a_stopped_failed_stuck_or_timed_out_run_is_a_failure_for_every_scorer(factory, state, outcome):
    named, calls, asked = scorers()
    results = evaluate(factory, TASK, scorers=named, progress=False)
    assert results.df.iloc[0].state == state
    assert_no_answer(results, outcome, calls, asked)


@pytest.mark.parametrize("reply", ["21", 21, " 21. "])
def test_an_answered_run_is_scored_as_before(reply):
    named, calls, asked = scorers()
    results = evaluate(answers(reply), TASK, scorers=named, progress=False)
    row = results.df.iloc[0]
    assert row.answered and row.outcome == "answered" and row.state == "success"
    assert (row.exact_match, row.numeric, row.includes, row.regex, row.judge) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert calls.seen == [(reply, 21)] and len(asked) == 1
    assert row.judge_explanation == "It matches.\nGRADE: C"
    assert results.summary().loc[results.agents[0], "no_answer"] == 0


def test_exact_match_compares_the_string_21_with_the_number_21_as_before():
    assert exact_match()("21", 21) == 1.0 and exact_match()(21, "21") == 1.0 and exact_match()("21.0", 21) == 1.0
    assert exact_match()("22", 21) == 0.0 and exact_match()("It is 21", 21) == 0.0


def test_a_scorer_with_a_minimum_gives_it_to_a_run_without_an_answer():
    def signed(answer, expected, sample):
        return 1.0 if answer == expected else -1.0

    signed.minimum = -1.0
    results = evaluate(maxed_out("21"), TASK, scorers=[signed, exact_match()], progress=False)
    assert (results.df.iloc[0].signed, results.df.iloc[0].exact_match) == (-1.0, 0.0)


def test_compare_counts_a_run_without_an_answer_as_a_failure():
    # "maxed" would be right on every task were its closing replies scored; it never answers.
    results = evaluate({"ok": right, "maxed": maxed_out()}, tasks(6), progress=False)
    df = results.df
    maxed, ok = df[df.agent == "maxed"], df[df.agent == "ok"]
    assert (maxed.outcome == "no answer (max steps)").all() and (maxed.answer == maxed.expected.astype(str)).all()
    assert (maxed.exact_match == 0.0).all() and (ok.exact_match == 1.0).all()
    row = results.compare().iloc[0]
    assert (row.agent, row.baseline, row.tasks, row.samples) == ("maxed", "ok", 6, 6)
    assert (row.agent_mean, row.baseline_mean, row.difference) == (0.0, 1.0, -1.0) and row.significant
    assert row.verdict.startswith("ok is better")
    assert "6 without an answer" in repr(results)


def test_the_live_progress_and_the_tables_say_no_answer(tmp_path):
    out = io.StringIO()
    results = evaluate({"ok": right, "maxed": maxed_out()}, tasks(2), progress=TqdmProgress(file=out))
    assert "2 no answer" in out.getvalue()  # the terminal's bar
    progress = _Snapshots()
    evaluate({"ok": right, "maxed": maxed_out()}, tasks(2), progress=progress)
    assert progress.last["no_answer"] == 2
    assert [a["no_answer"] for a in progress.last["agents"]] == [0, 2]
    line = views.progress_line_html(progress.last)
    assert "2 no answer" in line and "(2 done, 2 no answer)" in line
    page = results.to_html()
    assert page.count("no answer (max steps)</td>") == 2 and page.count(' nbe-no-answer"') == 2
    assert page.count('class="nbe-row nbe-state-success"') == 2  # the answered rows: not failing, no mark
    assert "<th>no answer</th>" in page
    rows = [views.row_for(r) for r in results.records]
    assert [(r["agent"], r["answered"], r["outcome"]) for r in rows] == [
        ("ok", True, "answered"),
        ("ok", True, "answered"),
        ("maxed", False, "no answer (max steps)"),
        ("maxed", False, "no answer (max steps)"),
    ]


def test_an_older_log_is_read_with_its_closing_replies_unscored(tmp_path):
    """A log written before runs without an answer were failures: its records get an outcome, those runs 0."""
    evaluate(maxed_out("21"), TASK + [{"id": "b", "task": "What is 1 + 1?", "answer": 2}], log_dir=tmp_path,
             progress=False)  # fmt: skip
    path = Path(tmp_path) / "results.jsonl"
    old = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        for field in ("answered", "outcome"):
            record.pop(field)
        record["scores"] = {"exact_match": 1.0 if record["id"] == "sum" else 0.0}  # how it was scored then
        old.append(record)
    old.append({**old[1], "id": "c", "state": "error", "scores": {"exact_match": None}, "error": "RuntimeError: x"})
    path.write_text("".join(json.dumps(r) + "\n" for r in old))
    df = EvalResults.load(tmp_path).df.set_index("id")
    assert list(df.exact_match[["sum", "b"]]) == [0.0, 0.0]
    assert list(df.outcome) == ["no answer (max steps)", "no answer (max steps)", "error"]
    assert df.exact_match.isna()["c"] and df.answered.isna()["c"]


def test_the_table_and_its_front_end_say_the_same_of_no_answer():
    source = (Path(__file__).resolve().parents[2] / "js" / "eval" / "table.js").read_text(encoding="utf-8")
    assert f'export const NO_ANSWER_TITLE = "{views.NO_ANSWER_TITLE}";' in source


class _Snapshots:
    def __init__(self) -> None:
        self.last: dict[str, Any] = {}

    def start(self, tracker: Any) -> None:
        pass

    def update(self, tracker: Any, record: Any) -> None:
        pass

    def close(self, tracker: Any) -> None:
        self.last = tracker.snapshot()


def right() -> CodeAgent:
    return CodeAgent(tools=[], model=ScriptedModel(solve_right))


def solve_right(messages: list[Any], **_: Any) -> str:
    a, b = (int(x) for x in re.search(r"What is (\d+) \+ (\d+)", task_text(messages)).groups())
    return code(f"final_answer({a + b})")
