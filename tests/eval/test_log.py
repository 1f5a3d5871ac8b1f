"""log_dir: durable records and memories, resume, retry, refusal of other evaluations, interrupt."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pandas as pd
import pytest
from evalkit import Recorder, code_agent, failing_model, solve, tasks

from nbagent import AgentMemory, CodeAgent, ScriptedModel
from nbagent.eval import EvalResults, evaluate
from nbagent.eval.scorers import exact_match, numeric


def lines(log_dir) -> list[dict]:
    return [json.loads(line) for line in (log_dir / "results.jsonl").read_text().splitlines() if line.strip()]


def test_every_sample_is_logged_with_its_memory(tmp_path):
    recorder = Recorder()
    results = evaluate(recorder, tasks(4), log_dir=tmp_path / "log", progress=False)
    log = tmp_path / "log"
    spec = json.loads((log / "eval.json").read_text())
    assert spec["scorers"] == ["exact_match"] and spec["n_tasks"] == 4 and spec["agents"] == ["Recorder"]
    assert len((log / "tasks.jsonl").read_text().splitlines()) == 4
    records = lines(log)
    assert sorted(r["id"] for r in records) == ["t0", "t1", "t2", "t3"]
    for record in records:
        path = log / record["memory_path"]
        assert path.is_file()
        assert AgentMemory.load(path) == recorder.agent_for(record["id"]).memory
    loaded = EvalResults.load(log)
    pd.testing.assert_frame_equal(loaded.df, results.df)
    assert loaded.memory("t2") == recorder.agent_for("t2").memory


def test_a_second_call_skips_finished_samples(tmp_path):
    first = evaluate(code_agent, tasks(4), log_dir=tmp_path, progress=False)
    recorder = Recorder()
    again = evaluate({"code_agent": recorder}, tasks(4), log_dir=tmp_path, progress=False)
    assert recorder.agents == []
    pd.testing.assert_frame_equal(first.df, again.df)
    assert again.memory("t1") == first.memory("t1")  # read back from the log
    assert len(lines(tmp_path)) == 4


def test_more_epochs_and_a_new_agent_run_only_what_is_missing(tmp_path):
    evaluate({"a": code_agent}, tasks(2), log_dir=tmp_path, progress=False)
    recorder = Recorder()
    results = evaluate({"a": recorder, "b": recorder}, tasks(2), epochs=2, log_dir=tmp_path, progress=False)
    assert len(recorder.agents) == 6  # a: epoch 1 of 2 tasks; b: 2 epochs of 2 tasks
    assert len(results.df) == 8 and json.loads((tmp_path / "eval.json").read_text())["agents"] == ["a", "b"]


def test_errors_are_kept_unless_retried(tmp_path):
    def flaky():
        return CodeAgent(
            tools=[], model=ScriptedModel(lambda m, **k: failing_model(m) if "1 + 2" in str(m[1].content) else solve(m))
        )

    first = evaluate({"x": flaky}, tasks(3), log_dir=tmp_path, progress=False)
    assert list(first.df.state) == ["success", "error", "success"]
    recorder = Recorder()
    kept = evaluate({"x": recorder}, tasks(3), log_dir=tmp_path, progress=False)
    assert recorder.agents == [] and list(kept.df.state) == ["success", "error", "success"]
    retried = evaluate({"x": recorder}, tasks(3), log_dir=tmp_path, retry_errors=True, progress=False)
    assert len(recorder.agents) == 1 and list(retried.df.state) == ["success"] * 3
    assert list(EvalResults.load(tmp_path).df.state) == ["success"] * 3  # the last record of a sample wins
    assert len(lines(tmp_path)) == 4


def test_other_tasks_or_scorers_are_refused(tmp_path):
    evaluate(code_agent, tasks(3), log_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="holds an evaluation of other tasks \\(3 tasks.*than these \\(4 tasks"):
        evaluate(code_agent, tasks(4), log_dir=tmp_path, progress=False)
    changed = tasks(3)
    changed[0]["answer"] = 2
    with pytest.raises(ValueError, match="other tasks"):
        evaluate(code_agent, changed, log_dir=tmp_path, progress=False)
    with pytest.raises(
        ValueError, match="was scored with \\['exact_match'\\], but these scorers are \\['exact_match', 'numeric'\\]"
    ):
        evaluate(code_agent, tasks(3), scorers=[exact_match(), numeric()], log_dir=tmp_path, progress=False)
    assert len(lines(tmp_path)) == 3  # nothing was mixed in


def test_a_directory_that_is_not_a_log_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="is not empty and holds no eval.json"):
        evaluate(code_agent, tasks(1), log_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="is a file"):
        evaluate(code_agent, tasks(1), log_dir=tmp_path / "notes.txt", progress=False)
    with pytest.raises(FileNotFoundError, match="not an evaluation log"):
        EvalResults.load(tmp_path)


def test_a_torn_last_line_is_ignored_and_ended(tmp_path):
    evaluate(code_agent, tasks(2), log_dir=tmp_path, progress=False)
    with (tmp_path / "results.jsonl").open("a") as out:
        out.write('{"agent": "code_agent", "id": "t2", "epo')  # a crash mid-write
    results = evaluate(code_agent, tasks(3), log_dir=tmp_path / "other", progress=False)
    assert len(results.df) == 3
    assert len(EvalResults.load(tmp_path).df) == 2
    resumed = evaluate(code_agent, tasks(2), log_dir=tmp_path, epochs=2, progress=False)
    assert len(resumed.df) == 4 and len(EvalResults.load(tmp_path).df) == 4


def test_interrupt_cancels_cleanly_and_loses_nothing_finished(tmp_path):
    """Ctrl-C mid-run: finished samples are kept (returned and logged), running ones are cancelled,
    the rest never start; the next call with the same log_dir runs only what did not finish."""
    started = []
    lock = threading.Lock()

    def stopped(task_text: str) -> bool:
        with recorder.lock:
            agents = list(recorder.agents)
        return any(agent.task and agent.task in task_text and agent.gates.stopping for agent in agents)

    def answer(messages, **kwargs):
        with lock:
            started.append(messages[1].content)
            n = len(started)
        if n == 5:
            os.kill(os.getpid(), signal.SIGINT)  # the kernel's interrupt, while samples 4 and 5 run
        if n >= 4:  # running until the cancel stops it: a fixed wait let a loaded machine finish both first
            deadline = time.monotonic() + 30
            while not stopped(str(messages[1].content)) and time.monotonic() < deadline:
                time.sleep(0.02)
        return solve(messages)

    recorder = Recorder(lambda: CodeAgent(tools=[], model=ScriptedModel(answer)))
    results = evaluate(recorder, tasks(10), max_workers=2, log_dir=tmp_path, progress=False)
    assert results.cancelled
    finished = [a for a in recorder.agents if a.memory.steps and a.last_result.state == "success"]
    assert len(finished) >= 3 and len(started) < 10
    df = results.df.set_index("id")
    for agent in finished:  # nothing that finished was lost: returned, logged, memory saved
        task_id = next(t["id"] for t in tasks(10) if t["task"] == agent.task)
        assert df.loc[task_id, "state"] == "success"
        assert results.memory(task_id) == agent.memory
        assert AgentMemory.load(tmp_path / results.record(task_id)["memory_path"]) == agent.memory
    cancelled = df[df.state == "cancelled"]
    assert len(cancelled) >= 1 and cancelled.exact_match.isna().all()
    # the sample whose model sent the interrupt was running; a worker that took its next job just as the
    # cancel came may record that one as never started — both are cancelled, neither is lost
    assert cancelled.error.str.startswith("cancelled while running").any()
    assert cancelled.error.str.match(r"cancelled (while running|before it started)").all()
    assert set(df.index) == {r["id"] for r in lines(tmp_path)}
    logged = {r["id"]: r["state"] for r in lines(tmp_path)}
    assert sum(s == "success" for s in logged.values()) == len(finished)

    rerun = Recorder()
    resumed = evaluate({"Recorder": rerun}, tasks(10), log_dir=tmp_path, progress=False)
    assert not resumed.cancelled and list(resumed.df.state) == ["success"] * 10
    assert len(rerun.agents) == 10 - len(finished)
    assert resumed.summary().loc["Recorder", "exact_match"] == pytest.approx(0.9)


def test_interrupt_during_model_calls_ends_the_evaluation_at_once(tmp_path):
    """The kernel's interrupt while every running sample waits on its model: the calls are cancelled
    (not waited for until the cancel grace runs out) and the samples are recorded as cancelled."""
    calls = []

    def slow_answer(messages, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        return solve(messages)

    recorder = Recorder(lambda: CodeAgent(tools=[], model=ScriptedModel(slow_answer, latency=60)))
    began = time.monotonic()
    results = evaluate(recorder, tasks(2), max_workers=2, log_dir=tmp_path, progress=False)
    assert time.monotonic() - began < 8  # the cancel's grace is 10 s; a model call stops within ~1 s
    assert results.cancelled and list(results.df.state) == ["cancelled", "cancelled"]
    assert all(agent.memory.steps[-1].stopped for agent in recorder.agents)


def test_a_sample_the_interrupt_breaks_off_with_an_exception_is_cancelled_and_runs_again(tmp_path):
    """A sample that raises while the evaluation is being cancelled (here its agent's factory, broken off) is
    recorded as cancelled, so the next call with the same log_dir runs it again rather than keep an error."""

    def broken_off():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)  # the harness cancels meanwhile
        raise ConnectionError("the connection was closed")

    results = evaluate(Recorder(broken_off), tasks(1), max_workers=1, log_dir=tmp_path, progress=False)
    assert results.cancelled and list(results.df.state) == ["cancelled"]
    assert results.df.error.iloc[0].startswith("cancelled while running")
    resumed = evaluate(Recorder(), tasks(1), log_dir=tmp_path, progress=False)
    assert list(resumed.df.state) == ["success"]
