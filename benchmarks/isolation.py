"""The isolated executor (confined worker process) against the local one and plain CPython, in one run.

* worker start: fork of this process (numpy and pandas loaded) + confinement, against spawning a fresh interpreter
  that imports numpy and pandas (what a spawned worker would pay before seeing a single variable); and the secrets
  scrub a worker start pays in a real kernel (its session key, history, clients): a plain one, and one holding 2 GiB
  of frames and 1M small objects (500k dicts and their texts), one that allocated and freed 1 GB (a long-lived
  kernel's heap: given back in the worker's copy, not searched), one with the default model loaded (its weights and
  caches not searched; and, to compare, searched), with the scrub's parts (target: under 20 ms).
  ``isolation.py scrub`` runs this part alone;
* per-step overhead: an empty step; an empty step with a 500 MB DataFrame in the namespace; a step returning a new
  100 MB DataFrame (written back into the namespace), each minus plain ``exec`` of the same code;
* the five snippets of benchmarks/sandbox.py, best wall time of RUNS (the step's fixed overhead and the write-back
  of the names they bind included), divided by native: local, isolated, and isolated with ``guards=False`` (the
  process boundary alone, without the in-worker rewrite);
* timeout overshoot past the deadline (timeout_seconds=1) for ``time.sleep``, a CPU loop and ``sum(range(10**10))``
  (a C call the local executor cannot interrupt);
* an idle worker's memory (PSS and private dirty pages, from /proc/<pid>/smaps_rollup);
* the decode budget: what hostile values cost the host (peak RSS growth and seconds of one step with the guards
  off), and a new 100 MB DataFrame for comparison; run it on an older checkout to compare (``decode_budget()``);
* the network: worker start with and without a network namespace of its own, entering it alone, and a GET's latency
  through the host's CONNECT proxy (from the worker) against a direct connection (from this process), on loopback.
* big results (benchmarks/big_results.py): returning a new 100 MB and 1 GB frame and array, the kernel's first read
  included, against making and reading them natively and a memcpy of the same bytes, by each path (the socket into
  private huge-page memory, sealed shared memory in 4 KiB and in 2 MiB pages), with this machine's settings and what
  the other setting gives, and the kernel's peak memory. ``isolation.py big-results`` runs this section alone.

Targets: empty-step overhead <= 20 ms; snippets median <= 1.3x native, none above 2x; every overshoot <= 0.25 s.
The last line is the one-line summary.

    .venv/bin/python benchmarks/isolation.py
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import gc
import json
import mmap
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from sandbox import SNIPPETS

from nbagent.sandbox import ExecutionError, ExecutionTimeout, IsolatedPythonExecutor, LocalPythonExecutor

RUNS = 7
STEPS = 30
STUCK = {
    "time.sleep(30)": "import time\ntime.sleep(30)",
    "CPU loop": "n = 0\nwhile True:\n    n += 1",
    "sum(range(10**10))": "sum(range(10**10))",
}


def wall(run: Callable[[], object], runs: int = RUNS) -> float:
    """Best wall time of ``runs`` (the machine is shared: the minimum is the least noisy estimate)."""
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def native(code: str, namespace: dict | None = None) -> Callable[[], object]:
    compiled = compile(code, "<native>", "exec")
    ns = namespace if namespace is not None else {"__name__": "__main__"}
    return lambda: exec(compiled, ns)


def make(kind: str, **options: object) -> LocalPythonExecutor | IsolatedPythonExecutor:
    options.setdefault("additional_authorized_imports", ["numpy", "pandas"])
    cls = IsolatedPythonExecutor if kind == "isolated" else LocalPythonExecutor
    return cls(**options)  # type: ignore[arg-type]


def worker_start() -> tuple[float, float]:
    forks = []
    for _ in range(3):
        executor = IsolatedPythonExecutor()
        start = time.perf_counter()
        executor("1")
        forks.append(time.perf_counter() - start)
        executor.close()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy, pandas"], check=True)
    return statistics.median(forks), time.perf_counter() - start


DECODE_ATTACKS = {
    "[b'x' * 100_000] * 9000": "x = [b'x' * 100_000] * 9000",
    "['y' * 100_000] * 9000": "x = ['y' * 100_000] * 9000",
    "np.broadcast_to(np.zeros(10), (10**7, 10))": "import numpy as np\nx = np.broadcast_to(np.zeros(10), (10**7, 10))",
    "[Fraction(3**252000, 7)] * 9000": "from fractions import Fraction\nx = [Fraction(3**252000, 7)] * 9000",
    "dict of 10,000 colliding int keys": "x = {i * (2**61 - 1): 0 for i in range(10_000)}",
    "a new 100 MB DataFrame (honest)": "import numpy as np, pandas as pd\nx = pd.DataFrame(np.ones((1_310_720, 10)))",
}


def _rss(key: str) -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(key + ":"))
    return int(line.split()[1]) / 1024


def decode_budget() -> dict[str, tuple[float, float, str]]:
    """Per attack: the host's peak RSS growth (MB), the step's seconds, and what ``x`` became (or the error)."""
    rows = {}
    for name, code in DECODE_ATTACKS.items():
        executor = IsolatedPythonExecutor(
            guards=False, timeout_seconds=300, additional_authorized_imports=["numpy", "pandas", "fractions"]
        )
        executor("1")  # the worker starts here, not in the measure
        gc.collect()
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # the peak (VmHWM) starts again from the current RSS
        base, start = _rss("VmRSS"), time.perf_counter()
        try:
            executor(code)
            outcome = type(executor.state.get("x")).__name__
        except ExecutionError as exc:
            outcome = exc.cause_type or "error"
        rows[name] = (_rss("VmHWM") - base, time.perf_counter() - start, outcome)
        executor.close()
    return rows


def print_decode_budget() -> None:
    print(f"{'decode budget: one step with the value':48} {'host peak MB':>12} {'seconds':>8}  x in the notebook")
    for name, (peak, seconds, outcome) in decode_budget().items():
        print(f"{name:48} {peak:12.0f} {seconds:8.2f}  {outcome}")


def per_step(run: Callable[[], object], steps: int) -> float:
    """Mean wall time of consecutive steps (as an agent runs them: no collection in between)."""
    gc.collect()
    start = time.perf_counter()
    for _ in range(steps):
        run()
    return (time.perf_counter() - start) / steps


def step_overheads() -> dict[str, dict[str, float]]:
    big = pd.DataFrame(np.ones((6_553_600, 10)))  # 500 MB
    cases = {
        "empty step": ({}, "pass"),
        "empty step, 500 MB frame in namespace": ({"big": big}, "pass"),
        "step returning a 100 MB frame": (
            {},
            "import numpy as np, pandas as pd\nout = pd.DataFrame(np.ones((1_310_720, 10)))",
        ),
    }
    rows: dict[str, dict[str, float]] = {}
    for name, (variables, code) in cases.items():
        steps = STEPS if "100 MB" not in name else RUNS
        base = per_step(native(code, {"__name__": "__main__", **variables}), steps)
        row = {}
        for kind in ("local", "isolated"):
            executor = make(kind, namespace={"__name__": "__main__", **variables})
            executor(code)  # the worker starts here (fork), not in the timed runs
            row[kind] = per_step(lambda executor=executor, code=code: executor(code), steps) - base
            if kind == "isolated":
                executor.close()
        rows[name] = row
    del big
    return rows


def snippet_ratios() -> dict[str, dict[str, float]]:
    rows = {}
    for name, code in SNIPPETS.items():
        base = wall(native(code))
        row = {}
        for kind, options in (("local", {}), ("isolated", {}), ("isolated, no guards", {"guards": False})):
            executor = make(kind.split(",")[0], **options)
            executor(code)
            row[kind] = wall(lambda executor=executor, code=code: executor(code)) / base
            if kind != "local":
                executor.close()
        rows[name] = row
    return rows


def overshoots() -> dict[str, dict[str, float | None]]:
    rows: dict[str, dict[str, float | None]] = {}
    for name, code in STUCK.items():
        row: dict[str, float | None] = {}
        for kind in ("local", "isolated"):
            if kind == "local" and "10**10" in code:
                row[kind] = None  # never stops: the local executor cannot interrupt a C call
                continue
            executor = make(kind, timeout_seconds=1)
            executor("1")
            start = time.monotonic()
            try:
                executor(code)
            except ExecutionTimeout:
                pass
            row[kind] = time.monotonic() - start - 1.0
            if kind == "isolated":
                executor.close()
        rows[name] = row
    return rows


def idle_memory() -> tuple[float, float]:
    executor = IsolatedPythonExecutor()
    executor("x = 1")
    time.sleep(0.2)
    fields = {}
    with open(f"/proc/{executor.worker_pid}/smaps_rollup") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                fields[parts[0].rstrip(":")] = int(parts[1]) / 1024
    executor.close()
    return fields.get("Pss", 0.0), fields.get("Private_Dirty", 0.0)


SCRUB_KERNELS = {
    "plain kernel (numpy, pandas)": "",
    "2 GiB of frames + 1M small objects": (
        "frames = {f'f{i}': pd.DataFrame({f'c{j}': np.full(16_777_216, float(j)) for j in range(8)}) for i in (1, 2)}\n"
        "globals().update(frames)\n"
        "del frames\n"
        "records = [{'id': i, 'name': f'item {i}'} for i in range(500_000)]  # 500k dicts, 500k texts\n"
    ),
    # a long-lived kernel's heap keeps what it freed: given back in the worker's copy, not searched (wipe.py)
    "1 GB allocated and freed (a long-lived kernel)": (
        "blobs = [bytes(4096) for i in range(250_000)]\nkept = blobs[::300]\ndel blobs\n"
    ),
    # its weights and caches are not searched (boundary/model_memory.py); the same model with them searched:
    "the default model loaded": "from nbagent.models.default import default_model\nmodel = default_model()\n",
    "the default model loaded, its memory searched": (
        "from nbagent.models.default import default_model\nmodel = default_model()\n"
        "from nbagent.sandbox.boundary import model_memory\nmodel_memory._HELD.clear()\n"
    ),
}
SCRUB_STARTS = 5  # the first searches everything; the later ones what may have changed (boundary/unchanged.py)


def scrub_costs(setup: str) -> list[dict]:
    """The secrets scrub's report (``confinement['kernel_secrets']``) of SCRUB_STARTS worker starts in a real
    kernel (jupyter_client) after ``setup``."""
    from jupyter_client import KernelManager

    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)

        def run(code: str, **expressions: str) -> dict:
            reply = client.execute_interactive(
                code, user_expressions=expressions, timeout=600, output_hook=lambda message: None
            )
            assert reply["content"]["status"] == "ok", reply["content"].get("evalue")
            return {k: v["data"]["text/plain"] for k, v in reply["content"]["user_expressions"].items()}

        run("import json, numpy as np, pandas as pd\nfrom nbagent.sandbox import IsolatedPythonExecutor\n" + setup)
        reports = []
        for _ in range(SCRUB_STARTS):
            code = (
                "executor = IsolatedPythonExecutor(namespace=get_ipython().user_ns)\n"
                "executor('1')\n"
                "report = json.dumps(executor.confinement['kernel_secrets'])\n"
                "executor.close()"
            )
            reports.append(json.loads(ast.literal_eval(run(code, report="report")["report"])))
        return reports
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def print_scrub() -> None:
    """The scrub at worker start in a plain kernel and in one holding 2 GiB of frames and 1M small objects (target:
    under 20 ms): the first start (everything searched) and the median of the later ones (only what may hold a secret
    not searched yet: boundary/unchanged.py), with their parts and what was read; then what watching the kernel's
    memory costs it (:func:`watch_cost`)."""
    print(f"{'secrets scrub at worker start':48} {'first ms':>9} {'later ms':>9}  later: parts (ms), memory read")
    for name, setup in SCRUB_KERNELS.items():
        reports = scrub_costs(setup)
        first, later = reports[0], reports[1:]
        total = statistics.median(r["seconds"] for r in later)
        parts = {k: statistics.median(r["costs"][k] for r in later) for k in later[0]["costs"]}
        shown = ", ".join(f"{k} {v * 1e3:.1f}" for k, v in parts.items())
        searched = statistics.median(r.get("searched_bytes", 0) for r in later) / 2**20
        known = statistics.median(r.get("known_free_bytes", 0) for r in later) / 2**20
        shown += f"; searched {searched:.0f} MiB, known free {known:.0f} MiB (first: {first.get('searched_bytes', 0) / 2**20:.0f})"
        shown += f"; model memory not searched {first.get('model_memory_bytes', 0) / 2**20:.0f} MiB"
        print(f"{name:48} {first['seconds'] * 1e3:9.1f} {total * 1e3:9.1f}  {shown}")
    from nbagent.sandbox.boundary import unchanged

    watched, plain = watch_cost()
    print(
        f"rewriting 1 GiB of the kernel's memory after a start: watched {watched * 1e3:.0f} ms, never watched "
        f"{plain * 1e3:.0f} ms ({watched / plain:.2f}x; once a kernel watches: from "
        f"{unchanged.WATCHED_FROM_BYTES / 2**20:.0f} MiB resident outside its namespace's arrays)"
    )


def watch_cost(size: int = 2**30) -> tuple[float, float]:
    """Seconds the kernel takes to rewrite ``size`` bytes of its memory (4 KiB pages) once a worker started: memory
    watched since (boundary/unchanged.py: the first write to each page after a start is a minor fault; memory in huge
    pages, a namespace's large arrays and a model's memory are never watched) and memory made after that start."""
    from nbagent.sandbox.boundary import unchanged

    def populated() -> tuple[mmap.mmap, int]:
        memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        with contextlib.suppress(AttributeError, OSError):
            memory.madvise(mmap.MADV_NOHUGEPAGE)
        address = ctypes.addressof((ctypes.c_char * size).from_buffer(memory))
        ctypes.memset(address, 1, size)
        return memory, address

    def rewrite(address: int) -> float:
        began = time.perf_counter()
        ctypes.memset(address, 2, size)
        return time.perf_counter() - began

    watched, at = populated()
    threshold, unchanged.WATCHED_FROM_BYTES = unchanged.WATCHED_FROM_BYTES, 0  # (this process may be small)
    try:
        executor = IsolatedPythonExecutor(namespace={})
        executor("1")  # watched from before this fork on
        executor.close()
    finally:
        unchanged.WATCHED_FROM_BYTES = threshold
    plain, plain_at = populated()
    seconds = rewrite(at), rewrite(plain_at)
    del at, plain_at
    watched.close()
    plain.close()
    return seconds


REQUESTS = 300


def network_proxy() -> None:
    """Prints the network rows: worker start with and without a namespace of its own, and a request's latency
    through the host's CONNECT proxy (from inside the worker) against a direct connection (from this process)."""
    import http.client
    import http.server
    import socket
    import threading

    from nbagent.sandbox.boundary import netns

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, for the rows that reuse one connection
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]

    def starts(runs: int = 21) -> dict[tuple[bool, bool], float]:
        """Median first-call time per (own namespace, network granted), the four kinds interleaved (less drift)."""
        times: dict[tuple[bool, bool], list[float]] = {}
        for _ in range(runs):
            for namespace in (True, False):
                for network in (False, True):
                    os.environ[netns.FORCE_FALLBACK_VARIABLE] = "1" if namespace else "0"
                    executor = IsolatedPythonExecutor(allow_network=network)
                    begin = time.perf_counter()
                    executor("1")
                    times.setdefault((namespace, network), []).append(time.perf_counter() - begin)
                    executor.close()
        os.environ.pop(netns.FORCE_FALLBACK_VARIABLE)
        return {kind: statistics.median(values) for kind, values in times.items()}

    def entering(relay: bool, runs: int = 21) -> float:
        """Median time of netns.enter alone (unshare; with a relay: loopback up, listener bound), in forked children."""
        times = []
        for _ in range(runs):
            read, write = os.pipe()
            host, worker = socket.socketpair() if relay else (None, None)
            pid = os.fork()
            if pid == 0:
                begin = time.perf_counter()
                netns.enter(namespace=True, relay_fd=worker.fileno() if worker else None, fallback_ports=(443,))
                os.write(write, str(time.perf_counter() - begin).encode())
                os._exit(0)
            os.close(write)
            times.append(float(os.read(read, 100)))
            os.waitpid(pid, 0)
            os.close(read)
            for sock in (host, worker):
                if sock is not None:
                    sock.close()
        return statistics.median(times)

    def direct(reuse: bool) -> float:
        connection = http.client.HTTPConnection("127.0.0.1", port)
        begin = time.perf_counter()
        for _ in range(REQUESTS):
            if not reuse:
                connection = http.client.HTTPConnection("127.0.0.1", port)
            connection.request("GET", "/")
            connection.getresponse().read()
            if not reuse:
                connection.close()
        return (time.perf_counter() - begin) / REQUESTS

    proxied_code = f"""
import http.client, time
def connect():
    c = http.client.HTTPConnection('127.0.0.1', {netns.RELAY_PORT})
    c.set_tunnel('127.0.0.1', {port})
    return c
c = connect()
begin = time.perf_counter()
for _ in range({REQUESTS}):
    if not REUSE:
        c = connect()
    c.request('GET', '/')
    c.getresponse().read()
    if not REUSE:
        c.close()
(time.perf_counter() - begin) / {REQUESTS}
"""
    executor = IsolatedPythonExecutor(guards=False, allow_hosts=[f"127.0.0.1:{port}"], allow_network=True)
    rows = {}
    for reuse in (False, True):
        label = "one connection for all requests" if reuse else "a new connection per request"
        rows[label] = (direct(reuse), executor(f"REUSE = {reuse}\n{proxied_code}").output)
    executor.close()
    server.shutdown()
    server.server_close()
    start = starts()
    print(f"{'worker start (median of 21, interleaved)':48} {'own netns ms':>12} {'kernel netns ms':>16}")
    for label, network in (("no network grant", False), ("network granted (relay + proxy)", True)):
        print(f"{label:48} {start[True, network] * 1e3:12.1f} {start[False, network] * 1e3:16.1f}")
    print(
        f"{'entering the namespace alone (median of 21)':48} {entering(False) * 1e3:12.2f} ms; with the relay "
        f"{entering(True) * 1e3:.2f} ms"
    )
    print(f"{f'request latency, GET over loopback ({REQUESTS} requests)':48} {'proxy ms':>12} {'direct ms':>16}")
    for label, (plain, proxied) in rows.items():
        print(f"{label:48} {proxied * 1e3:12.3f} {plain * 1e3:16.3f}")


def print_big_results() -> None:
    """Big results (benchmarks/big_results.py), in a fresh process: it mounts a huge-page tmpfs in a mount namespace
    of its own to measure what shared memory with 2 MiB pages would give, without changing the machine's settings."""
    subprocess.run([sys.executable, str(Path(__file__).with_name("big_results.py"))], check=True)


def main() -> None:
    if sys.argv[1:2] == ["big-results"]:
        print_big_results()
        return
    if sys.argv[1:2] == ["scrub"]:
        print_scrub()
        return
    warnings.simplefilter("ignore")  # the local executor's one-time notice
    fork, spawn = worker_start()
    print(
        f"worker start: fork + confine {fork * 1e3:.1f} ms; spawning python + import numpy, pandas {spawn * 1e3:.0f} ms"
    )
    print_scrub()
    print()
    print(f"{'per-step overhead over plain exec (median)':48} {'local ms':>10} {'isolated ms':>12}")
    steps = step_overheads()
    for name, row in steps.items():
        print(f"{name:48} {row['local'] * 1e3:10.2f} {row['isolated'] * 1e3:12.2f}")
    print()
    title = f"snippet, wall time / native (best of {RUNS})"
    print(f"{title:48} {'local':>10} {'isolated':>12} {'isolated, no guards':>20}")
    ratios = snippet_ratios()
    for name, row in ratios.items():
        print(f"{name:48} {row['local']:9.2f}x {row['isolated']:11.2f}x {row['isolated, no guards']:19.2f}x")
    print()
    print(f"{'timeout overshoot past the deadline (1 s)':48} {'local s':>10} {'isolated s':>12}")
    late = overshoots()
    for name, row in late.items():
        local = "never" if row["local"] is None else f"{row['local']:.3f}"
        print(f"{name:48} {local:>10} {row['isolated']:12.3f}")
    print()
    print_decode_budget()
    print()
    network_proxy()
    print()
    print_big_results()
    pss, private = idle_memory()
    print()
    print(f"idle worker memory: PSS {pss:.1f} MB, private dirty {private:.1f} MB")
    empty = steps["empty step"]["isolated"]
    isolated = [row["isolated"] for row in ratios.values()]
    median, worst = statistics.median(isolated), max(isolated)
    boundary = [row["isolated, no guards"] for row in ratios.values()]
    local = [row["local"] for row in ratios.values()]
    worst_late = max(row["isolated"] or 0.0 for row in late.values())
    met = empty <= 0.020 and median <= 1.3 and worst <= 2.0 and worst_late <= 0.25
    print()
    print(
        f"isolation benchmark: empty-step overhead {empty * 1e3:.1f} ms (target <= 20), snippets median "
        f"{median:.2f}x / worst {worst:.2f}x native (targets 1.3x / 2x; local {statistics.median(local):.2f}x, "
        f"boundary alone {statistics.median(boundary):.2f}x / {max(boundary):.2f}x), worst overshoot {worst_late:.3f} s "
        f"(target 0.25), worker start {fork * 1e3:.0f} ms by fork vs {spawn * 1e3:.0f} ms by spawn: "
        f"{'targets met' if met else 'TARGET MISSED'}"
    )


if __name__ == "__main__":
    main()
