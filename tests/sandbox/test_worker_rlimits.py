"""Limits under lower hard limits (containers, CI): the worker clamps to them and says so once, instead of failing to
confine at every call. A subprocess stands in for the kernel and lowers its own hard limits first."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")

KERNEL = textwrap.dedent(
    """
    import json, os, resource, warnings
    def address_space():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    from nbagent.sandbox import IsolatedPythonExecutor
    resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, 2**20))  # 1 MiB, below the default 1 GiB cap
    hard_as = address_space() + 2**30  # below the kernel's size + the default 2 GiB
    resource.setrlimit(resource.RLIMIT_AS, (hard_as, hard_as))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        executor = IsolatedPythonExecutor(guards=False, timeout_seconds=30)
        first = executor("6 * 7").output
        executor.restart()  # a second worker, under the same limits: no second warning
        write = executor(
            "import os\\n"
            "try:\\n"
            "    with open(os.path.join(os.environ['TMPDIR'], 'big'), 'wb') as fh:\\n"
            "        fh.write(b'x' * 2**21)\\n"
            "    result = 'written'\\n"
            "except OSError as exc:\\n"
            "    result = exc.errno\\n"
            "result"
        ).output
        limits = executor(
            "import resource\\n(resource.getrlimit(resource.RLIMIT_FSIZE)[1], resource.getrlimit(resource.RLIMIT_AS)[1])"
        ).output
    notices = [str(w.message) for w in seen if "nbagent" in str(w.message)]
    executor.close()
    print(json.dumps({"first": first, "write": write, "limits": limits, "hard_as": hard_as, "notices": notices}))
    """
)


def test_lower_hard_limits_are_used_and_told_once() -> None:
    done = subprocess.run([sys.executable, "-c", KERNEL], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["first"] == 42  # no "could not confine itself: ValueError"
    assert report["write"] == 27  # EFBIG: the 1 MiB hard limit holds in the worker
    assert report["limits"] == [2**20, report["hard_as"]]
    limit_notices = [text for text in report["notices"] if "lower than asked" in text]
    assert len(limit_notices) == 1  # once, not at every call or every worker
    assert "RLIMIT_FSIZE is 1.0 MiB" in limit_notices[0] and "RLIMIT_AS" in limit_notices[0]
