"""A worker searches only the kernel's memory that may hold a secret it has not searched (issue 32: unchanged.py).

Each later worker is told the pages an earlier one found free of the kernel's secrets and the kernel has not written
since. These tests try to get a secret past that: written by the kernel into a page searched before, mapped anew at a
watched address, made secret after its bytes were searched for other values, copied by a thread while the kernel
looks; and check the worker's whole memory from outside (root) after each start.
"""

from __future__ import annotations

import ast
import ctypes
import mmap
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from memory_helpers import memory_hits

from nbagent.sandbox import IsolatedPythonExecutor
from nbagent.sandbox.boundary import unchanged, written

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux memory bookkeeping")

try:
    written.WriteWatch().close()
    SUPPORTED = ""
except written.Unsupported as exc:
    SUPPORTED = str(exc)
needs_watch = pytest.mark.skipif(bool(SUPPORTED), reason=f"no write tracking here: {SUPPORTED}")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="reads the worker's memory through /proc (root)")

PAGE = mmap.PAGESIZE
ENV_KEY = "known-free-env-secret-5a4b3c2d1e0f"
PLANTED = ENV_KEY.encode()  # copied by the kernel later into memory searched before (the same value: no new one)
NEW_KEY = "made-secret-later-0a1b2c3d4e5f6a7b"


@pytest.fixture(autouse=True)
def watch_any_kernel(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A ledger of the test's own, started at once (this process may be small: it waits for WATCHED_FROM_BYTES
    otherwise), never given up (whatever else this process writes between starts). The process's ledger lets go of
    its memory first: a mapping can be watched by one ledger only."""
    monkeypatch.setattr(unchanged, "WATCHED_FROM_BYTES", 0)
    monkeypatch.setattr(unchanged, "COSTLY_ROUNDS", 10**6)
    unchanged.LEDGER.stop()
    monkeypatch.setattr(unchanged, "LEDGER", unchanged.Ledger())
    yield
    unchanged.LEDGER.stop()


def private_memory(pages: int) -> tuple[mmap.mmap, int]:
    """Private memory in 4 KiB pages (memory in huge pages is never watched), every page present."""
    memory = mmap.mmap(-1, pages * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory.madvise(mmap.MADV_NOHUGEPAGE)
    memory.write(b"\1" * pages * PAGE)
    return memory, ctypes.addressof((ctypes.c_char * (pages * PAGE)).from_buffer(memory))


def in_a_fork(body: Callable[[], object]) -> object:
    """``body()``'s value (a literal), computed in a forked child: a worker's view of the kernel's memory."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.write(writer, repr(body()).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(reader) as answer:
        text = answer.read()
    assert status == 0, text
    return ast.literal_eval(text)


def reported_free(found: object, page_start: int) -> bool:
    return any(low <= page_start and page_start + PAGE <= high for low, high in found.clean)  # type: ignore[attr-defined]


@needs_watch
def test_written_pages_are_reported_once_and_a_concurrent_writer_loses_none() -> None:
    memory, base = private_memory(256)
    watch = written.WriteWatch()
    try:
        with watch:
            assert watch.watch(base, base + 256 * PAGE)
            assert watch.written(base, base + 256 * PAGE) == ([], [])
            memory[10 * PAGE] = 7
            memory[11 * PAGE + 5] = 7
            assert watch.written(base, base + 256 * PAGE) == ([(base + 10 * PAGE, base + 12 * PAGE)], [])
            assert watch.written(base, base + 256 * PAGE) == ([], [])
            done, seen = threading.Event(), set()

            def writer() -> None:
                for page in range(256):
                    memory[page * PAGE] = page % 200 + 2

                done.set()

            thread = threading.Thread(target=writer)
            thread.start()

            def ask() -> None:
                runs = watch.written(base, base + 256 * PAGE)[0]
                seen.update((address - base) // PAGE for low, high in runs for address in range(low, high, PAGE))

            while not done.is_set():  # questions asked while the other thread writes: every page is in one of them
                ask()
            thread.join()
            ask()
            assert seen == set(range(256))
    finally:
        watch.close()


@needs_watch
def test_memory_mapped_anew_at_a_watched_address_counts_as_written() -> None:
    memory, base = private_memory(16)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    watch = written.WriteWatch()
    try:
        with watch:
            assert watch.watch(base, base + 16 * PAGE)
            fixed = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x10  # MAP_FIXED: a new mapping over the watched one
            assert libc.mmap(base, 16 * PAGE, mmap.PROT_READ | mmap.PROT_WRITE, fixed, -1, 0) == base
            assert watch.written(base, base + 16 * PAGE) is None  # not watched any more: the caller counts it all
    finally:
        watch.close()


@needs_watch
def test_the_write_watch_needs_no_privilege() -> None:
    """userfaultfd with UFFD_USER_MODE_ONLY: a user who is not root (vm.unprivileged_userfaultfd may be 0)."""
    if os.geteuid() != 0:
        pytest.skip("already not root: the other tests are the check")
    code = (
        "from nbagent.sandbox.boundary import written\n"
        "import mmap, ctypes\n"
        "m = mmap.mmap(-1, 8 * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS); m.write(b'1' * len(m))\n"
        "b = ctypes.addressof((ctypes.c_char * len(m)).from_buffer(m)); w = written.WriteWatch()\n"
        "with w:\n"
        "    assert w.watch(b, b + len(m)); m[3 * mmap.PAGESIZE] = 9\n"
        "    print((w.written(b, b + len(m))[0][0][0] - b) // mmap.PAGESIZE)\n"
    )
    root = str(Path(__file__).parents[2])
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": root}, cwd="/",
    )  # fmt: skip
    if "Permission denied" in done.stderr and "python" in done.stderr.lower():
        pytest.skip("this interpreter cannot be run by another user")
    assert done.returncode == 0 and done.stdout.strip() == "3", done.stderr[-2000:]


def start(namespace: dict) -> tuple[IsolatedPythonExecutor, dict]:
    executor = IsolatedPythonExecutor(namespace=namespace, timeout_seconds=30)
    assert executor("6 * 7").output == 42
    return executor, executor.confinement["kernel_secrets"]


@as_root
@needs_watch
def test_a_secret_written_planted_or_made_later_is_found_by_the_next_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NBAGENT_TEST_KNOWN_FREE_TOKEN", ENV_KEY)
    old, old_base = private_memory(64)  # watched from the first start on: searched, then written by the kernel
    heap = bytearray(48)  # (a small one: in malloc's heap among the kernel's objects)
    future = bytearray(NEW_KEY.encode())  # the bytes of a value that becomes a secret only later
    replaced, replaced_base = private_memory(16)
    namespace = {"answer": 1}
    reports = []
    for round_ in range(6):
        if round_ == 3:  # after two starts: the kernel writes secrets into pages searched (and found free) before
            old[40 * PAGE + 100 : 40 * PAGE + 100 + len(PLANTED)] = PLANTED
            heap[4 : 4 + len(PLANTED)] = PLANTED
            libc = ctypes.CDLL(None)
            libc.mmap.restype = ctypes.c_void_p
            libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_long]  # fmt: skip
            flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x10  # memory mapped anew where watched memory was
            assert libc.mmap(replaced_base, 16 * PAGE, 3, flags, -1, 0) == replaced_base
            ctypes.memmove(replaced_base + 5 * PAGE, PLANTED, len(PLANTED))
        if round_ == 4:  # a value whose bytes were in memory all along becomes a secret
            monkeypatch.setenv("NBAGENT_TEST_LATER_TOKEN", NEW_KEY)
        executor, report = start(namespace)
        try:
            hits = memory_hits(executor.worker_pid, [PLANTED, NEW_KEY.encode()])
            assert hits[PLANTED] == 0, (round_, report)
            if round_ >= 4:
                assert hits[NEW_KEY.encode()] == 0, (round_, report)
            assert executor("answer + 1").output == 2  # the next step works
        finally:
            executor.close()
        reports.append(report)
    assert reports[0]["known_free_bytes"] == 0  # the first start searches everything
    assert all(reports[i]["known_free_bytes"] > 0 for i in (1, 2, 3))  # the planted copies found all the same
    assert reports[4]["known_free_bytes"] == 0  # a new value: everything searched again
    assert reports[5]["known_free_bytes"] > 0
    assert bytes(old[40 * PAGE + 100 : 40 * PAGE + 100 + len(PLANTED)]) == PLANTED  # the kernel's own: untouched
    assert bytes(future) == NEW_KEY.encode() and PLANTED in bytes(heap)
    assert ctypes.string_at(replaced_base + 5 * PAGE, len(PLANTED)) == PLANTED
    del old_base


def refused() -> None:
    raise written.Unsupported("refused for the test")


@as_root
@pytest.mark.parametrize(
    "setting, value",
    [("WriteWatch", refused), pytest.param("WATCHED_FROM_BYTES", 2**60, marks=needs_watch)],
    ids=["no write tracking", "below the threshold"],
)
def test_where_nothing_is_watched_every_start_searches_everything(
    setting: str, value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NBAGENT_TEST_KNOWN_FREE_TOKEN", ENV_KEY)
    monkeypatch.setattr(unchanged, setting, value)
    monkeypatch.setattr(unchanged, "LEDGER", unchanged.Ledger())
    for _ in range(2):
        executor, report = start({})
        try:
            assert report["known_free_bytes"] == 0 and report["searched_bytes"] > 0
            assert memory_hits(executor.worker_pid, [ENV_KEY.encode()]) == {ENV_KEY.encode(): 0}
        finally:
            executor.close()
    assert unchanged.LEDGER._watched == {} and unchanged.LEDGER._report is None
    assert unchanged.LEDGER.unsupported == ("refused for the test" if value is refused else "")


@needs_watch
def test_workers_started_from_several_threads_at_once_all_start_and_the_ledger_keeps_working(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """evaluate() starts workers on threads: the ledger's first fork in a process (and every later one) is one at a
    time (a lock the first fork once replaced while holding it let two threads scan with one pagemap descriptor)."""
    monkeypatch.setenv("NBAGENT_TEST_KNOWN_FREE_TOKEN", ENV_KEY)
    failures: list[BaseException] = []

    def starts() -> None:
        for _ in range(3):
            try:
                start({"answer": 1})[0].close()
            except BaseException as exc:
                failures.append(exc)

    threads = [threading.Thread(target=starts) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and unchanged.LEDGER.unsupported == "" and unchanged.LEDGER._report is not None


@needs_watch
def test_the_worker_holds_neither_the_kernel_s_write_watch_nor_its_pagemap() -> None:
    executor = IsolatedPythonExecutor(namespace={}, guards=False, timeout_seconds=30)
    try:
        assert executor("6 * 7").output == 42
        links = executor(
            "import os\n[os.readlink(f'/proc/self/fd/{fd}') for fd in os.listdir('/proc/self/fd')"
            " if os.path.exists(f'/proc/self/fd/{fd}')]"
        ).output
    except Exception as exc:  # /proc hidden by the confinement: nothing to see is the answer too
        links = [str(exc)]
    finally:
        executor.close()
    assert not any("userfaultfd" in str(link) or "pagemap" in str(link) for link in links), links


def test_a_report_is_kept_only_when_it_is_the_latest_and_known_pages_exclude_what_was_written() -> None:
    ledger = unchanged.Ledger()
    ledger._owner = os.getpid()
    ledger._watched = {(0x10000, 0x20000): 1, (0x40000, 0x50000): 3}
    ledger._written = {2: [(0x11000, 0x12000)], 3: [], 4: [(0x14000, 0x15000)]}
    ledger.record(2, frozenset({b"secret-value"}), [(0x10000, 0x20000), (0x40000, 0x50000)])
    ledger.record(1, frozenset({b"older-value!"}), [(0x10000, 0x20000)])  # older: ignored
    known = ledger._known(4)
    # written between the report's fork and this one: out; registered after the report's fork: out
    assert known.since == 2 and known.clean == [(0x10000, 0x11000), (0x12000, 0x14000), (0x15000, 0x20000)]
    assert ledger.reported_values(known) == {b"secret-value"}
    assert ledger.reported_values(unchanged.Known(4, 1, [])) == frozenset()
    del ledger._written[3]  # a question lost: nothing is known
    assert ledger._known(4).clean == []


def test_a_known_page_the_worker_itself_wrote_is_searched_and_never_reported_free() -> None:
    """Known pages hold no secret in the kernel; the worker's own copy of one may (what it copied there since the
    fork: the environment it read, the values it found): such a page is searched, and not reported."""
    from nbagent.sandbox.boundary import wipe

    memory, base = private_memory(16)
    secret = b"copied-by-the-worker-4d3c2b1a0f9e"

    def worker() -> tuple:  # the worker's side: it writes a copy into a page it is told is known free
        ctypes.memmove(base + 2 * PAGE + 8, secret, len(secret))
        found = wipe.search({secret}, known=[(base, base + 16 * PAGE)])
        still = ctypes.string_at(base + 2 * PAGE + 8, len(secret))
        return found.masked >= 1, still, reported_free(found, base + 2 * PAGE), found.known_bytes > 0

    assert in_a_fork(worker) == (True, b"*" * len(secret), False, True)
    assert secret not in bytes(memory)  # (the kernel's side never had it)


@needs_watch
def test_the_namespace_s_large_arrays_are_not_watched_so_writing_them_costs_nothing() -> None:
    np = pytest.importorskip("numpy")
    memory, base = private_memory(4096)  # 16 MiB
    data = np.frombuffer(memory, dtype=np.float64)  # the user's data, never searched while the agent can see it
    inside = [(base + PAGE, base + 4095 * PAGE)]

    def watched() -> list:
        return unchanged.intersection(unchanged.merged(list(unchanged.LEDGER._watched)), inside)

    for namespace, expected in (({}, True), ({"data": data}, False)):  # held elsewhere first: watched, then not
        executor, _ = start(namespace)
        executor.close()
        assert bool(watched()) is expected


@needs_watch
def test_memory_in_huge_pages_is_not_watched_so_a_write_never_splits_them() -> None:
    size = 16 << 20
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory.madvise(mmap.MADV_HUGEPAGE)
    memory.write(b"\1" * size)
    base = ctypes.addressof((ctypes.c_char * size).from_buffer(memory))
    watch = written.WriteWatch()
    try:
        with watch:
            huge = watch.huge(base, base + size)
            if not huge:
                pytest.skip("no transparent huge pages for this memory here")
            registered = watch.watch(base, base + size)
            assert unchanged.intersection(registered, huge) == []
            for low, _ in huge:
                memory[low - base] = 2
            assert watch.huge(base, base + size) == huge  # still in 2 MiB pages
    finally:
        watch.close()


def test_a_kernel_whose_writes_cost_more_than_the_searches_they_save_stops_being_watched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(unchanged, "COSTLY_ROUNDS", 2)
    closed = []
    ledger = unchanged.Ledger()
    ledger._watch = type("Watch", (), {"close": lambda self: closed.append(True)})()
    ledger._report = unchanged.Report(1, frozenset({b"one-secret-value"}), [])
    megabyte = 2**20
    for epoch in (1, 2, 3):  # starts with no report yet (several started at once): not weighed
        ledger._weigh([(0, 64 * megabyte)], unchanged.Known(epoch, 0, []))
    cheap = unchanged.Known(2, 1, [(0, 512 * megabyte)])  # 512 MiB known free: ~64 ms of search saved
    ledger._weigh([(0, megabyte)], cheap)  # 1 MiB written: 0.5 ms of faults
    ledger._weigh([(0, 64 * megabyte)], unchanged.Known(3, 1, [(0, megabyte)]))  # 33 ms paid, 0.1 ms saved
    ledger._weigh([(0, megabyte)], cheap)  # a good round again: the count starts over
    assert ledger._watch is not None and not closed
    for epoch in (4, 5):  # two costly rounds in a row: every registration dropped, every later start searches all
        ledger._weigh([(0, 64 * megabyte)], unchanged.Known(epoch, 1, []))
    assert ledger._watch is None and closed == [True] and ledger._report is None
    assert "cost more than" in ledger.unsupported
    silent = unchanged.Ledger()  # a process with no secret to search for: no report ever comes
    silent._watch = type("Watch", (), {"close": lambda self: closed.append(True)})()
    for epoch in range(1, unchanged._HISTORY + 3):
        silent._weigh([(0, megabyte)], unchanged.Known(epoch, 0, []))
    assert silent._watch is None and len(closed) == 2


def test_a_page_whose_secret_the_worker_overwrote_in_its_copy_is_never_reported_free() -> None:
    """The kernel's page still holds the secret the worker's copy no longer shows (the worker wrote over it before
    or while searching): reporting that page free would let a later worker skip it."""
    from nbagent.sandbox.boundary import wipe

    memory, base = private_memory(16)
    secret = b"kept-by-the-kernel-only-7a6b5c4d3e"
    ctypes.memmove(base + 5 * PAGE + 100, secret, len(secret))

    def worker() -> list:
        ctypes.memset(base + 5 * PAGE + 100, 0, len(secret))  # the worker's copy: the bytes are gone
        found = wipe.search({secret}, known=[])
        return [reported_free(found, base + 5 * PAGE), reported_free(found, base + 9 * PAGE)]

    assert in_a_fork(worker) == [False, True]  # page 9, searched and as forked, is reported free
    assert ctypes.string_at(base + 5 * PAGE + 100, len(secret)) == secret
