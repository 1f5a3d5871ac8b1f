"""The kernel's memory a worker found free of the kernel's secrets, less what the kernel wrote since (the kernel's side).

Every worker start searches the kernel's private memory for its secrets (secrets.py, wipe.py): the live heap times
the values, whatever changed. Between two starts a kernel writes little, so the :class:`Ledger` lets a worker search
only what may have changed:

* before each fork it registers the kernel's anonymous private memory not yet watched (written.py: asynchronous
  userfaultfd write-protection); right after the fork it asks which watched pages were written since the previous
  fork's question (``PAGEMAP_SCAN``: read and re-protected in one step, so no write between two questions is lost);
* a worker reports, before any agent code runs, the whole pages it found free of its values (searched, or known free
  and still as forked: wipe.search) and, before it searches, the values themselves (:meth:`Ledger.record`);
* the next worker is told (:meth:`Ledger.fork`) the pages that report named, less every page written from the
  reporting worker's fork to its own (the union of the questions asked since: each window starts before the one it
  must cover), less memory not watched since before the reporting worker's fork. It searches the rest, for its values
  and the reported ones (it masks those too: the ledger's own copy of them is in the kernel's memory).

It searches everything when it has no report (the first start, a worker that died before its report), when its
values are not among the reported ones, or where the kernel cannot say what was written (Linux < 6.7, another
architecture): :data:`LEDGER` then gives nothing and costs nothing.

The price of watching, in the kernel: the first write to a watched page after each question is a minor fault (about
2 us per 4 KiB page: rewriting 1 GiB of watched memory took 0.55 s against 0.04 s, ``benchmarks/isolation.py
scrub``). So nothing is watched in a kernel holding less than :data:`WATCHED_FROM_BYTES` of resident memory outside its
namespace's large arrays (a full search costs less than the bookkeeping there), nor memory in huge pages (a write would split
them for good), the namespace's large arrays or a loaded model's memory (never searched anyway); and a kernel whose
writes cost more in faults than the searches they save, :data:`COSTLY_ROUNDS` starts in a row, is not watched again.

Not seen written: what reaches a page without the processor's writing it through the kernel's page tables -- a buffer
pinned for direct I/O or registered with io_uring, written by a device after the pin (the pin itself counts as a
write); nor a write whose page another program re-protected with its own ``PAGEMAP_SCAN`` first (a checkpointing tool
scanning the kernel incrementally). A secret the kernel reads that way, into memory an earlier worker found free, while
workers start, would be skipped; nothing in a notebook kernel's ordinary life reads a credential so.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .mappings import Region, regions
from .spans import Spans, intersection, merged, whole_pages, without
from .written import Unsupported, WriteWatch

_HISTORY = 16  # questions kept: a report older than that is not used
#: The kernel's resident anonymous memory (less what is not watched) from which the ledger starts: below it, a full
#: search costs less than the bookkeeping (a plain kernel, ~70 MB searched: later starts 11 ms slower with it; one
#: holding a million small objects, ~210 MB: 13 ms faster), so nothing is watched and every start searches all.
WATCHED_FROM_BYTES = 160 * 2**20
#: What a watched page's first write after a start costs the kernel (a minor fault; benchmarks/isolation.py scrub:
#: 1 GiB rewritten, 0.55 s watched against 0.04 s) and how fast a worker searches (memmem, per value).
FAULT_SECONDS = 2e-6
SEARCH_BYTES_PER_SECOND = 8e9
COSTLY_ROUNDS = 2
_MAX_VALUES = 256  # values kept beside a report (past that, only the latest worker's)


@dataclass(frozen=True)
class Report:
    """What a worker forked at ``epoch`` found: ``clean`` pages hold none of ``values``."""

    epoch: int
    values: frozenset[bytes]
    clean: Spans


@dataclass(frozen=True)
class Known:
    """What a worker is told: ``clean`` pages held none of ``values`` at the fork of the worker that found them
    (``since``) and were not written from then to this worker's fork (``epoch``)."""

    epoch: int
    since: int
    clean: Spans


def resident_anonymous_bytes() -> int:
    """This process's anonymous memory in RAM (``RssAnon``: not the address space reserved, such as threads' stacks)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def watchable(region: Region) -> bool:
    """Anonymous private writable memory (a file's private pages can change with the file, without a write)."""
    anonymous = not region.path or region.path in ("[heap]", "[stack]") or region.path.startswith("[anon:")
    return anonymous and region.perms.startswith("rw") and not region.shared


class Ledger:
    """The kernel's one ledger (:data:`LEDGER`): forks go through :meth:`fork`, reports come back to :meth:`record`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reset(owner=0)

    def stop(self) -> None:
        """Let go of the kernel's memory (one watcher per mapping: the kernel allows no other while this one holds it);
        the next fork starts afresh."""
        with self._lock:
            if self._watch is not None:
                self._watch.close()
            self._reset(owner=0)

    def renew_lock(self) -> None:
        """In a forked child (os.register_at_fork): the copy of the lock may be held by a thread that is not there."""
        self._lock = threading.Lock()

    def _reset(self, owner: int) -> None:
        self._owner = owner
        self._watch: WriteWatch | None = None
        self.unsupported = ""
        self._watched: dict[tuple[int, int], int] = {}  # range -> the epoch before whose fork it was registered
        self._epoch = 0
        self._written: dict[int, Spans] = {}  # epoch -> pages written between the previous fork's question and its own
        self._report: Report | None = None
        self._costly = 0  # starts in a row where watching cost more than it saved

    def fork(self, do_fork: Callable[[], int], unwatched: Spans = ()) -> tuple[int, Known | None]:  # type: ignore[assignment]
        """``do_fork()``'s pid, and what the child may take as known free of the kernel's secrets (None: nothing).
        ``unwatched``: memory the worker does not search (the namespace's large arrays, a loaded model's weights):
        not watched, so the kernel's writes there (an in-place update, a model's cache) cost nothing.
        (The lock is held across the fork: a worker's copy of the ledger is read without it.)"""
        with self._lock:
            self._own()
            if self._watch is None:
                return do_fork(), None
            self._epoch += 1
            epoch = self._epoch
            try:
                watching = self._watch_new(epoch, merged(list(unwatched)))
            except Exception as exc:  # the kernel refused, or a fault of ours: the start goes on without the ledger
                self._give_up(exc)
                return do_fork(), None
            if not watching:
                return do_fork(), None
            pid = do_fork()
            if os.getpid() != self._owner:
                return pid, None  # (the child of a fork that returned twice: never here with process.fork)
            try:
                return pid, self._after_fork(epoch)
            except Exception as exc:  # not known what was written: nothing is known from now on
                self._give_up(exc)
                return pid, None

    def _after_fork(self, epoch: int) -> Known:
        self._written[epoch] = self._ask_written()
        self._written.pop(epoch - _HISTORY, None)
        known = self._known(epoch)
        self._weigh(self._written[epoch], known)
        return known

    def record(self, epoch: int, values: frozenset[bytes], clean: Spans) -> None:
        """A worker's report (forked at ``epoch``): kept if it is the latest."""
        if len(values) > _MAX_VALUES:
            return
        with self._lock:
            if os.getpid() == self._owner and (self._report is None or epoch > self._report.epoch):
                self._report = Report(epoch, values, merged(clean))

    def reported_values(self, known: Known | None) -> frozenset[bytes]:
        """The values of the report ``known`` was made from (in the worker: its copy of the kernel's ledger)."""
        report = self._report
        if known is None or report is None or report.epoch != known.since:
            return frozenset()
        return report.values

    def _own(self) -> None:
        """A forked process (a kernel's multiprocessing child, a worker) starts a ledger of its own: the parent's
        registrations, descriptor and lock are not its own."""
        if self._owner == os.getpid():
            return
        self._reset(owner=os.getpid())
        try:
            self._watch = WriteWatch()
        except Unsupported as exc:
            self.unsupported = str(exc)

    def _weigh(self, written: Spans, known: Known) -> None:
        """Stop watching a kernel whose writes cost it more than the searches they save: :data:`COSTLY_ROUNDS`
        starts in a row where the faults of the pages it wrote (:data:`FAULT_SECONDS` each) outweigh searching the
        pages known free for the reported values (:data:`SEARCH_BYTES_PER_SECOND`). A start without a report to go
        by (the first; one of several started before any was ready) is not weighed, unless none ever came (a
        process with no secret to search for: :data:`_HISTORY` starts)."""
        if known.since == 0 and known.epoch <= _HISTORY:
            return
        page = os.sysconf("SC_PAGE_SIZE")
        values = len(self._report.values) if self._report is not None else 1
        paid = sum(b - a for a, b in written) // page * FAULT_SECONDS
        saved = sum(b - a for a, b in known.clean) * max(values, 1) / SEARCH_BYTES_PER_SECOND
        self._costly = self._costly + 1 if paid > saved else 0
        if self._costly >= COSTLY_ROUNDS:
            self._give_up(
                OSError(f"its writes cost more than the searches they saved ({COSTLY_ROUNDS} starts in a row)")
            )

    def _give_up(self, error: Exception) -> None:
        """Where the kernel's pages cannot be watched or asked about (a process that changed its user cannot read its
        own pagemap): closing the descriptor unregisters everything; every later start searches everything."""
        if self._watch is not None:
            self._watch.close()
        self._watch, self._watched, self._written, self._report = None, {}, {}, None
        self.unsupported = f"{type(error).__name__}: {error}"

    def _watch_new(self, epoch: int, unwatched: Spans) -> bool:
        """Watch what is new; False while the kernel is too small to be worth it (nothing watched yet)."""
        assert self._watch is not None
        page = os.sysconf("SC_PAGE_SIZE")
        skipped = whole_pages(unwatched, page)
        with self._watch:
            for span, since in list(self._watched.items()):
                overlap = intersection([span], skipped)
                if overlap:
                    self._unwatch(span, since, overlap)
            if not self._watched and resident_anonymous_bytes() - sum(b - a for a, b in skipped) < WATCHED_FROM_BYTES:
                return False
            present = sorted((r.start, r.end) for r in regions() if watchable(r))  # one mapping at a time
            for start, end in without(without(present, list(self._watched)), skipped):
                self._watched.update(dict.fromkeys(self._watch.watch(start, end), epoch))
        return True

    def _ask_written(self) -> Spans:
        assert self._watch is not None
        written: Spans = []
        with self._watch:
            for (start, end), since in list(self._watched.items()):
                answer = self._watch.written(start, end)
                if answer is None:  # part of it unmapped and mapped again: all of it written, registered anew later
                    del self._watched[(start, end)]
                    written.append((start, end))
                    continue
                written += answer[0]
                if answer[1]:  # now in huge pages (a fault, a collapse): unwatched before a write splits them
                    self._unwatch((start, end), since, answer[1])
        return merged(written)

    def _unwatch(self, span: tuple[int, int], since: int, parts: Spans) -> None:
        assert self._watch is not None
        del self._watched[span]
        for start, end in parts:
            self._watch.unwatch(start, end)
        self._watched.update(dict.fromkeys(without([span], parts), since))

    def _known(self, epoch: int) -> Known:
        report = self._report
        if report is None or any(e not in self._written for e in range(report.epoch, epoch + 1)):
            return Known(epoch, 0, [])
        watched = merged([span for span, since in self._watched.items() if since <= report.epoch])
        written = merged([run for e in range(report.epoch, epoch + 1) for run in self._written[e]])
        clean = without(intersection(report.clean, watched), written)
        return Known(epoch, report.epoch, clean)


#: The kernel process's ledger.
LEDGER = Ledger()
os.register_at_fork(after_in_child=lambda: LEDGER.renew_lock())  # (the module attribute: tests may replace it)
