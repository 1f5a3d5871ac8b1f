"""The kernel's secrets are out of the forked worker before any agent code runs (issue 19, item 4).

The worker is a copy of the kernel's memory. These tests plant secrets where a kernel keeps them (its session key,
model and API clients, an httpx client's headers, ``sys.argv``, the input/output history), start a worker, and read
the worker's whole memory from outside (``/proc/<pid>/mem``, as root): none of the secrets may be there. A value the
user's own variable holds is there (readable by design): it is the scan's positive control.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest
from memory_helpers import memory_hits

from nbagent.sandbox import IsolatedPythonExecutor

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0, reason="reads another process's memory through /proc (Linux, root)"
)

MODEL_KEY = "sk-model-4f1c9e2a7b3d5e60"
CLIENT_KEY = "sk-client-8a2b4c6d1e3f5a7b"
HTTPX_KEY = "httpx-bearer-5d6e7f8091a2b3c4"
ARGV_KEY = "argv-token-0a9b8c7d6e5f4a3b"
ENV_KEY = "env-secret-1f2e3d4c5b6a7988"
MODULE_KEY = "sk-module-9b8a7c6d5e4f3a21"  # openai.api_key: the module-level client's key
USER_VALUE = "user-variable-3c4d5e6f7a8b9c0d"  # the user's own variable: stays (the positive control)
PLACE = "/tmp/nbagent-token-cache-6d5c4b3a"  # a credential-named variable's path (…_TOKEN_CACHE_DIR): stays


def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])
def test_credentials_argv_and_environment_are_gone_from_the_worker(
    guards: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openai")
    httpx = pytest.importorskip("httpx")
    import openai

    from nbagent.models.openai_server import OpenAIServerModel

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NBAGENT_TEST_API_TOKEN", ENV_KEY)
    monkeypatch.setenv("NBAGENT_TEST_TOKEN_CACHE_DIR", PLACE)
    monkeypatch.setattr(sys, "argv", ["kernel", f"--token={ARGV_KEY}", "-f", str(tmp_path / "kernel-1.json")])
    monkeypatch.setattr(openai, "api_key", MODULE_KEY)
    model = OpenAIServerModel("m", api_base="http://127.0.0.1:9/v1", api_key=MODEL_KEY)
    client = openai.OpenAI(api_key=CLIENT_KEY, base_url="http://127.0.0.1:9/v1")
    http = httpx.Client(headers={"Authorization": f"Bearer {HTTPX_KEY}"})
    import numpy as np

    # a large array: the user's data, skipped by the memory pass, which must still find every copy of the keys
    namespace = {"model": model, "user_value": "".join(USER_VALUE), "data": np.ones(400_000)}
    before = rss_bytes()
    executor = IsolatedPythonExecutor(namespace=namespace, guards=guards, timeout_seconds=20)
    try:
        assert executor("6 * 7").output == 42
        report = executor.confinement["kernel_secrets"]
        assert "sys.argv" in report["cleared"] and report["masked"] > 0
        if not guards:  # what the agent's code itself sees, past the guards
            seen = executor("import sys\n(sys.argv, model._secrets, model.client.api_key)").output
            assert seen == (["nbagent-worker"], [], "")
        planted = (MODEL_KEY, CLIENT_KEY, HTTPX_KEY, ARGV_KEY, ENV_KEY, MODULE_KEY, USER_VALUE, PLACE)
        hits = memory_hits(executor.worker_pid, [s.encode() for s in planted])
        assert hits.pop(USER_VALUE.encode()) > 0  # the scan sees what is there
        assert hits.pop(PLACE.encode()) > 0  # a path is no credential: this module's constant is left as it is
        assert hits == dict.fromkeys(hits, 0)
        # the blocks the process started with (a copy of the kernel's): environment zeroed, command line replaced
        assert Path(f"/proc/{executor.worker_pid}/environ").read_bytes().strip(b"\0") == b""
        assert Path(f"/proc/{executor.worker_pid}/cmdline").read_bytes().rstrip(b"\0") == b"nbagent-worker"
        assert executor("6 * 7").output == 42
        assert rss_bytes() - before < 64 * 2**20
    finally:
        executor.close()
        http.close()
    assert client.api_key == CLIENT_KEY and model._secrets == [MODEL_KEY]  # the kernel's own objects: untouched


KERNEL_SETUP = """
import sys, openai, httpx
from nbagent.models.openai_server import OpenAIServerModel
from nbagent.sandbox import IsolatedPythonExecutor
model = OpenAIServerModel("m", api_base="http://127.0.0.1:9/v1", api_key="{model}")
client = openai.OpenAI(api_key="{client}", base_url="http://127.0.0.1:9/v1")
http = httpx.Client(headers={{"Authorization": "Bearer {httpx}"}})
sys.argv.append("--token={argv}")
user_value = "{user}"
"""
HISTORY_KEY = "history-secret-7e6d5c4b3a291807"
OUTPUT_KEY = "output-secret-a1b2c3d4e5f60718"


@pytest.mark.slow
@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])
def test_a_real_kernel_s_session_key_history_and_clients_are_gone_from_the_worker(guards: bool) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("httpx")
    from jupyter_client import KernelManager

    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        key = json.loads(Path(manager.connection_file).read_text())["key"].encode()
        assert len(key) >= 16

        def run(code: str, **expressions: str) -> dict:
            reply = client.execute_interactive(
                code, user_expressions=expressions, timeout=60, output_hook=lambda m: None
            )
            assert reply["content"]["status"] == "ok", reply["content"]
            return {k: v["data"]["text/plain"] for k, v in reply["content"]["user_expressions"].items()}

        setup = KERNEL_SETUP.format(model=MODEL_KEY, client=CLIENT_KEY, httpx=HTTPX_KEY, argv=ARGV_KEY, user=USER_VALUE)
        run(setup)
        run(f'print("{HISTORY_KEY}")')  # only in the input history
        run(f'"{OUTPUT_KEY}"')  # in the output history (Out, _N, _)
        run(f"executor = IsolatedPythonExecutor(namespace=get_ipython().user_ns, guards={guards}, timeout_seconds=30)")
        started = time.perf_counter()
        answer = run("result = executor('6 * 7').output", result="result", pid="executor.worker_pid",
                     report="executor.confinement['kernel_secrets']")  # fmt: skip
        took = time.perf_counter() - started
        assert answer["result"] == "42"
        for part in ("session key", "connection info", "sys.argv", "input/output history", "client objects"):
            assert part in answer["report"]
        assert "failed" not in answer["report"]
        pid = int(answer["pid"])
        secrets = [key, *(s.encode() for s in (MODEL_KEY, CLIENT_KEY, HTTPX_KEY, ARGV_KEY, HISTORY_KEY, OUTPUT_KEY))]
        hits = memory_hits(pid, [*secrets, USER_VALUE.encode()])
        assert hits.pop(USER_VALUE.encode()) > 0, "the scan must see the user's own variable"
        assert hits == dict.fromkeys(hits, 0), f"secrets left in the worker: {hits} ({answer['report']})"
        kernel_hits = memory_hits(manager.provisioner.process.pid, secrets[:1])
        assert kernel_hits[key] > 0  # the kernel itself keeps its key (the scan would have found it)
        assert run("again = executor('6 * 7').output", again="again")["again"] == "42"
        assert took < 10
        run("executor.close()")  # the kill below would leave its scratch directory behind
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_scrub_report_says_what_it_cleared_and_its_cost() -> None:
    from nbagent.sandbox.boundary import secrets

    found = secrets.secret_values(["Bearer abcdefgh12345678", "short", "arguments", b"0123456789abcdef"])
    assert found == {b"Bearer abcdefgh12345678", b"abcdefgh12345678", b"0123456789abcdef"}
    assert textwrap.dedent(secrets.__doc__ or "").count("What stays readable") == 1


def test_the_memory_pass_skips_the_namespace_s_large_data_buffers_only() -> None:
    import numpy as np
    import pandas as pd

    from nbagent.sandbox.boundary import wipe

    big, small = np.ones(300_000), np.ones(10)
    frame = pd.DataFrame({"a": np.zeros(200_000), "b": np.arange(200_000)})
    ranges = wipe.data_buffers([{"big": big, "view": big[10:20], "small": small, "frame": frame, "text": "x"}])
    start = big.__array_interface__["data"][0]
    assert (start, start + big.nbytes) in ranges  # the view counts as its owner's whole buffer, once
    assert all(high - low >= wipe.LARGE_BUFFER_BYTES for low, high in ranges) and len(ranges) >= 2
    assert wipe.without([(0, 100), (200, 300)], [(50, 250)]) == [(0, 50), (250, 300)]
    assert wipe.without([(0, 100)], [(0, 100)]) == [] and wipe.without([(0, 100)], []) == [(0, 100)]


def test_the_walk_of_a_large_namespace_stops_and_what_it_did_not_reach_is_masked() -> None:
    """The walk that keeps the user's data out of the mask is bounded (issue 32): a frame after a long list is still
    reached, a text within reach that equals a secret stays, one past the walk's reach is masked like any memory."""
    import numpy as np
    import pandas as pd

    from nbagent.sandbox.boundary import wipe

    secret = "walk-secret-" + os.urandom(8).hex()
    near = "".join([secret])  # a distinct object holding the secret: the user's own text, within reach
    far = "".join(["far:", secret])  # the same secret deep in a long list, past the walk's reach
    rows = [{"id": i, "name": f"row {i}"} for i in range(wipe._MAX_WALKED)] + [{"note": far}]
    frame = pd.DataFrame({"a": np.arange(300_000.0)})
    namespace = {"rows": rows, "frame": frame, "near": near}
    needle = secret.encode()
    skip = wipe.visible_buffers(namespace, [needle])
    start = frame._mgr.arrays[0].__array_interface__["data"][0]
    assert any(low <= start < high for low, high in skip)  # the frame's buffer: reached though the list is long
    copy = "".join(["kernel:", secret])  # a copy the kernel holds elsewhere
    assert wipe.mask({needle}, skip=skip) >= 2
    assert near == secret  # the user's text within reach: unchanged
    assert secret not in far and secret not in copy  # past the reach and elsewhere: masked, never left readable


def test_the_walk_reads_a_frame_s_labels_as_stored_and_never_builds_a_range_index() -> None:
    """A RangeIndex's ``_data`` is computed: reading it built a 16M-row frame's index as a 128 MiB array in the worker
    at each start, which was then searched. Labels the frame holds as text are still reached (and kept)."""
    import pandas as pd

    from nbagent.sandbox.boundary import wipe

    secret = "label-secret-" + os.urandom(8).hex()
    label, column = "".join(["id:", secret]), "".join(["col:", secret])  # the user's own texts, as labels
    reversed_secret = secret[::-1]  # (the test's own ``secret`` is a copy outside the namespace: masked too)
    frame = pd.DataFrame({"a": range(1000)})
    level = "".join(["level:", secret])
    labelled = pd.DataFrame({column: [1.0]}, index=[label])
    stacked = pd.Series([1.0], index=pd.MultiIndex.from_tuples([(level, 1)]))
    skip = wipe.visible_buffers({"frame": frame, "labelled": labelled, "stacked": stacked}, [secret.encode()])
    assert "_data" not in frame.index._cache  # the range stayed a range
    copy = "".join(["kernel:", secret])
    assert wipe.mask({secret.encode()}, skip=skip) >= 1
    assert label[3:] == column[4:] == level[6:] == reversed_secret[::-1] and "*" * len(secret) in copy


def test_memory_malloc_freed_is_dropped_from_the_worker_s_copy_not_searched() -> None:
    """A kernel's heap keeps what it freed until its top is free: in the forked copy, the free pages are given back
    before the search, so the secret a freed buffer held reads as zeros there and its pages are not searched; the
    parent's memory is untouched."""
    import ctypes

    from nbagent.sandbox.boundary import wipe

    secret = b"freed-secret-" + os.urandom(8).hex().encode()
    reversed_secret = secret[::-1]  # (``secret`` itself is masked in the child: it is a copy like any other)
    probe = ctypes.create_string_buffer(4200)  # read into, never allocated after the free (it could land there)
    blobs = [bytes(4000) + secret if i == 100 else bytes(4096) for i in range(40_000)]  # 160 MB from malloc
    freed_at = id(blobs[100])
    kept = blobs[::400]  # (every 400th stays: the heap cannot shrink from its top)
    del blobs
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker's copy
        before = _resident_heap()
        wipe.mask({secret})
        after = _resident_heap()
        ctypes.memmove(probe, freed_at, 4200)
        os.write(writing, json.dumps([before, after, reversed_secret[::-1] in probe.raw]).encode())
        os._exit(0)
    ctypes.memmove(probe, freed_at, 4200)  # the kernel's own freed memory: as it was
    assert secret in probe.raw
    os.close(writing)
    before, after, still_held = json.loads(os.read(reading, 4096))
    os.waitpid(pid, 0)
    assert before - after > 100 * 2**20  # the free pages were given back, not searched
    assert not still_held
    assert len(kept) == 100


def _resident_heap() -> int:
    from nbagent.sandbox.boundary import wipe
    from nbagent.sandbox.boundary.mappings import regions

    libc, heap = wipe._libc(), [r for r in regions() if wipe.searchable(r)]
    return sum(high - low for r in heap for low, high in wipe._resident_runs(libc, (r.start, r.end), 4096))


class _FakeModel:
    """A model whose load maps one large buffer of numbers (as llama.cpp's weights and caches) and which can unload.

    The buffer is mapped anew as a model's loader does (``np.ones`` was not: malloc may serve 64 MiB from heap memory an
    earlier test freed, mapped before the load, and in the full suite it once did)."""

    def __init__(self, size: int) -> None:
        import numpy as np

        self.weights: object | None = np.frombuffer(_private_map(size), dtype=np.float64)
        self.weights[:] = 1.0  # type: ignore[index]

    def unload(self) -> None:
        self.weights = None


def _private_map(size: int) -> object:
    import mmap

    return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # private, as malloc's (the default shares)


def _buffer_range(model: _FakeModel) -> tuple[int, int]:
    start = model.weights.__array_interface__["data"][0]  # type: ignore[union-attr]
    return start, start + model.weights.nbytes  # type: ignore[union-attr]


def test_a_loaded_model_s_memory_is_left_out_of_the_search_while_it_is_loaded() -> None:
    from nbagent.sandbox.boundary import model_memory

    big = model_memory.remember_model_memory(lambda: _FakeModel(64 << 20), lambda m: m.weights is not None)
    small = model_memory.remember_model_memory(lambda: _FakeModel(1 << 20), lambda m: m.weights is not None)
    start, end = _buffer_range(big)
    held = model_memory.model_memory()
    assert any(low <= start and end <= high + 4096 for low, high in held)  # the 64 MiB buffer (to its last page)
    small_start, _ = _buffer_range(small)
    assert not any(low <= small_start < high for low, high in held)  # 1 MiB: not a model's buffer
    big.unload()
    assert not any(low <= start < high for low, high in model_memory.model_memory())  # searched again at once


def test_the_registry_never_keeps_a_dropped_model_alive() -> None:
    import gc
    import weakref

    from nbagent.sandbox.boundary import model_memory

    model = model_memory.remember_model_memory(lambda: _FakeModel(64 << 20), lambda m: m.weights is not None)
    start, _ = _buffer_range(model)
    dropped = weakref.ref(model)
    del model
    gc.collect()
    assert dropped() is None  # its gigabytes freed with it
    assert not any(low <= start < high for low, high in model_memory.model_memory())


def test_a_worker_started_beside_a_loaded_model_still_masks_the_secrets_outside_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nbagent.sandbox.boundary import model_memory

    model = model_memory.remember_model_memory(lambda: _FakeModel(64 << 20), lambda m: m.weights is not None)
    monkeypatch.setenv("NBAGENT_TEST_API_TOKEN", ENV_KEY)
    monkeypatch.setenv("NBAGENT_TEST_TOKEN_CACHE_DIR", PLACE)
    executor = IsolatedPythonExecutor(timeout_seconds=20)
    try:
        assert executor("6 * 7").output == 42
        report = executor.confinement["kernel_secrets"]
        assert report["model_memory_bytes"] >= 64 << 20 and report["masked"] > 0
        assert memory_hits(executor.worker_pid, [ENV_KEY.encode()]) == {ENV_KEY.encode(): 0}
    finally:
        executor.close()
        model.unload()
