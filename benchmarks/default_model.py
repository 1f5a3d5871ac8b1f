"""The offline default model as an agent brain: 8 trivial tasks through a real `nbagent.CodeAgent`.

    python benchmarks/default_model.py [--max-steps 4]

Prints one row per task (answer, checked by value, seconds, steps), then the load time, the solved
count and the median seconds per task. The last line printed is a one-line summary.
Set NBAGENT_MODEL to benchmark another model the same way.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _number(expected: float) -> Callable[[Any], bool]:
    def check(answer: Any) -> bool:
        try:
            return float(str(answer).strip().rstrip(".")) == expected
        except ValueError:
            return False

    return check


def _text(expected: str) -> Callable[[Any], bool]:
    return lambda answer: str(answer).strip().strip("'\"") == expected


def _list(expected: list[int]) -> Callable[[Any], bool]:
    def check(answer: Any) -> bool:
        if isinstance(answer, (list, tuple)):
            return list(answer) == expected
        return str(answer).replace(" ", "") == str(expected).replace(" ", "")

    return check


def _truth(answer: Any) -> bool:
    return answer is True or str(answer).strip().lower() in ("true", "yes", "yes, 97 is prime", "prime")


TASKS: list[tuple[str, Callable[[Any], bool]]] = [
    ("What is 2**10?", _number(1024)),
    ("Reverse the string 'notebook'.", _text("koobeton")),
    ("What is the sum of the integers from 1 to 100?", _number(5050)),
    ("How many vowels (a, e, i, o, u) are in the string 'jupyter widgets'?", _number(4)),
    ("What is 17*23?", _number(391)),
    ("Sort the list [3, 1, 2] in ascending order.", _list([1, 2, 3])),
    ("What is the length of the string 'nbagent'?", _number(7)),
    ("Is 97 a prime number? Answer True or False.", _truth),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-steps", type=int, default=4)
    args = parser.parse_args()

    from nbagent import CodeAgent
    from nbagent.models.default import default_model

    start = time.perf_counter()
    model = default_model()
    load = time.perf_counter() - start
    agent = CodeAgent(tools=[], model=model, max_steps=args.max_steps, verbosity_level=0, show_widget=False)
    print(f"# model: {model!r}; load {load:.1f} s; max_steps={args.max_steps}; load average {os.getloadavg()[0]:.1f}")
    print("| task | answer | solved | seconds | steps | tokens in/out |")
    print("|---|---|---|---|---|---|")
    times, solved = [], 0
    for task, check in TASKS:
        started = time.perf_counter()
        try:
            answer = agent.run(task)
        except Exception as err:  # a crash counts as unsolved, the benchmark goes on
            answer = f"<{type(err).__name__}: {err}>"
        seconds = time.perf_counter() - started
        actions = [s for s in agent.memory.steps if type(s).__name__ == "ActionStep"]
        steps = len(actions)
        tokens_in = sum(s.token_usage.input_tokens for s in actions if s.token_usage)
        tokens_out = sum(s.token_usage.output_tokens for s in actions if s.token_usage)
        ok = check(answer)
        solved += ok
        times.append(seconds)
        shown = repr(answer)[:40].replace("|", "\\|")
        print(
            f"| {task} | {shown} | {'yes' if ok else 'no'} | {seconds:.1f} | {steps} | {tokens_in}/{tokens_out} |",
            flush=True,
        )
    median = statistics.median(times)
    print(f"\nmachine load average {os.getloadavg()[0]:.1f} (2 cores)")
    print(f"load {load:.1f} s, solved {solved}/{len(TASKS)}, median {median:.1f} s/task, total {sum(times):.1f} s")
    print(
        f"SUMMARY: default model {solved}/{len(TASKS)} solved, median {median:.1f} s/task, "
        f"load {load:.1f} s, total {sum(times):.1f} s"
    )


if __name__ == "__main__":
    main()
