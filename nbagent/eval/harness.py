"""`evaluate()`: agents × tasks × epochs, scored, in parallel, live in the cell, resumable."""

from __future__ import annotations

import queue
import signal
import threading
import time
from pathlib import Path
from typing import Any

from nbagent.eval.engines import Engine, make_engine
from nbagent.eval.log import EvalLog
from nbagent.eval.outcomes import settle
from nbagent.eval.progress import Tracker, make_progress
from nbagent.eval.results import EvalResults
from nbagent.eval.samples import CANCELLED, Key, SampleJob, SampleOutcome, base_record, normalize_agents
from nbagent.eval.scorers import normalize_scorers
from nbagent.eval.tasks import load_tasks, tasks_fingerprint

__all__ = ["evaluate"]

TICK_S = 0.25  # how often the progress clock moves while no sample finishes
CANCEL_GRACE_S = 10.0  # how long a cancel waits for running samples to stop and report


def evaluate(
    agents: Any,
    tasks: Any,
    *,
    scorers: Any = None,
    epochs: int = 1,
    max_workers: int | None = None,
    executor: Any = None,
    log_dir: str | Path | None = None,
    retry_errors: bool = False,
    progress: Any = True,
    reproducible: bool = False,
) -> EvalResults:
    """Run every agent on every task `epochs` times, score each answer, and return the results.

    Args:
        agents: an agent factory (a callable with no arguments returning a fresh agent), an agent,
            or a dict `name -> factory | agent` (a list works too). A factory is called once per
            sample. An agent object is re-created per sample from its `to_dict()` (its model object is
            reused: see nbagent.eval.samples), so samples never share memory or executor state; an
            agent that cannot be re-created that way is refused with a clear error (pass a factory).
            Every sample's agent runs silently (no widget, no console output).
        tasks: a list of dicts, a pandas DataFrame, or a path to a `.jsonl` / `.csv` file. The prompt
            column is `task` (or `question`, `input`, `prompt`), the reference `answer` (or `expected`,
            `target`); optional `id` (else a stable id from the row's content), `images`,
            `additional_args`; other columns are kept as metadata columns of the results.
        scorers: a scorer, a list, or a dict `name -> scorer` (default: `exact_match()`); see
            `nbagent.scorers`. A scorer that raises records an error for that sample and scorer. Only a run
            that ended with a final answer is scored: a run that ended without one (max steps reached —
            the model's closing reply is not an answer —, stopped, timed out, stuck, failed) gets every
            scorer's minimum (0) without calling it; the columns `answered` and `outcome` say which
            (e.g. "no answer (max steps)"). A sample that could not run at all (its factory raised) is
            an error, not scored.
        epochs: how many times each (agent, task) runs; each run is kept (column `epoch`).
        max_workers: threads running samples at once (default 8; samples mostly wait on models). A local
            model (llama.cpp) answers one call at a time: `max_workers=1` keeps its prompt cache warm.
        executor: instead of threads, any `concurrent.futures.Executor` or a `dask.distributed.Client`
            (a local cluster or `Client("tcp://...")` beyond this machine). With processes or Dask,
            factories and scorers must be picklable (a clear error says which is not); each process
            builds its own model.
        log_dir: a directory where each finished sample is appended to `results.jsonl` and its memory
            saved at once. Calling again with the same `log_dir` skips the finished samples (a log
            of other tasks or scorers is refused). `EvalResults.load(log_dir)` reads it back.
        retry_errors: with `log_dir`, run again the samples that ended in an error.
        progress: True (a live table in a notebook, a tqdm bar in a terminal), False, or an object
            with `start(tracker)`, `update(tracker, record)`, `close(tracker)`.
        reproducible: also record, for each answered sample, whether the program of its run (`agent.to_code()`:
            its steps' code without the model, run once on copies of its inputs) gives the same answer: the column
            `reproducible` (True, False; NA when the run did not answer), so a comparison can count the answers
            that do not depend on the model's luck. It costs one more run of each answer's code.

    The kernel's interrupt (Ctrl-C) cancels: samples not started are dropped, running ones are
    stopped and recorded as "cancelled" (re-run by the next call with the same `log_dir`), and the
    results of the finished ones are returned.
    """
    samples = load_tasks(tasks)
    named_scorers = normalize_scorers(scorers)
    sources = normalize_agents(agents)
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    view = make_progress(progress)
    engine = make_engine(executor, max_workers)
    try:
        if engine.remote:
            for name, source in sources.items():
                engine.check(f"The agent factory {name!r}" if source.factory else f"The agent {name!r}", source)
            for name, scorer in named_scorers.items():
                engine.check(f"The scorer {name!r}", scorer)
        return _evaluate(engine, view, sources, samples, named_scorers, epochs, log_dir, retry_errors, reproducible)
    finally:
        engine.close()


def _turns(agents: list[str], k: int) -> list[str]:
    """The agents in the order they run the k-th (task, epoch): each goes first in turn.

    A fixed order would hand the second agent a warm cache (a local model's prompt prefix, the OS's file
    cache) on every task, and its "time / sample" would look better for it; taking turns spreads that.
    """
    shift = k % len(agents) if agents else 0
    return agents[shift:] + agents[:shift]


def _evaluate(
    engine: Engine,
    view: Any,
    sources: dict[str, Any],
    samples: list[Any],
    scorers: dict[str, Any],
    epochs: int,
    log_dir: str | Path | None,
    retry_errors: bool,
    reproducible: bool = False,
) -> EvalResults:
    log = EvalLog(log_dir) if log_dir is not None else None
    previous: dict[Key, dict[str, Any]] = {}
    if log is not None:
        log.open(samples, tasks_fingerprint(samples), list(scorers), list(sources), epochs)
        previous = log.done_keys(retry_errors)
    jobs = [
        SampleJob(name, sources[name], sample, epoch, scorers, reproducible)
        for epoch in range(epochs)
        for i, sample in enumerate(samples)
        for name in _turns(list(sources), i + epoch)
    ]
    wanted = {job.key for job in jobs}
    previous = {key: record for key, record in previous.items() if key in wanted}
    jobs = [job for job in jobs if job.key not in previous]

    earlier_s = log.elapsed_s() if log is not None else 0.0
    tracker = Tracker(len(wanted), list(sources), list(scorers), engine.label, epochs=epochs, earlier_s=earlier_s)
    for record in previous.values():
        tracker.add(record, resumed=True)
    records: dict[Key, dict[str, Any]] = dict(previous)
    memories: dict[Key, Any] = {}

    def open_run(key: Key) -> Any:
        return _results(records, memories, scorers, sources, samples, log, False, engine, tracker).run_widget(
            key[1], key[0], key[2]
        )

    tracker.open_run = open_run

    def finish(outcome: SampleOutcome) -> None:
        record = settle(outcome.record)  # a record the engine made (a cancel, a failure to run) gets its outcome
        if log is not None:
            record["eval_elapsed_s"] = round(tracker.elapsed_s, 3)  # a resumed evaluation's clock starts from it
            log.append(record, outcome.memory)
        records[outcome.key] = record
        if outcome.memory is not None and log is None:  # with a log, runs are read back from disk when opened
            memories[outcome.key] = outcome.memory
        tracker.add(record)
        view.update(tracker, record)

    view.start(tracker)
    futures: dict[Any, SampleJob] = {}
    handled: set[Any] = set()

    def take(future: Any) -> None:
        handled.add(future)
        finish(_outcome(engine, future, futures[future]))

    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()  # futures, put there by their done-callbacks
    interrupts = _Interrupts()
    cancelled = False
    with interrupts:
        try:
            try:
                for job in jobs:
                    future = engine.submit(job)
                    futures[future] = job
                    future.add_done_callback(finished.put)
                while len(handled) < len(futures) and not interrupts.count:
                    try:
                        future = finished.get(timeout=TICK_S)
                    except queue.Empty:
                        view.update(tracker, None)  # the clock moves while samples run
                        continue
                    if future not in handled:
                        take(future)
            except KeyboardInterrupt:  # not in the main thread: the signal was not ours to catch
                interrupts.count += 1
            if interrupts.count:
                cancelled = True
                _cancel(engine, futures, handled, take, finished, records, finish, interrupts)
        finally:
            tracker.finish("cancelled" if cancelled else "done")
            if log is not None:
                log.save_elapsed(tracker.elapsed_s)
            view.close(tracker)
    return _results(records, memories, scorers, sources, samples, log, cancelled, engine, tracker)


class _Interrupts:
    """Counts Ctrl-C / kernel interrupts instead of raising mid-bookkeeping; the loop checks between waits.

    Only the main thread can install a signal handler; elsewhere KeyboardInterrupt is caught as usual.
    """

    def __init__(self) -> None:
        self.count = 0
        self._previous: Any = None

    def _handle(self, signum: int, frame: Any) -> None:
        self.count += 1

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            try:
                self._previous = signal.signal(signal.SIGINT, self._handle)
            except (ValueError, OSError):
                self._previous = None
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _cancel(
    engine: Engine,
    futures: dict[Any, SampleJob],
    handled: set[Any],
    take: Any,
    finished: queue.SimpleQueue[Any],
    records: dict[Key, Any],
    finish: Any,
    interrupts: _Interrupts,
) -> None:
    """Keep what finished, drop what has not started, stop what runs and record it as cancelled.

    On threads, the running agents are stopped and come back as "cancelled" with the steps they
    made. On other engines running samples cannot be stopped: they are recorded as cancelled
    when the engine says they were running (a process pool), else simply left out; either way
    the next call with the same log_dir runs them.
    """
    for future in futures:
        if future.done() and not future.cancelled() and future not in handled:
            take(future)
    unfinished = [f for f in futures if f not in handled]
    engine.cancel(unfinished)
    running = {f for f in unfinished if not f.cancelled()}
    deadline = time.monotonic() + CANCEL_GRACE_S
    try:
        while running and engine.collects_after_cancel and time.monotonic() < deadline and interrupts.count < 2:
            try:
                future = finished.get(timeout=TICK_S)
            except queue.Empty:
                engine.cancel(running)  # an agent that registered after the first stop is stopped too
                continue
            if future in running:
                running.discard(future)
                take(future)
    except KeyboardInterrupt:
        pass  # a second interrupt: stop waiting
    for future in running:
        job = futures[future]
        if job.key not in records:
            record = base_record(job)
            record.update(state=CANCELLED, error="cancelled while running (the evaluation was interrupted)")
            finish(SampleOutcome(record))


def _outcome(engine: Engine, future: Any, job: SampleJob) -> SampleOutcome:
    try:
        return engine.result(future)
    except BaseException as error:  # the engine failed to run it (a worker died, a job did not unpickle)
        if isinstance(error, KeyboardInterrupt):
            raise
        record = base_record(job)
        cancelled = type(error).__name__ == "CancelledError"
        record.update(
            state=CANCELLED if cancelled else "error",
            error="cancelled"
            if cancelled
            else f"{engine.label} could not run this sample: {type(error).__name__}: {error}",
        )
        return SampleOutcome(record)


def _results(
    records: dict[Key, dict[str, Any]],
    memories: dict[Key, Any],
    scorers: dict[str, Any],
    sources: dict[str, Any],
    samples: list[Any],
    log: EvalLog | None,
    cancelled: bool,
    engine: Engine,
    tracker: Tracker,
) -> EvalResults:
    return EvalResults(
        list(records.values()),
        list(scorers),
        memories=memories,
        log_dir=log.path if log is not None else None,
        cancelled=cancelled,
        agents=list(sources),
        task_order=[s.id for s in samples],
        engine=engine.label,
        elapsed_s=tracker.elapsed_s,
    )
