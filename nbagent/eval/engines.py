"""Where samples run: threads (the default), any `concurrent.futures.Executor`, or a Dask `Client`.

One small interface: `submit(job)` (a future with `add_done_callback`), `cancel(futures)` (pending ones
never start; on threads, running agents are stopped and finish as "cancelled"), `close()`.

Dask beyond one machine: `evaluate(..., executor=Client("tcp://scheduler:8786"))`. Every worker
needs nbagent (`pip install 'jupyter-nbagent[dask]'`, the same version), the packages the agents' tools import,
and the model's dependencies (for the offline default model: run `nbagent setup` on each worker); factories and
scorers travel pickled (cloudpickle: a function defined in the notebook works when it captures
nothing unpicklable). A local model is created on each worker, not shipped: create it inside the
factory, cached per process (`functools.cache`). An agent object's model that cannot be pickled
(an API client) is rebuilt on each worker from its `to_dict()`, which holds no secrets: set the API
keys in the workers' environment.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
from collections.abc import Iterable
from typing import Any

from nbagent.eval.samples import RunningAgents, SampleJob, SampleOutcome, check_picklable, run_sample

__all__ = ["Engine", "ThreadEngine", "ExecutorEngine", "DaskEngine", "make_engine", "is_dask_client"]

DEFAULT_MAX_WORKERS = 8


class Engine:
    """Runs `run_sample` on jobs; `remote` engines pickle jobs to other processes."""

    remote = False
    collects_after_cancel = False  # whether running samples stop and report after a cancel
    label = "threads"

    def submit(self, job: SampleJob) -> Any:
        raise NotImplementedError

    def check(self, what: str, value: Any) -> None:
        """Raise a clear error when `value` cannot travel to where samples run."""

    def result(self, future: Any) -> SampleOutcome:
        return future.result()

    def cancel(self, futures: Iterable[Any]) -> None:
        for future in futures:
            future.cancel()

    def close(self) -> None:
        """Release what the engine created (never the user's executor or client)."""


class ThreadEngine(Engine):
    """A thread pool in this process; cancel stops the running agents (their steps end as "stopped")."""

    collects_after_cancel = True

    def __init__(self, max_workers: int | None = None, executor: cf.ThreadPoolExecutor | None = None) -> None:
        self.running = RunningAgents()
        self._own = executor is None
        self.pool = executor or cf.ThreadPoolExecutor(
            max_workers or DEFAULT_MAX_WORKERS, thread_name_prefix="nbagent-eval"
        )
        self.label = f"{getattr(self.pool, '_max_workers', '?')} threads"

    def submit(self, job: SampleJob) -> Any:
        return self.pool.submit(run_sample, job, self.running)

    def cancel(self, futures: Iterable[Any]) -> None:
        super().cancel(futures)
        self.running.stop_all()

    def close(self) -> None:
        if self._own:
            self.pool.shutdown(wait=False, cancel_futures=True)


class ExecutorEngine(Engine):
    """Any other `concurrent.futures.Executor` (e.g. `ProcessPoolExecutor`): jobs are pickled."""

    remote = True

    def __init__(self, executor: cf.Executor) -> None:
        self.executor = executor
        self.label = type(executor).__name__

    def check(self, what: str, value: Any) -> None:
        check_picklable(what, value, f"the executor {type(self.executor).__name__}")

    def submit(self, job: SampleJob) -> Any:
        return self.executor.submit(run_sample, job)


class DaskEngine(Engine):
    """A `dask.distributed.Client`: a local cluster or one beyond this machine."""

    remote = True

    def __init__(self, client: Any) -> None:
        self.client = client
        workers = len(client.scheduler_info().get("workers", {}))
        self.label = f"Dask ({workers} workers)"

    def check(self, what: str, value: Any) -> None:
        import cloudpickle

        check_picklable(what, value, "Dask", dumps=cloudpickle.dumps)

    def submit(self, job: SampleJob) -> Any:
        key = f"nbagent-eval-{job.agent}-{job.sample.id}-{job.epoch}-{os.urandom(4).hex()}"
        return self.client.submit(run_sample, job, key=key, pure=False)

    def cancel(self, futures: Iterable[Any]) -> None:
        pending = [f for f in futures if not f.done()]
        if pending:
            self.client.cancel(pending)  # running tasks finish on their worker; their results are not waited for


def is_dask_client(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "Client" and cls.__module__.split(".")[0] == "distributed"


def make_engine(executor: Any, max_workers: int | None) -> Engine:
    if max_workers is not None and (not isinstance(max_workers, int) or max_workers < 1):
        raise ValueError(f"max_workers must be a positive integer, got {max_workers!r}")
    if executor is None:
        return ThreadEngine(max_workers)
    if is_dask_client(executor):
        return DaskEngine(executor)
    if isinstance(executor, cf.ThreadPoolExecutor):
        return ThreadEngine(executor=executor)
    if isinstance(executor, cf.Executor):
        return ExecutorEngine(executor)
    raise TypeError(
        f"executor must be a concurrent.futures.Executor or a dask.distributed.Client, got {type(executor).__name__}"
    )
