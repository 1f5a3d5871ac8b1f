"""Record the system calls the confined worker makes for real workloads (to review ``boundary/syscalls.py``).

Usage: ``python scripts/record_syscalls.py`` (needs ``strace``; Linux). It runs every workload of
``tests/sandbox/syscall_workloads.py`` in an isolated executor, with the guards on and off and the network granted for
the network workload, under ``strace -f``, then prints each system call the workers made *after* installing their
seccomp filter, with its count, and marks the ones the allow-list (``boundary/syscalls.py``) does not name. Calls the
filter denies still show up (they fail with ``EPERM``), so the script reviews the list in force as well as a new one.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_RUN = """
import os, sys
sys.path.insert(0, {tests!r})
import syscall_workloads as w
from nbagent.sandbox import IsolatedPythonExecutor
from nbagent.sandbox.boundary import confine

def run(workload, guards):
    executor = IsolatedPythonExecutor(guards=guards, additional_authorized_imports=list(workload.imports),
                                      timeout_seconds=60)
    executor.send_variables({{"SCRATCH": executor.scratch_dir}})
    try:
        output = executor(workload.code).output
        print("ok" if output == workload.expected else f"unexpected {{output!r}}", file=sys.stderr)
    finally:
        executor.close()

for guards in (True, False):
    for workload in list(w.OFFLINE.values()) + ([] if guards else [w.THREADS]):
        run(workload, guards)
    with w.hello_server() as (url, port):
        os.environ["NBAGENT_NETWORK_NAMESPACE"] = "0"  # direct TCP (where no namespace can be made)
        confine.NETWORK_PORTS = (80, 443, port)
        executor = IsolatedPythonExecutor(guards=guards, allow_network=True, timeout_seconds=60,
                                          additional_authorized_imports=list(w.NETWORK.imports))
        executor.send_variables({{"URL": url}})
        print(executor(w.NETWORK.code).output, file=sys.stderr)
        executor.close()
        del os.environ["NBAGENT_NETWORK_NAMESPACE"]  # through the worker's relay and the host's proxy
        executor = IsolatedPythonExecutor(guards=guards, allow_network=True, timeout_seconds=60,
                                          allow_hosts=[f"127.0.0.1:{{port}}"],
                                          additional_authorized_imports=["http", "http.*"])
        print(executor(w.tunnel(port)).output, file=sys.stderr)
        executor.close()
"""

_LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*?)(?:= (-?\d+|\?)(?: |$))?\s*$")


def record(trace: str) -> None:
    script = _RUN.format(tests=os.path.join(ROOT, "tests", "sandbox"))
    subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=all", "-e", "signal=none", "-o", trace, sys.executable, "-c", script],
        check=True,
        cwd=ROOT,
    )


def worker_calls(trace: str) -> collections.Counter[str]:
    """Calls made by worker processes once their filter is installed (threads followed through ``clone``)."""
    process: dict[int, int] = {}  # tid -> process (thread-group) id
    filtered: set[int] = set()
    root: int | None = None
    counts: collections.Counter[str] = collections.Counter()
    pending: dict[int, str] = {}  # tid -> an unfinished clone's arguments
    with open(trace) as fh:
        for line in fh:
            match = _LINE.match(line)
            if not match:
                continue
            tid = int(match[1])
            name = match[2] or match[3]
            root = tid if root is None else root
            group = process.setdefault(tid, tid)
            if "<unfinished" in line:
                pending[tid] = line
            arguments = pending.pop(tid, "") + line if match[2] else line
            if name in ("clone", "clone3", "fork", "vfork") and match[5] not in (None, "?") and int(match[5]) > 0:
                child = int(match[5])
                process[child] = group if "CLONE_THREAD" in arguments else child
            if group in filtered and not match[2]:
                counts[name] += 1
            if name in ("seccomp", "prctl") and ("SECCOMP_SET_MODE_FILTER" in line or "PR_SET_SECCOMP" in line):
                filtered.add(group)
    return counts


def main() -> None:
    sys.path.insert(0, ROOT)
    from nbagent.sandbox.boundary import syscalls

    allowed, conditional = set(syscalls.allowed_names()), set(syscalls.CONDITIONAL)
    with tempfile.TemporaryDirectory() as folder:
        trace = os.path.join(folder, "trace")
        record(trace)
        counts = worker_calls(trace)
    for name, count in sorted(counts.items()):
        verdict = "allowed" if name in allowed else "by its arguments" if name in conditional else "DENIED"
        print(f"{name:24} {count:8}  {verdict}")


if __name__ == "__main__":
    main()
