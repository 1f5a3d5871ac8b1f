"""Async runs: `await agent.arun(task)` and `async for event in agent.astream(task)`."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from control_helpers import Kernel, code, long_sleep

from nbagent import ActionStep, CodeAgent, FinalAnswerStep, RunEnd, RunStart, ScriptedModel


def make_agent(responses: list[str], latency: float = 0.0) -> CodeAgent:
    return CodeAgent(model=ScriptedModel(responses, latency=latency), verbosity_level=-1, show_widget=False)


def test_arun_gives_the_answer_and_the_same_memory_as_run() -> None:
    responses = [code("x = 6 * 7\nprint(x)"), code("final_answer(x)")]
    sync_agent, async_agent = make_agent(responses), make_agent(responses)
    assert sync_agent.run("Six times seven?") == 42
    assert asyncio.run(async_agent.arun("Six times seven?")) == 42
    assert [type(s).__name__ for s in async_agent.memory.steps] == [type(s).__name__ for s in sync_agent.memory.steps]
    assert async_agent.memory.steps[1].observations == sync_agent.memory.steps[1].observations
    full = asyncio.run(make_agent([code("final_answer(1)")]).arun("One?", return_full_result=True))
    assert full.state == "success" and full.output == 1


def test_astream_yields_the_run_stream_and_all_events_on_request() -> None:
    async def collect(agent: CodeAgent, **kw: bool) -> list:
        return [event async for event in agent.astream("Go", **kw)]

    events = asyncio.run(collect(make_agent([code("final_answer('done')")])))
    assert isinstance(events[-1], FinalAnswerStep) and events[-1].output == "done"
    assert not any(isinstance(e, (RunStart, RunEnd)) for e in events)
    everything = asyncio.run(collect(make_agent([code("final_answer('done')")]), all_events=True))
    assert isinstance(everything[0], RunStart) and isinstance(everything[-1], RunEnd)


def test_the_event_loop_stays_free_while_the_agent_works() -> None:
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.05)

    async def main() -> object:
        agent = make_agent([code("final_answer(1)")], latency=1.0)  # the model takes 1 s to answer
        tick = asyncio.create_task(ticker())
        try:
            return await agent.arun("Slow")
        finally:
            tick.cancel()

    assert asyncio.run(main()) == 1
    assert len(ticks) >= 10  # ~20 ticks in the second the model took


def test_two_agents_run_concurrently() -> None:
    calls: dict[str, tuple[float, float]] = {}  # each agent's model call: (began, ended)

    def answering(letter: str) -> CodeAgent:
        def answer(messages: object, **_: object) -> str:
            began = time.monotonic()
            time.sleep(1.0)
            calls[letter] = (began, time.monotonic())
            return code(f"final_answer('{letter}')")

        return CodeAgent(model=ScriptedModel(answer), verbosity_level=-1, show_widget=False)

    async def main() -> tuple[object, object]:
        return await asyncio.gather(answering("a").arun("A"), answering("b").arun("B"))

    assert asyncio.run(main()) == ["a", "b"]
    (a_began, a_ended), (b_began, b_ended) = calls["a"], calls["b"]
    assert a_began < b_ended and b_began < a_ended  # the two model calls overlapped (one after the other: they cannot)


def test_cancelling_the_awaiting_task_stops_the_run_and_the_agent_works_after() -> None:
    agent = make_agent([long_sleep(30), code("final_answer('after')")])

    async def main() -> None:
        task = asyncio.create_task(agent.arun("Sleep"))
        await asyncio.sleep(1.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    began = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - began < 10
    last = agent.memory.steps[-1]
    assert isinstance(last, ActionStep) and last.stopped and agent.last_result.state == "stopped"
    assert agent.run("Go on", reset=False) == "after"


@pytest.mark.slow
def test_top_level_await_in_a_real_kernel() -> None:
    kernel = Kernel(cwd=str(Path(__file__).resolve().parents[2]))
    try:
        out = kernel.run(
            "from nbagent import CodeAgent, ScriptedModel\n"
            "fence = '`' * 3\n"
            "agent = CodeAgent(model=ScriptedModel([f'{fence}python\\nfinal_answer(2 ** 10)\\n{fence}']),"
            " show_widget=False, verbosity_level=-1)\n"
            "answer = await agent.arun('Two to the tenth?')\n"
            "print(answer, type(answer).__name__)\n"
        )
        assert out.split() == ["1024", "int"]
    finally:
        kernel.close()
