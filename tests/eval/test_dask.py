"""The Dask engine on a real 2-worker LocalCluster (processes, 127.0.0.1): same scores as threads."""

from __future__ import annotations

import threading

import cloudpickle
import evalkit
import pytest
from evalkit import code_agent, tasks, tool_agent

from nbagent import CodeAgent, ScriptedModel
from nbagent.eval import evaluate
from nbagent.eval.scorers import exact_match, includes, numeric

pytestmark = pytest.mark.slow
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    # the workers unpickle evalkit's factories by value (as they would a notebook's functions)
    cloudpickle.register_pickle_by_value(evalkit)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
        cloudpickle.unregister_pickle_by_value(evalkit)


def test_dask_gives_the_same_scores_as_threads(client, tmp_path):
    agents = {
        "code": code_agent,
        "tools": tool_agent,
        "object": CodeAgent(tools=[], model=ScriptedModel(evalkit.solve)),
    }
    scorers = [exact_match(), numeric(tol=0.5), includes()]
    threads = evaluate(agents, tasks(6), scorers=scorers, epochs=2, progress=False)
    dask = evaluate(agents, tasks(6), scorers=scorers, epochs=2, executor=client, log_dir=tmp_path, progress=False)
    assert dask.engine == "Dask (2 workers)"
    columns = ["agent", "id", "epoch", "answer", "state", "steps", "exact_match", "numeric", "includes"]
    assert dask.df[columns].equals(threads.df[columns])
    assert dask.summary()[["exact_match", "numeric", "includes"]].equals(
        threads.summary()[["exact_match", "numeric", "includes"]]
    )
    for agent in agents:  # the memories came back from the workers, equal to the threads' but for timings
        assert [type(s).__name__ for s in dask.memory("t3", agent).steps] == [
            type(s).__name__ for s in threads.memory("t3", agent).steps
        ]
        assert dask.memory("t3", agent).steps[-1].action_output == threads.memory("t3", agent).steps[-1].action_output
    pids = {client.run(lambda: __import__("os").getpid())[w] for w in client.scheduler_info()["workers"]}
    assert len(pids) == 2


def test_dask_refuses_an_unpicklable_factory(client):
    lock = threading.Lock()
    with pytest.raises(TypeError, match="The agent factory 'locked' cannot be pickled, and Dask runs samples"):
        evaluate({"locked": lambda: (lock, code_agent())[1]}, tasks(1), executor=client, progress=False)
