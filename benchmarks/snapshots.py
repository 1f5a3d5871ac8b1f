"""What time travel costs: the kernel's memory with a 1 GB frame in the notebook, snapshots on and off (issue 23).

A notebook holds a 1 GB DataFrame (8 float64 columns). Three steps of an agent change it in place (one column each);
the isolated executor takes a snapshot before each step (``checkpoint``), as the agent loop does. Each variant runs in
a fresh process; the lines give the kernel's RSS (and the worker's) after the steps, and in multiples of the frame:

* ``snapshots off`` (``max_snapshots=0``): the old frames are freed as the write-back replaces them;
* ``snapshots on`` (the default: 20 snapshots, at most ``max_held_bytes`` of old values): each step's frame before it
  stays alive for "re-run from here";
* ``rewind``: the seconds ``rewind(1)`` takes (fresh worker included), and the RSS after it.

The worker keeps no snapshot of its own: a rewind forks a fresh worker from the restored kernel (a paused fork per
step would need ``fork`` inside the worker, which its seccomp filter refuses on purpose), so its cost is the line above.

And what the bookkeeping costs per step (issue 32): a notebook of 500 names (numbers, texts, small lists, dicts and
frames), 40 steps each rebinding three of them (a number, a text, a frame), the executor keeping 20 snapshots: the
seconds spent in ``checkpoint`` and in noting the step's writes and enforcing the limits, per step: the first (each
name asked once whether it is shared), while 1-19 snapshots are held, and with 20 held (target: <= 1 ms, not
growing with them). ``snapshots.py bookkeeping`` runs this part alone.

    .venv/bin/python benchmarks/snapshots.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
import warnings

ROWS = 15_625_000  # 8 columns x 8 bytes x 15.6 M rows = 1 GB
STEPS = 3


def rss(pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def meminfo(key: str) -> int:
    """A line of /proc/meminfo in bytes: ``Shmem`` counts the memory files the kernel maps (a value that came back
    through them is resident there, and counted in the kernel's RSS only for the pages it has read)."""
    with open("/proc/meminfo") as info:
        for line in info:
            if line.startswith(f"{key}:"):
                return int(line.split()[1]) * 1024
    return 0


def held() -> int:
    """What the kernel keeps: its RSS plus the memory files (Shmem) beyond those it already counts as resident."""
    return rss() + meminfo("Shmem")


def variant(snapshots: bool) -> dict:
    import numpy as np
    import pandas as pd

    from nbagent.sandbox import IsolatedPythonExecutor

    frame = pd.DataFrame({f"c{i}": np.arange(ROWS, dtype=np.float64) for i in range(8)})
    namespace = {"df": frame}
    del frame
    executor = IsolatedPythonExecutor(
        additional_authorized_imports=["pandas", "numpy"],
        namespace=namespace,
        max_snapshots=20 if snapshots else 0,
        memory_limit_bytes=8 * 2**30,
        timeout_seconds=300,
        max_transfer_bytes=2 * 2**30,
    )
    executor("1")  # the worker starts
    base, base_held = rss(), held()
    started = time.perf_counter()
    for step in range(1, STEPS + 1):
        executor.checkpoint(step)
        executor(f"df['c{step}'] = df['c{step}'] * 2")
    stepped = time.perf_counter() - started
    out = {"rss_before": base, "rss_after": rss(), "worker_rss": rss(executor.worker_pid), "steps_s": stepped}
    out["held_growth"] = held() - base_held
    out["came_back"] = type(namespace["df"]).__name__  # a DataFrame, not a handle kept in the worker
    if snapshots:
        started = time.perf_counter()
        rewound = executor.rewind(1)
        out.update(rewind_s=time.perf_counter() - started, rss_rewound=rss(), restored=rewound.found)
        out["held_rewound"] = held() - base_held
        out["same_frame"] = bool(namespace["df"]["c1"].iloc[3] == 3.0)
    executor.close()
    return out


NAMES = 500
SNAPSHOTS = 20
BOOK_STEPS = 40  # the first SNAPSHOTS steps fill the timeline; the rest run at the limit


def notebook_of(names: int) -> dict:
    """A notebook of ``names`` variables: numbers, texts, small lists and dicts, and one small frame in ten."""
    import numpy as np
    import pandas as pd

    namespace: dict = {}
    for i in range(names):
        kind = i % 10
        if kind == 0:
            namespace[f"v{i}"] = pd.DataFrame({"a": np.arange(100.0), "b": np.arange(100.0)})
        elif kind in (1, 2):
            namespace[f"v{i}"] = [i, i + 1, i + 2]
        elif kind == 3:
            namespace[f"v{i}"] = {"k": i}
        elif kind in (4, 5):
            namespace[f"v{i}"] = f"text {i}"
        else:
            namespace[f"v{i}"] = i
    return namespace


class Stopwatch:
    """Seconds spent in the wrapped methods per step, counted once when they call each other."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._depth = 0

    def wrap(self, owner: object, name: str) -> None:
        method = getattr(owner, name)

        def timed(*args: object, **kwargs: object) -> object:
            self._depth += 1
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.spent += time.perf_counter() - started

        setattr(owner, name, timed)


def bookkeeping(kind: str) -> list[float]:
    """Per step, the seconds the executor spends on time travel: ``checkpoint`` before the step, and during and
    after it the writes noted and the limits enforced (the step's code rebinds three names, one of them a frame)."""
    from nbagent.sandbox import IsolatedPythonExecutor, LocalPythonExecutor

    namespace = notebook_of(NAMES)
    options = {"additional_authorized_imports": ["pandas", "numpy"], "namespace": namespace}
    if kind == "isolated":
        executor = IsolatedPythonExecutor(max_snapshots=SNAPSHOTS, **options)
    else:
        warnings.simplefilter("ignore")  # the local executor's one-time notice
        executor = LocalPythonExecutor(**options)
        executor.timeline.max_snapshots = SNAPSHOTS
    executor("1")  # the worker starts here
    watch = Stopwatch()
    for owner, name in ((executor, "checkpoint"), (executor.timeline, "enforce"), (executor.timeline, "wrote")):
        watch.wrap(owner, name)
    if kind == "isolated":
        watch.wrap(executor, "_set_snapshot_room")
        watch.wrap(executor.timeline, "held_bytes")
    else:
        watch.wrap(executor, "_bindings")
        watch.wrap(executor, "_note_writes")
    per_step = []
    for step in range(1, BOOK_STEPS + 1):
        row = 10 * (step % (NAMES // 10))  # a frame, a text and a number of notebook_of's kinds
        number, text, frame = f"v{row + 6}", f"v{row + 4}", f"v{row}"
        watch.spent = 0.0
        executor.checkpoint(step)
        executor(f"{number} = {number} * 2\n{text} = 'step {step}'\n{frame} = {frame} + 1")
        per_step.append(watch.spent)
    assert len(executor.timeline.snapshots) == SNAPSHOTS
    if kind == "isolated":
        executor.close()
    return per_step


def print_bookkeeping() -> None:
    for kind in ("isolated", "local"):
        times = bookkeeping(kind)
        growing, full = times[1:SNAPSHOTS], times[SNAPSHOTS:]
        print(
            f"time travel bookkeeping ({kind}, {NAMES} names), ms per step: first {times[0] * 1000:.2f} (each name "
            f"asked once), median {statistics.median(growing) * 1000:.2f} while 1-{SNAPSHOTS - 1} snapshots are held, "
            f"{statistics.median(full) * 1000:.2f} (max {max(full) * 1000:.2f}) with {SNAPSHOTS} held"
        )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--variant":
        print(json.dumps(variant(sys.argv[2] == "on")))
        return
    print_bookkeeping()
    if sys.argv[1:2] == ["bookkeeping"]:
        return
    frame = 8 * 8 * ROWS
    results = {}
    for name in ("off", "on"):
        done = subprocess.run([sys.executable, __file__, "--variant", name], capture_output=True, text=True, check=True)
        results[name] = json.loads(done.stdout.strip().splitlines()[-1])
    for name, r in results.items():
        print(
            f"snapshots {name:>3}: kernel RSS {r['rss_before'] / 2**30:.2f} -> {r['rss_after'] / 2**30:.2f} GiB, "
            f"with its memory files +{r['held_growth'] / frame:.2f}x the frame, after {STEPS} steps changing it in "
            f"place ({r['steps_s']:.1f} s); "
            f"worker RSS {r['worker_rss'] / 2**30:.2f} GiB; df is a {r['came_back']}"
        )
    on, off = results["on"], results["off"]
    print(
        f"rewind(1): {on['rewind_s'] * 1000:.0f} ms (fresh worker included), restored={on['restored']}, "
        f"frame as before step 1: {on['same_frame']}; the kernel holds +{on['held_rewound'] / frame:.2f}x the frame "
        "after it (the later frames stay with the cut-off line, for restore_fork)"
    )
    extra = (on["held_growth"] - off["held_growth"]) / frame
    print(f"summary: snapshots of {STEPS} steps over a 1 GB frame held {extra:.2f}x the frame in the kernel")


if __name__ == "__main__":
    main()
