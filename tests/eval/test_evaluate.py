"""evaluate(): agents × tasks × epochs on threads; results, summary, memories, errors, bad input."""

from __future__ import annotations

import concurrent.futures as cf
import math
import threading

import pandas as pd
import pytest
from evalkit import Recorder, code_agent, failing_model, solve, tasks, tool_agent

from nbagent import AgentMemory, AgentWidget, CodeAgent, ScriptedModel
from nbagent.eval import EvalResults, Score, evaluate
from nbagent.eval.scorers import exact_match, llm_judge, numeric


def test_two_agents_dataframe_and_summary():
    results = evaluate(
        {"code": code_agent, "tools": tool_agent}, tasks(6), scorers=[exact_match(), numeric()], progress=False
    )
    df = results.df
    assert len(df) == 12 and list(df.agent.unique()) == ["code", "tools"]
    assert list(df.columns[:14]) == [
        "agent", "id", "epoch", "task", "expected", "answer", "state", "answered", "outcome", "steps",
        "input_tokens", "output_tokens", "duration_s", "error",
    ]  # fmt: skip
    assert {"exact_match", "numeric", "scorer_errors", "level"} <= set(df.columns)
    code = df[df.agent == "code"].set_index("id")
    assert code.loc["t3", "exact_match"] == 0.0 and code.loc["t3", "answer"] == 8  # the scripted mistake
    assert code.loc["t2", "exact_match"] == 1.0 and code.loc["t2", "state"] == "success"
    assert (df.steps == 1).all() and (df.input_tokens > 0).all() and (df.duration_s > 0).all()
    assert df.error.isna().all() and list(code.level) == [0, 1, 0, 1, 0, 1]
    assert df.answered.all() and (df.outcome == "answered").all()
    summary = results.summary()
    assert list(summary.index) == ["code", "tools"]
    assert summary.loc["code", "samples"] == 6 and summary.loc["code", "exact_match"] == pytest.approx(5 / 6)
    assert summary.loc["tools", "exact_match"] == 1.0 and summary.loc["tools", "errors"] == 0
    low, high = summary.loc["code", "exact_match_low"], summary.loc["code", "exact_match_high"]
    assert 0.3 < low < 5 / 6 < high < 1.0
    assert "code 0.83" in repr(results) and "tools 1.00" in repr(results)


def test_default_scorer_is_exact_match_and_one_factory_is_named_after_it():
    results = evaluate(code_agent, tasks(2), progress=False)
    assert results.scorers == ["exact_match"] and results.agents == ["code_agent"]


def test_epochs_keep_every_run():
    recorder = Recorder()
    results = evaluate(recorder, tasks(3), epochs=3, progress=False)
    assert len(recorder.agents) == 9 and len({id(a) for a in recorder.agents}) == 9
    assert sorted(results.df.epoch.value_counts().items()) == [(0, 3), (1, 3), (2, 3)]
    assert results.memory("t1", epoch=2) is not results.memory("t1", epoch=0)
    with pytest.raises(KeyError, match="has no epoch 5; it has epochs \\[0, 1, 2\\]"):
        results.memory("t1", epoch=5)


def test_memory_is_what_the_agent_recorded():
    recorder = Recorder()
    results = evaluate(recorder, tasks(4), progress=False)
    for task_id in ["t0", "t3"]:
        agent = recorder.agent_for(task_id)
        memory = results.memory(task_id)
        assert isinstance(memory, AgentMemory) and memory == agent.memory
    assert results.record("t3")["answer"] == 8


def test_memory_errors_name_what_exists():
    results = evaluate({"a": code_agent, "b": code_agent}, tasks(2), progress=False)
    with pytest.raises(ValueError, match="several agents \\(a, b\\)"):
        results.memory("t0")
    with pytest.raises(KeyError, match="No task 'nope' for agent 'a'; its task ids are 't0', 't1'"):
        results.memory("nope", agent="a")
    with pytest.raises(KeyError, match="No agent 'c'"):
        results.memory("t0", agent="c")


def test_run_widget_shows_the_run():
    results = evaluate(code_agent, tasks(2), progress=False)
    widget = results.run_widget("t1")
    assert isinstance(widget, AgentWidget)
    assert widget.run["status"] == "done" and "final answer: 3" in widget.summary()


def test_agent_object_is_recreated_per_sample():
    template = CodeAgent(tools=[], model=ScriptedModel(solve), max_steps=3, name="calc")
    results = evaluate(template, tasks(4), progress=False)
    assert results.agents == ["calc"] and results.summary().loc["calc", "exact_match"] == 0.75
    assert template.memory.steps == []  # the object itself never ran
    assert len(template.model.calls) == 4  # its (callable-scripted) model object is shared by the samples
    memories = [results.memory(f"t{i}") for i in range(4)]
    assert all(len(m.steps) == 2 for m in memories)  # each sample: its own task and step, nothing shared


def test_list_scripted_agent_object_starts_each_sample_at_its_first_answer():
    template = CodeAgent(tools=[], model=ScriptedModel(["```python\nfinal_answer(3)\n```"]))
    results = evaluate(template, [{"task": "1 + 2?", "answer": 3}, {"task": "2 + 1?", "answer": 3}], progress=False)
    assert list(results.df.state) == ["success", "success"] and list(results.df.exact_match) == [1.0, 1.0]


def test_agent_that_cannot_be_recreated_is_refused_clearly():
    agent = CodeAgent(tools=[], model=lambda messages, **kw: "```python\nfinal_answer(1)\n```")
    with pytest.raises(TypeError, match="cannot be re-created per sample from its to_dict\\(\\).*Pass a factory"):
        evaluate(agent, tasks(1), progress=False)


def test_agents_run_silently(capsys, monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: shown.append(a))
    evaluate(lambda: code_agent(verbosity_level=2, show_widget=True), tasks(3), progress=False)
    assert shown == [] and capsys.readouterr().out == ""


def test_model_failure_is_an_error_row_that_scores_as_a_failure():
    results = evaluate(
        {"ok": code_agent, "down": lambda: CodeAgent(tools=[], model=ScriptedModel(failing_model))},
        tasks(3),
        progress=False,
    )
    down = results.df[results.df.agent == "down"]
    assert (down.state == "error").all() and (down.exact_match == 0.0).all()  # the run ended without an answer
    assert (~down.answered).all() and (down.outcome == "no answer (model error)").all()
    assert down.error.str.contains("the model is down").all()
    summary = results.summary()
    assert summary.loc["down", "errors"] == 3 and summary.loc["down", "exact_match"] == 0.0
    assert summary.loc["down", "no_answer"] == 3
    assert summary.loc["ok", "errors"] == 0 and summary.loc["ok", "no_answer"] == 0


def test_factory_failures_are_recorded():
    def broken():
        raise RuntimeError("no key")

    results = evaluate({"broken": broken, "odd": lambda: "not an agent"}, tasks(2), progress=False)
    df = results.df.set_index("agent")
    assert df.loc["broken", "error"].str.startswith("RuntimeError: no key").all()
    assert df.loc["odd", "error"].str.contains("returned a str, not an agent").all()
    # No run ended: not "no answer", not scored (the agent was never tried).
    assert df.answered.isna().all() and (df.outcome == "error").all() and df.exact_match.isna().all()


def test_a_scorer_that_raises_is_recorded_and_the_rest_go_on():
    def picky(answer, expected, sample):
        if sample.id == "t1":
            raise ValueError("cannot grade t1")
        return Score(1.0, explanation="fine")

    results = evaluate(code_agent, tasks(3), scorers=[picky, exact_match()], progress=False)
    df = results.df.set_index("id")
    assert math.isnan(df.loc["t1", "picky"]) and df.loc["t1", "exact_match"] == 1.0
    assert df.loc["t1", "scorer_errors"] == "picky: ValueError: cannot grade t1"
    assert df.loc["t0", "picky"] == 1.0 and df.loc["t0", "picky_explanation"] == "fine"
    assert results.summary().loc["code_agent", "scorer_errors"] == 1


def test_max_steps_closing_reply_is_kept_but_not_scored():
    def never_done(messages, **kw):
        return "Thought: again.\n```python\nprint(1)\n```" if len(messages) < 6 else "It is 3"

    results = evaluate(
        lambda: CodeAgent(tools=[], model=ScriptedModel(never_done), max_steps=2),
        [{"task": "1 + 2?", "answer": 3}],
        scorers=numeric(),  # would find the 3 in the closing reply
        progress=False,
    )
    row = results.df.iloc[0]
    assert row.state == "max_steps_error" and row.error is None and row.steps == 2  # the closing reply is no step
    assert row.answer == "It is 3" and row.numeric == 0.0 and row.outcome == "no answer (max steps)"


def test_dataframe_and_jsonl_tasks_give_the_same_results(tmp_path):
    frame = pd.DataFrame(tasks(4))
    path = tmp_path / "tasks.jsonl"
    frame.to_json(path, orient="records", lines=True)
    a = evaluate(code_agent, frame, progress=False).df
    b = evaluate(code_agent, path, progress=False).df
    pd.testing.assert_series_equal(a.exact_match, b.exact_match)


def test_a_thread_pool_of_ones_own_and_max_workers_agree():
    serial = evaluate(code_agent, tasks(6), max_workers=1, progress=False)
    with cf.ThreadPoolExecutor(3) as pool:
        pooled = evaluate(code_agent, tasks(6), executor=pool, progress=False)
        assert pool.submit(lambda: 1).result() == 1  # the user's executor is not shut down
    assert list(serial.df.exact_match) == list(pooled.df.exact_match)


def test_max_workers_bounds_concurrency():
    """Two calls do overlap (each waits, up to a generous deadline, until a second one runs: no reliance on timing
    under load), and never a third."""
    import time

    running, peak, lock, two_running = [0], [0], threading.Lock(), threading.Event()

    def counted(messages, **kw):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            if running[0] >= 2:
                two_running.set()
        two_running.wait(10)
        time.sleep(0.05)  # room for a third call to start, were the bound broken
        with lock:
            running[0] -= 1
        return solve(messages)

    evaluate(lambda: CodeAgent(tools=[], model=ScriptedModel(counted)), tasks(8), max_workers=2, progress=False)
    assert peak[0] == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epochs": 0}, ValueError, "epochs must be a positive integer"),
        ({"max_workers": 0}, ValueError, "max_workers must be a positive integer"),
        (
            {"executor": "dask"},
            TypeError,
            "executor must be a concurrent.futures.Executor or a dask.distributed.Client",
        ),
        ({"progress": "yes"}, TypeError, "progress must be True, False, or an object"),
        ({"scorers": "exact"}, TypeError, "scorers must be"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        evaluate(code_agent, tasks(1), **kwargs)


def test_bad_agents():
    with pytest.raises(TypeError, match="pass an agent, or a factory"):
        evaluate({"x": 3}, tasks(1), progress=False)
    with pytest.raises(ValueError, match="agents is empty"):
        evaluate({}, tasks(1), progress=False)


def test_process_pool_refuses_an_unpicklable_factory():
    lock = threading.Lock()
    with cf.ProcessPoolExecutor(1) as pool:
        with pytest.raises(
            TypeError, match="The agent factory 'locked' cannot be pickled, and the executor ProcessPoolExecutor"
        ):
            evaluate({"locked": lambda: (lock, code_agent())[1]}, tasks(1), executor=pool, progress=False)
        with pytest.raises(TypeError, match="The scorer 'scorer' cannot be pickled"):
            evaluate(code_agent, tasks(1), scorers=lambda a, e: 1, executor=pool, progress=False)


def test_process_pool_runs_module_level_factories(monkeypatch):
    import multiprocessing
    import sys

    # an IPython shell made by an earlier test may have put its user module (no __spec__) in sys.modules["__main__"],
    # which spawn reads to start its processes: a plain script's __main__ has one (None when run as a file)
    monkeypatch.setattr(
        sys.modules["__main__"], "__spec__", getattr(sys.modules["__main__"], "__spec__", None), raising=False
    )
    with cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = evaluate(code_agent, tasks(4), executor=pool, progress=False)
    assert list(results.df.exact_match) == [1.0, 1.0, 1.0, 0.0]
    assert results.memory("t3") is not None and len(results.memory("t3").steps) == 2


def test_results_round_trip_through_the_constructor():
    results = evaluate(code_agent, tasks(2), progress=False)
    again = EvalResults(results.records, results.scorers)
    pd.testing.assert_frame_equal(results.df, again.df)


def test_an_llm_judge_explains_its_grades_in_the_results():
    def grade(messages, **kw):
        prompt = messages[0]["content"][0]["text"]
        return "Off by one.\nGRADE: I" if "Submitted answer:\n8\n" in prompt else "Correct sum.\nGRADE: C"

    judge = ScriptedModel(grade)
    results = evaluate(code_agent, tasks(4), scorers=[llm_judge(judge, rubric="Exact sums only.")], progress=False)
    df = results.df.set_index("id")
    assert list(df.llm_judge) == [1.0, 1.0, 1.0, 0.0]
    assert df.loc["t3", "llm_judge_explanation"] == "Off by one.\nGRADE: I"
    assert len(judge.calls) == 4


def test_in_another_process_a_model_that_cannot_travel_is_built_once_per_process():
    import pickle

    from nbagent import OpenAIServerModel
    from nbagent.eval.samples import AgentSource

    model = OpenAIServerModel(model_id="m", api_base="http://127.0.0.1:9/v1", api_key="secret")
    source = AgentSource("a", agent=CodeAgent(tools=[], model=model))
    assert source.make().model is model  # in this process: the object's model is reused
    shipped = pickle.loads(pickle.dumps(source))  # what a worker process receives
    first, second = shipped.make(), shipped.make()
    assert first.model is second.model and first.model is not model and first.memory is not second.memory
    assert "secret" not in pickle.dumps(source).decode("latin-1")
