"""Per-step overhead of the agent loop: nbagent vs smolagents 1.26, same instant fake model, one run.

Each agent runs tasks of STEPS steps whose code is trivial (`x = 1`), then `final_answer`.
The model answers instantly, so what is measured is the loop itself: building messages from
memory, parsing the code, running it in the executor, recording the step. Prints µs/step for
both and the ratio; the last line is the one-line summary.

    .venv/bin/python benchmarks/loop.py
"""

from __future__ import annotations

import statistics
import time

STEPS = 20
RUNS = 15
STEP_TEXT = "Thought: keep going.\n```python\nx = 1\n```"
FINAL_TEXT = "Thought: done.\n```python\nfinal_answer(x)\n```"


def script() -> list[str]:
    return [STEP_TEXT] * (STEPS - 1) + [FINAL_TEXT]


def nbagent_run() -> float:
    from nbagent import CodeAgent, ScriptedModel

    agent = CodeAgent(tools=[], model=ScriptedModel(script()), max_steps=STEPS, verbosity_level=-1, show_widget=False)
    started = time.perf_counter()
    assert agent.run("loop") == 1
    return (time.perf_counter() - started) / STEPS


def smolagents_run() -> float:
    from smolagents import CodeAgent
    from smolagents.models import ChatMessage, MessageRole, Model, TokenUsage

    class InstantModel(Model):
        def __init__(self) -> None:
            super().__init__(model_id="instant")
            self.answers = iter(script())

        def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
            text = next(self.answers).replace("```python\n", "<code>\n").replace("\n```", "\n</code>")
            return ChatMessage(
                role=MessageRole.ASSISTANT, content=text, token_usage=TokenUsage(input_tokens=1, output_tokens=1)
            )

    agent = CodeAgent(tools=[], model=InstantModel(), max_steps=STEPS, verbosity_level=-1, stream_outputs=False)
    started = time.perf_counter()
    assert agent.run("loop") == 1
    return (time.perf_counter() - started) / STEPS


def measure(run) -> float:
    run()  # warm-up: imports, prompt templates
    return statistics.median(run() for _ in range(RUNS))


def main() -> None:
    ours = measure(nbagent_run) * 1e6
    theirs = measure(smolagents_run) * 1e6
    print(f"{'loop':<12} {'µs/step':>10}")
    print(f"{'nbagent':<12} {ours:>10.0f}")
    print(f"{'smolagents':<12} {theirs:>10.0f}")
    verdict = "meets" if ours <= 500 else "misses"
    print(
        f"loop overhead: nbagent {ours:.0f} µs/step, smolagents 1.26 {theirs:.0f} µs/step, "
        f"ratio {theirs / ours:.1f}x faster; {verdict} the 0.5 ms target ({STEPS}-step runs, median of {RUNS})"
    )


if __name__ == "__main__":
    main()
