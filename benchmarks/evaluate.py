"""evaluate(): wall time on threads and on Dask, and its per-sample overhead over a bare loop of agent.run.

200 arithmetic tasks; each sample is a fresh CodeAgent whose ScriptedModel sleeps 50 ms per call and
takes 2 steps (print, then final_answer): 100 ms of "model time" per task, 20 s for all of them one
after the other. Rows: a bare loop (`factory().run(task)` for each task), evaluate() with 1, 4 and 16
threads, and on a 2-worker Dask LocalCluster (processes, 127.0.0.1) with 1 and with 8 threads per
worker (cluster start-up not counted). The overhead of evaluate() is measured apart with an instant
model (same 2 steps, no sleep), so that the sleeps' jitter does not hide it: the fastest of 5 runs of
evaluate(max_workers=1) against the fastest of 5 bare loops (interleaved), per sample. progress=False throughout
(the notebook's live table and tqdm update a few times a second, not per sample).

    .venv/bin/python benchmarks/evaluate.py [--tasks 200] [--no-dask]

Targets (issue 11): 16 threads >= 10x faster than 1 thread; overhead <= 5 ms per sample.
"""

from __future__ import annotations

import argparse
import re
import time
from typing import Any

LATENCY = 0.05
REPEATS = 5


def answer(messages: list[Any], **_: Any) -> str:
    """Step 1 prints, step 2 answers the sum asked in the task."""
    task = next(str(m.content) for m in messages[1:] if "What is" in str(m.content))
    a, b = (int(x) for x in re.search(r"What is (\d+) \+ (\d+)", task).groups())
    if not any("Observation" in str(m.content) for m in messages[2:]):
        return "Thought: look first.\n```python\nprint('looking')\n```"
    return f"Thought: add.\n```python\nfinal_answer({a} + {b})\n```"


def slow_agent() -> Any:
    from nbagent import CodeAgent, ScriptedModel

    return CodeAgent(tools=[], model=ScriptedModel(answer, latency=LATENCY), verbosity_level=-1, show_widget=False)


def instant_agent() -> Any:
    from nbagent import CodeAgent, ScriptedModel

    return CodeAgent(tools=[], model=ScriptedModel(answer), verbosity_level=-1, show_widget=False)


def make_tasks(n: int) -> list[dict[str, Any]]:
    return [{"id": f"t{i}", "task": f"What is {i} + {i + 1}?", "answer": 2 * i + 1} for i in range(n)]


def bare_loop(factory: Any, tasks: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    for task in tasks:
        assert factory().run(task["task"]) == task["answer"]
    return time.perf_counter() - started


def timed_evaluate(factory: Any, tasks: list[dict[str, Any]], **kwargs: Any) -> float:
    from nbagent.eval import evaluate

    started = time.perf_counter()
    results = evaluate({"agent": factory}, tasks, progress=False, **kwargs)
    elapsed = time.perf_counter() - started
    assert results.summary().loc["agent", "exact_match"] == 1.0 and (results.df.steps == 2).all()
    return elapsed


def dask_times(tasks: list[dict[str, Any]]) -> dict[str, float]:
    import cloudpickle
    from distributed import Client, LocalCluster

    cloudpickle.register_pickle_by_value(__import__(__name__))  # the workers cannot import this script
    times = {}
    for threads in (1, 8):
        with LocalCluster(
            n_workers=2, threads_per_worker=threads, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster:
            with Client(cluster) as client:
                timed_evaluate(slow_agent, tasks[:4], executor=client)  # warm-up: workers import nbagent
                times[f"Dask 2 workers x {threads} thread{'s' if threads > 1 else ''}"] = timed_evaluate(
                    slow_agent, tasks, executor=client
                )
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    tasks = make_tasks(args.tasks)

    bare_loop(instant_agent, tasks[:5])  # warm-up: imports, prompt templates
    bares, evals = [], []
    for _ in range(REPEATS):  # interleaved, so that both see the same load; the fastest run is the least disturbed
        bares.append(bare_loop(instant_agent, tasks))
        evals.append(timed_evaluate(instant_agent, tasks, max_workers=1))
    bare, ours = min(bares), min(evals)
    overhead_ms = (ours - bare) / len(tasks) * 1e3

    rows = {"bare loop": bare_loop(slow_agent, tasks)}
    for threads in (1, 4, 16):
        rows[f"evaluate, {threads} thread{'s' if threads > 1 else ''}"] = timed_evaluate(
            slow_agent, tasks, max_workers=threads
        )
    if not args.no_dask:
        rows.update(dask_times(tasks))

    one = rows["evaluate, 1 thread"]
    print(f"{len(tasks)} tasks x 2 steps x {LATENCY * 1e3:.0f} ms per model call")
    print(f"{'engine':<32} {'wall s':>8} {'vs 1 thread':>12}")
    for name, seconds in rows.items():
        print(f"{name:<32} {seconds:>8.2f} {one / seconds:>11.1f}x")
    print(f"{'instant model, bare loop':<32} {bare:>8.2f}")
    print(f"{'instant model, evaluate 1 thread':<32} {ours:>8.2f}")
    speedup = one / rows["evaluate, 16 threads"]
    dask = [f"{name} {one / s:.1f}x" for name, s in rows.items() if name.startswith("Dask")]
    print(
        f"evaluate: 16 threads {speedup:.1f}x faster than 1 thread (target >= 10x)"
        + (f", {', '.join(dask)}" if dask else "")
        + f"; overhead {overhead_ms:.2f} ms/sample over a bare loop (target <= 5 ms)"
    )


if __name__ == "__main__":
    main()
