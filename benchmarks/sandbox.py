"""The sandbox against plain CPython and smolagents 1.26's LocalPythonExecutor, in one run.

For each snippet: CPU time (median of RUNS) run natively (``compile`` + ``exec`` of the same code at module level, like a
cell), in ``nbagent.sandbox.LocalPythonExecutor`` (parse, check, rewrite, compile, run) and in smolagents' tree-walking
``LocalPythonExecutor``, and the ratios. Each executor is created once per snippet and reused across runs, as an agent
reuses its executor across steps; garbage is collected before every timed run so no run pays for another's.
Then how far past the deadline each kind of stuck code is stopped (timeout_seconds=1), in the main thread and in a
worker thread. The last line is the one-line summary. Targets: median ours/native <= 1.5x, every overshoot <= 0.25 s.

    .venv/bin/python benchmarks/sandbox.py
"""

from __future__ import annotations

import gc
import statistics
import threading
import time
from collections.abc import Callable

RUNS = 5

SNIPPETS: dict[str, str] = {
    "sum loop, 200k ints": "total = 0\nfor i in range(200000):\n    total += i\n",
    "sieve of Eratosthenes to 20k": (
        "n = 20000\nis_prime = [True] * (n + 1)\nis_prime[0] = is_prime[1] = False\n"
        "for i in range(2, int(n ** 0.5) + 1):\n    if is_prime[i]:\n        for j in range(i * i, n + 1, i):\n"
        "            is_prime[j] = False\nprimes = [i for i in range(n + 1) if is_prime[i]]\n"
    ),
    "trial-division primes < 20k": (
        "primes = []\nfor n in range(2, 20000):\n    is_p = True\n    for d in range(2, int(n ** 0.5) + 1):\n"
        "        if n % d == 0:\n            is_p = False\n            break\n    if is_p:\n        primes.append(n)\n"
    ),
    "recursive fib(20)": "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\nresult = fib(20)\n",
    "list comprehension, 100k": "squares = [x * x for x in range(100000)]\n",
}

STUCK: dict[str, str] = {
    "time.sleep(30)": "import time\ntime.sleep(30)",
    "CPU loop": "n = 0\nwhile True:\n    n += 1",
    "C call: catastrophic regex": "import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')",
}
WORKER_STUCK = ("time.sleep(30)", "CPU loop")


def cpu_time(run: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        gc.collect()
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def native(code: str) -> Callable[[], object]:
    return lambda: exec(compile(code, "<native>", "exec"), {"__name__": "__main__"})


def ours(code: str) -> Callable[[], object]:
    from nbagent.sandbox import LocalPythonExecutor

    executor = LocalPythonExecutor()
    return lambda: executor(code)


def smolagents_executor(code: str) -> Callable[[], object]:
    from smolagents.local_python_executor import LocalPythonExecutor as SmolExecutor

    executor = SmolExecutor(additional_authorized_imports=[])
    executor.send_tools({})
    return lambda: executor(code)


def overshoot(code: str, in_worker: bool) -> float:
    from nbagent.sandbox import ExecutionTimeout, LocalPythonExecutor

    executor = LocalPythonExecutor(timeout_seconds=1)
    box: dict[str, float] = {}

    def run() -> None:
        start = time.monotonic()
        try:
            executor(code)
        except ExecutionTimeout:
            box["elapsed"] = time.monotonic() - start

    if in_worker:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    else:
        run()
    return box["elapsed"] - 1.0


def smolagents_sleep_overshoot() -> float:
    from smolagents.local_python_executor import LocalPythonExecutor as SmolExecutor

    executor = SmolExecutor(additional_authorized_imports=["time"], timeout_seconds=1)
    executor.send_tools({})
    start = time.monotonic()
    try:
        executor("import time\ntime.sleep(3)")
    except Exception:  # whatever it raises, only the time matters
        pass
    return time.monotonic() - start - 1.0


def main() -> None:
    print(f"CPU time per snippet, median of {RUNS} runs")
    header = f"{'snippet':32} {'native ms':>10} {'ours ms':>10} {'smolagents ms':>14} {'ours/native':>12} {'smol/native':>12}"
    print(header)
    print("-" * len(header))
    ours_ratios, smol_ratios = [], []
    for name, code in SNIPPETS.items():
        base = cpu_time(native(code))
        mine = cpu_time(ours(code))
        smol = cpu_time(smolagents_executor(code))
        ours_ratios.append(mine / base)
        smol_ratios.append(smol / base)
        print(
            f"{name:32} {base * 1e3:10.2f} {mine * 1e3:10.2f} {smol * 1e3:14.1f} "
            f"{mine / base:11.2f}x {smol / base:11.0f}x"
        )
    print()
    print("timeout overshoot past the deadline (timeout_seconds=1)")
    overshoots = []
    for name, code in STUCK.items():
        for in_worker in (False, True):
            if in_worker and name not in WORKER_STUCK:
                continue
            late = overshoot(code, in_worker)
            overshoots.append(late)
            print(f"  {name:30} {'worker thread' if in_worker else 'main thread':14} {late:6.3f} s")
    print(f"  {'smolagents, time.sleep(3)':30} {'main thread':14} {smolagents_sleep_overshoot():6.3f} s")
    median_ours, median_smol = statistics.median(ours_ratios), statistics.median(smol_ratios)
    worst = max(overshoots)
    met = median_ours <= 1.5 and worst <= 0.25
    print()
    print(
        f"sandbox benchmark: median ours/native {median_ours:.2f}x (target <= 1.5x), smolagents/native "
        f"{median_smol:.0f}x, worst timeout overshoot {worst:.3f} s (target <= 0.25 s): "
        f"{'targets met' if met else 'TARGET MISSED'}"
    )


if __name__ == "__main__":
    main()
