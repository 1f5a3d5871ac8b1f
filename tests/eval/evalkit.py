"""Helpers of the evaluation tests: arithmetic tasks and scripted agents that answer them.

Module-level (not fixtures) so that process pools and Dask workers can unpickle them.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from nbagent import CodeAgent, ScriptedModel, ToolCallingAgent

WRONG = {"t3"}  # the scripted agent answers these wrong: a mix of passes and failures


def tasks(n: int = 6) -> list[dict[str, Any]]:
    return [{"id": f"t{i}", "task": f"What is {i} + {i + 1}?", "answer": 2 * i + 1, "level": i % 2} for i in range(n)]


def task_text(messages: list[Any]) -> str:
    """The text of the first message after the system prompt that holds a sum to do."""
    for message in messages[1:]:
        content = getattr(message, "content", None) if not isinstance(message, dict) else message.get("content")
        text = (
            content
            if isinstance(content, str)
            else " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))
        )
        if re.search(r"What is \d+ \+ \d+", text):
            return text
    return ""


def solve(messages: list[Any], **_: Any) -> str:
    """A CodeAgent's answer: one code block computing the sum (off by one for the WRONG tasks)."""
    text = task_text(messages)
    a, b = (int(x) for x in re.search(r"What is (\d+) \+ (\d+)", text).groups())
    wrong = a in {int(t[1:]) for t in WRONG}
    return f"Thought: I add them.\n```python\nfinal_answer({a} + {b}{' + 1' if wrong else ''})\n```"


def two_steps(messages: list[Any], **_: Any) -> str:
    """Two steps: print the sum, then answer (the benchmark's agent)."""
    if not any("Observation" in str(getattr(m, "content", "")) for m in messages[2:]):
        return "Thought: first look.\n```python\nprint('looking')\n```"
    return solve(messages)


def code_agent(**kwargs: Any) -> CodeAgent:
    return CodeAgent(tools=[], model=ScriptedModel(solve), **kwargs)


def slow_code_agent() -> CodeAgent:
    return CodeAgent(tools=[], model=ScriptedModel(solve, latency=0.05))


def tool_agent() -> ToolCallingAgent:
    def answer(messages: list[Any], **_: Any) -> dict[str, Any]:
        a, b = (int(x) for x in re.search(r"What is (\d+) \+ (\d+)", task_text(messages)).groups())
        return {
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "final_answer", "arguments": {"answer": a + b}}}
            ],
        }

    return ToolCallingAgent(tools=[], model=ScriptedModel(answer))


class Recorder:
    """A factory that keeps the agents it made (to compare their memory with the results')."""

    def __init__(self, make: Any = code_agent) -> None:
        self.make = make
        self.agents: list[Any] = []
        self.lock = threading.Lock()

    def __call__(self) -> Any:
        agent = self.make()
        with self.lock:
            self.agents.append(agent)
        return agent

    def agent_for(self, task_id: str) -> Any:
        number = task_id[1:]
        return next(a for a in self.agents if f"What is {number} +" in (a.task or ""))


def failing_model(messages: list[Any], **_: Any) -> str:
    raise RuntimeError("the model is down")


def sleep_then(seconds: float):
    def answer(messages: list[Any], **kwargs: Any) -> str:
        time.sleep(seconds)
        return solve(messages)

    return answer
