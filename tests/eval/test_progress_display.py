"""Live progress (tracker, tqdm, the notebook view) and the results display (widget + static HTML)."""

from __future__ import annotations

import importlib
import io
import re

import pytest
from evalkit import code_agent, solve, task_text, tasks

from nbagent import AgentWidget, CodeAgent, ScriptedModel
from nbagent.eval import EvalResults, evaluate
from nbagent.eval import display as views
from nbagent.eval.progress import NotebookProgress, TqdmProgress, Tracker, make_progress
from nbagent.eval.scorers import exact_match, numeric

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MARKER = re.compile(r'<div class="nbagent nbagent-static" data-nbagent-run="[^"]*" data-status="([a-z_]*)"')


@pytest.fixture(scope="module")
def results() -> EvalResults:
    return evaluate({"a": code_agent, "b": code_agent}, tasks(4), scorers=[exact_match(), numeric()], progress=False)


def record(agent="a", state="success", score=1.0, tokens=10):
    return {
        "agent": agent,
        "id": "t0",
        "epoch": 0,
        "state": state,
        "input_tokens": tokens,
        "output_tokens": 1,
        "scores": {"em": score},
    }


def test_tracker_counts_scores_and_time():
    tracker = Tracker(total=4, agents=["a", "b"], scorers=["em"], engine="2 threads")
    tracker.add(record(score=1.0), resumed=True)
    tracker.add(record(score=0.0))
    tracker.add(record(agent="b", state="error", score=None))
    tracker.add(record(agent="b", state="cancelled"))
    snap = tracker.snapshot()
    assert (snap["done"], snap["total"], snap["errors"], snap["cancelled"], snap["resumed"]) == (3, 4, 1, 1, 1)
    assert snap["input_tokens"] == 30 and snap["agents"][0]["scores"] == {"em": 0.5}
    assert snap["agents"][1] == {
        "agent": "b",
        "done": 1,
        "errors": 1,
        "no_answer": 0,
        "scores": {"em": None},
        "nondeterministic": 0,
    }
    assert tracker.remaining_s == 0.0  # nothing left but the cancelled one
    assert tracker.postfix() == "a 0.50 · b – · 1 err · 33 tok"
    tracker.finish("done")
    assert tracker.snapshot()["status"] == "done" and tracker.remaining_s == 0.0


def test_tqdm_bar_in_a_terminal():
    out = io.StringIO()
    evaluate(code_agent, tasks(4), progress=TqdmProgress(file=out))
    text = out.getvalue()
    assert "4/4" in text and "code_agent 0.75" in text and "tok" in text
    assert isinstance(make_progress(True), TqdmProgress)  # not in a kernel here


def test_the_terminal_says_whether_two_agents_differ():
    out = io.StringIO()
    evaluate({"a": code_agent, "b": flaky_agent()}, tasks(6), progress=TqdmProgress(file=out))
    lines = out.getvalue().splitlines()
    assert "b − a (exact_match, 6 tasks): not significant, +0.17 [+0.00, +1.00], p = 1.00" in lines[-2]
    assert lines[-1].startswith("One epoch:") and "epochs=3" in lines[-1]


def test_a_custom_progress_object_sees_every_sample():
    class Log:
        def __init__(self):
            self.events = []

        def start(self, tracker):
            self.events.append(("start", tracker.total))

        def update(self, tracker, record):
            if record is not None:
                self.events.append(("sample", record["id"], tracker.done))

        def close(self, tracker):
            self.events.append(("close", tracker.status, tracker.done))

    log = Log()
    evaluate(code_agent, tasks(3), max_workers=1, progress=log)
    assert log.events[0] == ("start", 3) and log.events[-1] == ("close", "done", 3)
    assert sorted(e[1] for e in log.events[1:-1]) == ["t0", "t1", "t2"] and [e[2] for e in log.events[1:-1]] == [
        1,
        2,
        3,
    ]


@pytest.fixture
def displayed(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(("display", obj, kw)))
    monkeypatch.setattr(IPython.display, "update_display", lambda obj, **kw: shown.append(("update", obj, kw)))
    return shown


def test_notebook_progress_is_a_live_table_whose_rows_open_runs(displayed):
    view = NotebookProgress()
    evaluate({"a": code_agent, "b": code_agent}, tasks(3), progress=view)
    first, last = displayed[0], displayed[-1]
    assert first[0] == "display" and last[0] == "update" and first[2]["display_id"] == last[2]["display_id"]
    assert set(first[1]) == {WIDGET_VIEW, "text/html", "text/plain"}
    assert MARKER.search(first[1]["text/html"]).group(1) == "running"
    assert (
        MARKER.search(last[1]["text/html"]).group(1) == "done"
        and last[1]["text/plain"] == "evaluate: 6/6 samples (done)"
    )
    panel = view.panel
    assert len(panel.view.rows) == 6 and panel.view.progress["status"] == "done" and panel.view.progress["done"] == 6
    row = next(r for r in panel.view.rows if r["agent"] == "b" and r["id"] == "t2")
    assert row["answer"] == "5" and row["scores"] == {"exact_match": 1.0} and row["tokens"] > 0
    panel.view.selected = row["key"]  # what a click in the table does
    (opened,) = panel.run_box.children
    assert isinstance(opened, AgentWidget) and "final answer: 5" in opened.summary()
    panel.view.selected = ""
    assert panel.run_box.children == ()


def test_notebook_progress_without_the_widget_front_end_is_static_html(displayed, monkeypatch):
    monkeypatch.setattr(views, "widgets_available", lambda: False)
    evaluate(code_agent, tasks(2), progress=NotebookProgress())
    assert all(set(obj) == {"text/html", "text/plain"} for _, obj, _ in displayed)
    assert 'data-status="done"' in displayed[-1][1]["text/html"] and "2/2 samples" in displayed[-1][1]["text/html"]


def test_static_html_has_summary_plot_and_table(results):
    page = results.to_html()
    assert MARKER.search(page).group(1) == "done"
    assert (
        page.count('<tr class="nbe-row') == 8 and len(re.findall(r'<tr class="[^"]*nbe-failing', page)) == 2
    )  # t3 of each agent
    assert "<svg" in page and "exact_match" in page and "[0." in page  # the summary's interval
    assert '<td class="nbe-score nbe-fail">0</td>' in page


def test_static_html_escapes_model_output():
    evil = CodeAgent(tools=[], model=ScriptedModel(['```python\nfinal_answer("<script>alert(1)</script>")\n```']))
    page = evaluate(evil, [{"task": "x?", "answer": "<b>"}], progress=False).to_html()
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;" in page


def test_rich_display_bundle_and_clickable_rows(results):
    bundle = results._repr_mimebundle_()
    assert set(bundle) == {WIDGET_VIEW, "text/html", "text/plain"} and bundle["text/plain"] == repr(results)
    box = results.widget()
    header, body = box.children
    assert "<svg" in header.value and "nbe-summary" in header.value
    panel = box.panel
    assert len(panel.view.rows) == 8 and panel.view.scorers == ["exact_match", "numeric"]
    panel.view.selected = views.key_text(("b", "t3", 0))
    (opened,) = panel.run_box.children
    assert isinstance(opened, AgentWidget) and "final answer: 8" in opened.summary()
    panel.view.selected = views.key_text(("b", "nope", 0))
    assert "Cannot open this run" in panel.run_box.children[0].value


def test_without_the_front_end_the_display_is_static(results, monkeypatch):
    monkeypatch.setattr(views, "widgets_available", lambda: False)
    assert set(results._repr_mimebundle_()) == {"text/html", "text/plain"}


def test_plot_and_summary_handle_empty_and_cancelled():
    empty = EvalResults([], ["exact_match"])
    assert views.plot_svg(empty.summary(), empty.scorers) == "" and len(empty.summary()) == 0
    cancelled = EvalResults(
        [{**record(), "scores": {"exact_match": None}, "state": "cancelled"}], ["exact_match"], cancelled=True
    )
    assert MARKER.search(cancelled.to_html()).group(1) == "cancelled" and "Cancelled" in cancelled.to_html()
    assert "cancelled" in repr(cancelled)


def test_the_notebook_save_hook_keeps_the_static_table_of_a_finished_evaluation(results):
    """The contract with nbagent's save hook: a finished evaluation's widget view is dropped on save."""
    for name in ("nbagent.notebook.save_hook", "nbagent.views.saving"):
        try:
            strip = importlib.import_module(name).strip_finished_runs
            break
        except ImportError:
            continue
    else:
        pytest.skip("nbagent's save hook is not importable here")
    done = results._repr_mimebundle_()
    running = {**done, "text/html": done["text/html"].replace('data-status="done"', 'data-status="running"', 1)}
    nb = {
        "cells": [
            {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": dict(b), "metadata": {}}]}
            for b in (done, running)
        ],
        "metadata": {},
    }
    assert strip(nb) == 1
    assert (
        WIDGET_VIEW not in nb["cells"][0]["outputs"][0]["data"] and WIDGET_VIEW in nb["cells"][1]["outputs"][0]["data"]
    )


# ---------------------------------------------------------------------------------------------- signal or noise


def flaky_agent():
    """Adds right, except that its answer to t1 changes from one run to the next."""
    calls = iter(range(1000))

    def answer(messages, **_):
        text = task_text(messages)
        a, b = (int(x) for x in re.search(r"What is (\d+) \+ (\d+)", text).groups())
        off = a == 1 and next(calls) % 2 == 1
        return f"```python\nfinal_answer({a + b + off})\n```"

    model = ScriptedModel(answer)
    return lambda: CodeAgent(tools=[], model=model)


def test_one_epoch_the_live_and_saved_displays_say_what_it_cannot_tell(displayed):
    view = NotebookProgress()
    results = evaluate({"a": code_agent, "b": flaky_agent()}, tasks(6), progress=view)
    progress = view.panel.view.progress
    assert "epochs=3" in progress["note"] and [c["pair"] for c in progress["comparisons"]] == ["b − a"]
    assert progress["comparisons"][0]["conclusion"] == "not significant"
    live_saved = displayed[-1][1]["text/html"]  # what the save hook keeps of the live table
    assert "nbe-epoch-note" in live_saved and "cannot be told from sampling noise" in live_saved
    assert "nbe-comparisons" in live_saved and "not significant" in live_saved
    page = results.to_html()
    assert "cannot be told from sampling noise" in page and page.count('<tr class="nbe-nosig">') == 1
    assert "<th>varying tasks</th>" in page and '<span class="nbe-varies"' not in page
    header, body = results.widget().children
    assert "nbe-comparisons" in header.value and "nbe-epoch-note" in header.value
    assert body.children[0].progress["note"] == "" and body.children[0].progress["comparisons"] == []  # no repeat


def test_answers_that_vary_between_epochs_are_marked_live_and_saved(displayed):
    view = NotebookProgress()
    results = evaluate({"b": flaky_agent()}, tasks(3), epochs=2, progress=view)
    rows = view.panel.view.rows
    assert sorted((r["id"], r["epoch"]) for r in rows if r["nondeterministic"]) == [("t1", 0), ("t1", 1)]
    assert all(r["nondeterministic"] is False for r in rows if r["id"] != "t1")
    assert view.panel.view.progress["agents"][0]["nondeterministic"] == 1 and view.panel.view.progress["note"] == ""
    assert displayed[-1][1]["text/html"].count("· varies</span>") == 2
    assert results.to_html().count('<span class="nbe-varies"') == 2
    assert len(re.findall(r'<tr class="[^"]*nbe-varying', results.to_html())) == 2


def test_a_resumed_evaluation_shows_the_rows_from_the_log_and_its_whole_time(displayed, tmp_path):
    slow = lambda: CodeAgent(tools=[], model=ScriptedModel(solve, latency=0.2))  # noqa: E731
    first = evaluate(slow, tasks(3), max_workers=1, log_dir=tmp_path, progress=False)
    assert first.elapsed_s >= 0.6
    view = NotebookProgress()
    again = evaluate(slow, tasks(3), epochs=2, max_workers=1, log_dir=tmp_path, progress=view)
    rows = view.panel.view.rows
    assert sorted((r["id"], r["epoch"]) for r in rows) == [(f"t{i}", e) for i in range(3) for e in (0, 1)]
    progress = view.panel.view.progress
    assert progress["done"] == 6 and progress["resumed"] == 3
    assert progress["elapsed_s"] >= first.elapsed_s + 0.6  # the first call's time, then this call's three samples
    assert (
        "6/6 samples" in displayed[-1][1]["text/html"]
        and displayed[-1][1]["text/html"].count('<tr class="nbe-row') == 6
    )
    assert again.elapsed_s == pytest.approx(progress["elapsed_s"], abs=0.05)
    assert EvalResults.load(tmp_path).elapsed_s == pytest.approx(again.elapsed_s, abs=0.01)


def test_the_time_of_an_evaluation_that_never_ended_is_read_from_its_records(tmp_path):
    """The kernel died mid-evaluation: eval.json never got the time; each record carries the clock."""
    import json

    from nbagent.eval.log import EvalLog

    evaluate(code_agent, tasks(3), log_dir=tmp_path, progress=False)
    spec = json.loads((tmp_path / "eval.json").read_text())
    stamps = [json.loads(line)["eval_elapsed_s"] for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert spec["elapsed_s"] >= max(stamps) > 0
    del spec["elapsed_s"]
    (tmp_path / "eval.json").write_text(json.dumps(spec))
    assert EvalLog(tmp_path).elapsed_s() == max(stamps)
