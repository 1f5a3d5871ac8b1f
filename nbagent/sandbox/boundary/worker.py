"""The worker process: forked from the kernel, confined, it runs the agent's code and answers the host.

Life: :func:`main` runs in the child right after ``fork``. It cuts every tie to the kernel first (stdio, inherited
file descriptors, signal handlers, process group, IPython's display, matplotlib's backend), applies the confinement
plan, then serves messages until the host closes the channel; it always leaves with ``os._exit``.

Messages from the host: ``exec`` (code, plus the notebook variables that changed and the tool table), ``call`` (a
function the code defined, called from the notebook), ``release`` (handles the notebook dropped), ``tool_result``.
To the host: ``ready``, ``out`` (printed text, as it is produced), ``tool`` (a tool call), ``ran`` (the code has
finished; encoding follows) and ``done`` (outcome, write-back, images). All sends go through one sender thread, so a
timer signal in the main thread can never cut a frame in half. Before a ``tool`` or ``done`` with large buffers, the
worker asks for memory files (``shm``, answered by ``shm_ok`` with their descriptors) and writes those buffers there
(wire/shared.py).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import faulthandler
import gc
import importlib
import inspect
import io
import itertools
import os
import pickle
import resource
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from queue import Empty, SimpleQueue
from typing import Any, NoReturn

from ..errors import ExecutionError, FinalAnswerException
from ..guards import capture, limits, policy
from ..guards.executor import CodeOutput, LocalPythonExecutor
from ..wire import codec as wire
from ..wire import proxies, shared
from ..wire.budget import OUT_CHUNK_CHARS
from ..wire.changes import is_mutable, referenced_names
from ..wire.channel import Channel, frame
from ..wire.visibility import credential_texts
from . import confine, denied, figures, lifetime, mappings, secrets, spans
from . import namespace as host_values
from .unchanged import Known

STOP_SIGNAL = getattr(signal, "SIGUSR1", None)  # POSIX (the worker exists only where fork does)
_MISSING = object()
_DONE = object()  # marks the frame that answers a call (removed before sending)


@dataclass
class WorkerConfig:
    plan: confine.Plan
    executor_kwargs: dict = field(default_factory=dict)
    guards: bool = True
    max_print_outputs_length: int = 50_000
    max_transfer_bytes: int = 2**30
    origins: dict[int, tuple[int, Any]] = field(default_factory=dict)  # id(obj) -> (host key, obj)
    modules: dict[str, str] = field(default_factory=dict)  # name -> module an earlier worker imported
    generation: int = 1
    host_pid: int = 0
    #: the notebook's names the agent may not see -> why (wire/visibility.py): out of the worker's namespace before any
    #: agent code; ``credentials``: those among them whose texts leave the worker's memory too
    hidden: dict[str, str] = field(default_factory=dict)
    credentials: tuple[str, ...] = ()


def main(sock: Any, config: WorkerConfig, namespace: dict) -> NoReturn:
    """The child's whole life after ``fork``."""
    status = 0
    try:
        # a stop request before the worker is ready must not kill it: the signal arrives blocked (process.fork's
        # ``held``) and is ignored until the worker installs its handler
        signal.signal(STOP_SIGNAL, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {STOP_SIGNAL})
        _detach(sock.fileno(), config.plan.relay_fd)
        trace = _trace_crashes(config.plan.scratch)
        hidden, credentials = _withhold(namespace, config)
        known = _known(sock)
        try:
            report = confine.apply(config.plan, namespace, hidden, credentials, known, _teller(sock, known))
        except BaseException as exc:  # tell the host, which reports it and refuses to run the code
            Channel(sock).send({"t": "ready", "error": f"{type(exc).__name__}: {exc}"})
            raise
        del hidden, credentials
        worker = Worker(sock, config, namespace, report, known)  # ready
        _end_trace(trace)
        worker.serve()
    except BaseException:
        status = 70
    finally:
        os._exit(status)


def _known(sock: Any) -> Known | None:
    """The host's first frame: the kernel's pages known free of its secrets (unchanged.py); None without a ledger."""
    try:
        header, buffers = Channel(sock).recv(deadline=time.monotonic() + KNOWN_TIMEOUT_SECONDS)
    except (OSError, EOFError, TimeoutError):
        return None
    if (
        header.get("t") != "known"
        or not isinstance(header.get("epoch"), int)
        or not isinstance(header.get("since"), int)
    ):
        return None
    return Known(header["epoch"], header["since"], spans.from_bytes(buffers[0]) if buffers else [])


def _teller(sock: Any, known: Known | None) -> Callable[[frozenset[bytes]], None] | None:
    """The values searched for, sent to the host before the search (the copies sending makes are searched)."""
    if known is None:
        return None
    return lambda values: Channel(sock).send({"t": "values", "epoch": known.epoch}, sorted(values))


#: How long a starting worker waits for the host's first frame (sent right after the fork).
KNOWN_TIMEOUT_SECONDS = 30

#: Where a worker that crashes while starting leaves the Python frames it was in (in its scratch folder): the host
#: reads it to say where (a crash at start is ours, not the agent's: no code of the agent's has run yet).
START_CRASH_FILE = ".worker-start-crash.txt"


def _trace_crashes(scratch: str) -> Any:
    try:
        trace = open(os.path.join(scratch, START_CRASH_FILE), "w")  # open until the worker is ready
    except OSError:
        return None
    faulthandler.enable(trace, all_threads=False)
    return trace


def _end_trace(trace: Any) -> None:
    faulthandler.disable()
    if trace is not None:
        trace.close()
        with contextlib.suppress(OSError):
            os.unlink(trace.name)


def _withhold(namespace: dict, config: WorkerConfig) -> tuple[dict, list]:
    """Take the names the agent may not see out of the namespace (the kernel's copy keeps them): their values, and the
    texts of the credentials among them, for the scrub to remove from memory."""
    hidden = {name: namespace.pop(name) for name in config.hidden if name in namespace}
    credentials = [text for name in config.credentials for text in credential_texts(hidden.pop(name, None))]
    return hidden, credentials


# --- cutting the ties to the kernel --------------------------------------------------------------------------------


class _Discard(io.TextIOBase):
    """Standard streams outside calls: writes go nowhere (the kernel's streams belong to the kernel)."""

    def write(self, text: str) -> int:
        return len(text)

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        raise io.UnsupportedOperation("the worker's streams have no file descriptor")


def _detach(keep_fd: int, relay_fd: int | None = None) -> None:
    sys.stdout = sys.stderr = sys.__stdout__ = sys.__stderr__ = _Discard()  # before anything can print
    sys.stdin = sys.__stdin__ = io.StringIO()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    for fd in _open_fds():
        if fd > 2 and fd not in (keep_fd, devnull, relay_fd):
            try:
                os.dup2(devnull, fd)  # keeps the number taken: a kernel object closing "its" fd later is harmless
            except OSError:
                pass
    os.setpgid(0, 0)  # the kernel's interrupts (sent to its process group) are the host's to handle
    # The kernel's death kills us by PR_SET_PDEATHSIG, armed on the fork (lifetime.py: forked from a thread that lives
    # as long as the kernel; seccomp then forbids undoing it, setsid and setpgid). Without it: `watch_parent`.
    _PARENT[0] = os.getppid()
    for sig in (signal.SIGINT, signal.SIGXFSZ, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, lambda *a: None)
    gc.freeze()  # the kernel's objects: never collected (or copied) by the worker's GC
    _redirect_logging()
    _reset_module_state()
    _quiet_ipython()
    figures.use_agg()


_PARENT = [0]  # the kernel's pid, read right after the fork
_PARENT_POLL_SECONDS = 0.5


def watch_parent() -> None:
    """End the worker soon after the kernel process is gone (the worker is then re-parented): only where the OS has no
    parent-death signal (lifetime.TIED is False); a thread agent code could stop, unlike the signal."""
    if lifetime.TIED[0]:
        return

    def watch() -> None:
        while os.getppid() == _PARENT[0]:
            time.sleep(_PARENT_POLL_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="nbagent-worker-parent", daemon=True).start()


class _CurrentStderr(io.TextIOBase):
    """For logging handlers: write to whatever ``sys.stderr`` is now (the step's logs during a call)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def writable(self) -> bool:
        return True


def _redirect_logging() -> None:
    """Logging handlers hold the kernel's streams (which would publish on the kernel's connection): retarget them."""
    logging = sys.modules.get("logging")
    if logging is None:
        return
    loggers = [logging.getLogger()] + [
        v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger)
    ]
    stream = _CurrentStderr()
    for logger in loggers:
        for handler in list(logger.handlers):
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                handler.stream = stream


def _open_fds() -> list[int]:
    if os.path.isdir("/proc/self/fd"):
        return [int(name) for name in os.listdir("/proc/self/fd")]
    found = []
    for fd in range(3, min(os.sysconf("SC_OPEN_MAX"), 65536)):
        try:
            os.fstat(fd)
        except OSError:
            continue
        found.append(fd)
    return found


def _reset_module_state() -> None:
    """Locks another kernel thread may have held at fork, and the kernel's running event loop."""
    capture._lock = threading.Lock()
    capture._targets.clear()
    capture._installed.clear()
    limits._process_lock = threading.Lock()
    limits._main_calls.clear()
    limits._process_state.update(active=0, recursion=None, rlimit=None)
    events = sys.modules.get("asyncio.events")
    if events is not None:
        events._set_running_loop(None)


def _quiet_ipython() -> None:
    getipython = sys.modules.get("IPython.core.getipython")
    shell = getipython.get_ipython() if getipython else None
    if shell is None:
        return
    try:
        shell.display_pub.publish = lambda *args, **kwargs: None
        shell.displayhook = lambda *args, **kwargs: None
    except Exception:
        pass
    sys.displayhook = lambda value: None


# --- sending -------------------------------------------------------------------------------------------------------


class Outbox:
    """The sender thread: frames in order, printed text coalesced, streamed text capped."""

    def __init__(self, channel: Channel, max_chars: int) -> None:
        self.channel = channel
        self.queue: SimpleQueue = SimpleQueue()
        self.max_chars = max_chars
        self.streamed = 0
        thread = threading.Thread(target=self._run, name="nbagent-worker-outbox", daemon=True)
        thread.start()

    def output(self, text: str) -> None:
        self.queue.put(("out", text))

    def send(self, header: dict, buffers: list | tuple = ()) -> None:
        parts = frame(header, buffers)
        if header.get("t") == "done":
            parts.append(_DONE)
        self.queue.put(("frame", parts))

    def announce_ran(self, call_id: Any) -> None:
        """The code has finished (the host gives the encoding its own deadline); dropped if the answer follows at once."""
        self.queue.put(("ran", {"t": "ran", "id": call_id}))

    def reset_stream(self) -> None:
        self.queue.put(("reset", None))

    def _run(self) -> None:
        while True:
            items = [self.queue.get()]
            while True:
                try:
                    items.append(self.queue.get_nowait())
                except Empty:
                    break
            text: list[str] = []
            finishing = any(kind == "frame" and payload[-1] is _DONE for kind, payload in items)
            for kind, payload in items:
                if kind == "ran" and finishing:
                    continue  # the answer is already here: no need to announce it
                if kind == "ran":
                    kind, payload = "frame", frame(payload)
                if kind == "out":
                    text.append(payload)
                    continue
                self._flush(text)
                text = []
                if kind == "reset":
                    self.streamed = 0
                else:
                    self.channel.send_parts([p for p in payload if p is not _DONE])
            self._flush(text)

    def _flush(self, parts: list[str]) -> None:
        if not parts or self.streamed > self.max_chars:
            return
        text = "".join(parts)
        room = self.max_chars - self.streamed
        if len(text) > room:
            text = text[:room] + "\n[... further output is not streamed; the step's logs keep its end ...]\n"
        self.streamed += len(text) + 1
        for start in range(0, len(text), OUT_CHUNK_CHARS):  # small frames: the host caps an ``out`` frame's size
            self.channel.send({"t": "out", "text": text[start : start + OUT_CHUNK_CHARS]})


# --- tools ---------------------------------------------------------------------------------------------------------


class HostValue:
    """The final answer, which the host already holds (it ran ``final_answer``)."""

    def __init__(self, cid: int) -> None:
        self.cid = cid

    def __repr__(self) -> str:
        return "<the final answer, kept by the host>"


class ToolStub:
    """A tool as the worker sees it: its description, and a call that runs the real tool in the host."""

    def __init__(self, worker: Worker, spec: dict) -> None:
        self._worker = worker
        self.name = spec["name"]
        self.description = spec.get("description", "")
        self.inputs = spec.get("inputs", {})
        self.output_type = spec.get("output_type", "any")
        self.final = bool(spec.get("final"))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._worker.call_tool(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<tool {self.name}>"


_BUILTIN_ERRORS = {
    cls.__name__: cls
    for cls in vars(builtins).values()
    if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == "builtins"
}


def _tool_error(name: str, error_type: str, message: str) -> Exception:
    cls = _BUILTIN_ERRORS.get(error_type)
    return cls(message) if cls is not None else RuntimeError(f"tool {name!r} failed: {error_type}: {message}")


# --- the worker ----------------------------------------------------------------------------------------------------


class Worker:
    def __init__(self, sock: Any, config: WorkerConfig, namespace: dict, report: dict, known: Known | None) -> None:
        self.config = config
        self.channel = Channel(sock)
        self.ns = namespace
        host_values.WORKER_NAMESPACE[0] = namespace
        self.origins = dict(config.origins)
        self.objects = proxies.WORKER_OBJECTS
        proxies.WORKER_GENERATION[0] = config.generation
        self.oids = itertools.count(1)
        self.cids = itertools.count(1)
        self.fingerprints: dict[str, tuple[int, int | None]] = {}
        self.unavailable: dict[str, str] = {}
        self.tool_stubs: dict[str, ToolStub] = {}
        for name, module in config.modules.items():
            try:
                namespace[name] = importlib.import_module(module)
            except Exception:
                pass
        self.executor = LocalPythonExecutor(namespace=namespace, **config.executor_kwargs)
        self.executor.visibility = None  # the host says what is hidden (a load is a NameError, a binding refused)
        self.executor._guards.hidden_names = dict(config.hidden)
        self.executor._guards.executor_name = "IsolatedPythonExecutor"  # advice names the executor in use
        self.outbox = Outbox(self.channel, config.max_print_outputs_length)  # threads only after confinement
        watch_parent()
        self.executor.on_output = self.outbox.output
        self.executor.on_code_error = self.note_refused
        denied.watch_file_events()
        self.refused: list[dict[str, Any]] = []  # what the OS refused the call's code (denied.py), for ``done``
        signal.signal(STOP_SIGNAL, self._on_stop)
        self.stopping = False
        self.call_id: Any = None
        self.budget: int | None = config.max_transfer_bytes  # what the host may still take in this call
        self.shared_buffers = False  # whether the host takes large buffers as memory files in this call
        self.huge_pages = False  # whether those files may be filled through huge-page mappings
        self.encoder = wire.Encoder(self._reference)  # one per call: the final answer is sent once
        self._send_ready(report, known)

    def _send_ready(self, report: dict, known: Known | None) -> None:
        """Ready, with the pages found free of the kernel's secrets for the host's ledger (none without one)."""
        scrubbed = report.get("kernel_secrets")
        clean = scrubbed.pop(secrets.CLEAN, []) if isinstance(scrubbed, dict) else []
        header = {"t": "ready", "pid": os.getpid(), "report": report}
        if known is not None:
            header["clean"] = known.epoch
        self.outbox.send(header, [spans.to_bytes(clean)] if known is not None else [])

    def _on_stop(self, signum: int, frame: Any) -> None:
        self.stopping = True
        self.executor.request_stop()

    def serve(self) -> None:
        while True:
            header, buffers = self.channel.recv()
            kind = header.get("t")
            if kind == "exec":
                self.run_code(header, buffers)
            elif kind == "call":
                self.run_call(header, buffers)
            elif kind == "release":
                for oid in header.get("oids", []):
                    self.objects.pop(oid, None)
            elif kind == "shutdown":
                return

    # -- one call -----------------------------------------------------------------------------------------------------

    def _begin(self, header: dict) -> None:
        """A new call: its id, the transfer budget the host announced, a fresh encoder."""
        self.call_id = header.get("id")
        budget = header.get("budget")
        self.budget = budget if type(budget) is int else self.config.max_transfer_bytes
        self.shared_buffers = header.get("shared_buffers") is True
        self.huge_pages = header.get("huge_pages") is True  # the host read the kernel's setting (/sys is closed here)
        self.encoder = wire.Encoder(self._reference)
        self.refused = []
        denied.forget_file_events()

    def note_refused(self, exc: BaseException) -> None:
        """The code ended with ``exc``: what the OS refused it, if that is why (a claim the host checks)."""
        try:
            network = self.config.plan.allow_network
            self.refused = denied.refusals_in(exc, network_granted=network)
        except Exception:  # an exception too strange to read: no claim
            self.refused = []

    def run_code(self, header: dict, buffers: list) -> None:
        self._begin(header)
        self._sync(header, buffers)
        code = header["code"]
        referenced = _referenced_names(code)
        self._fingerprint_before(referenced)
        before_ns = dict(self.ns)
        before_figures = figures.open_figures()
        self.stopping = False
        outcome = self._attempt(lambda: self._execute(code))
        self.outbox.announce_ran(self.call_id)
        images = figures.take_new(before_figures)
        self._finish(outcome, before_ns, referenced, images)

    def run_call(self, header: dict, buffers: list) -> None:
        self._begin(header)
        self._sync(header, buffers)
        target = self.objects.get(header["oid"])
        args, kwargs = pickle.loads(buffers[header["args"]])
        before_ns = dict(self.ns)
        before_figures = figures.open_figures()
        self.stopping = False
        if target is None:
            outcome: Any = ExecutionError("the function is no longer available in the worker", cause_type="LookupError")
        else:
            outcome = self._attempt(lambda: self._call(target, args, kwargs))
        self.outbox.announce_ran(self.call_id)
        self._finish(outcome, before_ns, set(), figures.take_new(before_figures))

    def _attempt(self, run: Callable[[], CodeOutput]) -> CodeOutput | BaseException:
        try:
            return run()
        except (ExecutionError, KeyboardInterrupt) as exc:
            return exc
        except BaseException as exc:  # a bug of ours, or something that escaped: still a step error
            return ExecutionError(f"{type(exc).__name__}: {exc}", cause_type=type(exc).__name__)

    def _execute(self, code: str) -> CodeOutput:
        if self.config.guards:
            return self.executor(code)
        return _run_unguarded(self, code)

    def _call(self, target: Any, args: tuple, kwargs: dict) -> CodeOutput:
        return self.executor.run_callable(target, args, kwargs, contain=False)

    # -- the namespace ------------------------------------------------------------------------------------------------

    def _sync(self, header: dict, buffers: list) -> None:
        sync = header.get("sync") or {}
        for name in sync.get("delete", []):
            self.ns.pop(name, None)
            self.unavailable.pop(name, None)
        for name, (index, key) in sync.get("set", {}).items():
            try:
                value = pickle.loads(buffers[index])
            except Exception as exc:
                self.ns.pop(name, None)
                self.unavailable[name] = f"it could not be copied into the worker ({type(exc).__name__}: {exc})"
                continue
            self.ns[name] = value
            self.unavailable.pop(name, None)
            if key is not None:
                self.origins[id(value)] = (key, value)
        for name, reason in sync.get("unavailable", {}).items():
            self.ns.pop(name, None)
            self.unavailable[name] = reason
        self.executor._guards.unavailable = self.unavailable
        if isinstance(sync.get("hidden"), dict):
            self.executor._guards.hidden_names = dict(sync["hidden"])
        for oid in header.get("release", []):
            self.objects.pop(oid, None)
        if "tools" in header:
            self.tool_stubs = {spec["name"]: ToolStub(self, spec) for spec in header["tools"]}
            self.executor.send_tools(self.tool_stubs)

    def _fingerprint_before(self, referenced: set[str]) -> None:
        for name in referenced:
            value = self.ns.get(name, _MISSING)
            if value is _MISSING or not _mutable(value):
                continue
            cached = self.fingerprints.get(name)
            if cached is None or cached[0] != id(value):
                self.fingerprints[name] = (id(value), _fingerprint(value, self.config.max_transfer_bytes))

    def _changes(self, before: dict, referenced: set[str]) -> tuple[dict[str, Any], dict[str, bool], list[str]]:
        """The names bound since ``before`` or maybe changed in place, the latter also listed alone (so the host's
        report tells a rebinding from an in-place change: True when a checksum proves it, False when the object
        cannot be checksummed and is sent back in case), and the names deleted."""
        changed: dict[str, Any] = {}
        in_place: dict[str, bool] = {}
        for name, value in list(self.ns.items()):
            if not self._shared(name):
                continue
            if before.get(name, _MISSING) is not value:
                changed[name] = value
            elif name in referenced and _mutable(value):
                old = self.fingerprints.get(name)
                new = _fingerprint(value, self.config.max_transfer_bytes)
                if old is None or old[1] != new or new is None:
                    changed[name] = value
                    in_place[name] = old is not None and None not in (old[1], new)
                else:
                    self.fingerprints[name] = (id(value), new)
        deleted = [name for name in before if name not in self.ns and self._shared(name)]
        return changed, in_place, deleted

    def _shared(self, name: Any) -> bool:
        if not policy.shared_name(name) or name in self.tool_stubs:
            return False
        return name not in self.executor._guards.ipython_hidden

    # -- answering ----------------------------------------------------------------------------------------------------

    def _finish(self, outcome: Any, before_ns: dict, referenced: set[str], images: list) -> None:
        changed, in_place, deleted = self._changes(before_ns, referenced)
        encoder = self.encoder
        encoder.start_message(self.budget)
        seen: dict[int, str] = {}
        names: dict[str, Any] = {}
        for name, value in changed.items():
            if id(value) in seen:
                names[name] = {"$": "same", "name": seen[id(value)]}
                continue
            seen[id(value)] = name
            names[name] = self._encode(encoder, value)
            self.fingerprints.pop(name, None)  # computed again when a later step reads it
        header: dict[str, Any] = {"t": "done", "id": self.call_id, "names": names, "deleted": deleted}
        header["modified"] = in_place
        header["images"] = [self._encode(encoder, image) for image in images]
        header["figures"] = figures.take_summaries()  # plain data: the marks each figure drew
        if self.refused:
            header["refused"] = self.refused
        if isinstance(outcome, CodeOutput):
            header["logs"] = outcome.logs
            header["warnings"] = outcome.warnings
            header["final"] = outcome.is_final_answer
            if isinstance(outcome.output, HostValue):
                header["host_final"] = outcome.output.cid
            else:
                header["output"] = self._encode(encoder, outcome.output)
        elif isinstance(outcome, KeyboardInterrupt):
            header["error"] = {
                "class": "KeyboardInterrupt",
                "message": "interrupted",
                "logs": getattr(outcome, "logs", ""),
            }
        else:
            header["error"] = {
                "class": type(outcome).__name__,
                "message": str(outcome)[:100_000],  # the host keeps no more (and bounds the header)
                "logs": getattr(outcome, "logs", ""),
                "warnings": getattr(outcome, "warnings", []),
                "cause_type": getattr(outcome, "cause_type", ""),
                "lineno": getattr(outcome, "lineno", None),
            }
        self.outbox.reset_stream()
        self._send_message(header, encoder.buffers)

    def _send_message(self, header: dict, buffers: list) -> None:
        """Send a tool call or the answer; its large buffers go in memory files when the host offers them."""
        if self.shared_buffers:
            sizes, placements = shared.plan(buffers, _file_size_limit())
            fds = self._ask_files(sizes) if placements else []
            try:
                if fds:
                    buffers = shared.fill(fds, buffers, placements, huge=self.huge_pages)
                    header["shm"] = placements
            except OSError:  # (out of memory, say): the host closes the files it gave; the message goes inline
                pass
        self.outbox.send(header, buffers)

    def _ask_files(self, sizes: list[int]) -> list[int]:
        """The host's memory files of these sizes (their descriptors), or [] if it refused (then all goes inline)."""
        self.outbox.send({"t": "shm", "id": self.call_id, "sizes": sizes})
        while True:
            fds: list[int] = []
            reply, _ = self.channel.recv(fds=fds)
            if reply.get("t") == "shm_ok":
                break
            _close(fds)  # a stale answer to a tool call an interrupt abandoned
        if reply.get("n") != len(sizes) or len(fds) != len(sizes):
            _close(fds)
            return []
        return fds

    def _encode(self, encoder: wire.Encoder, value: Any) -> Any:
        try:
            return encoder.value(value)
        except Exception as exc:  # a library object that broke while being read: a handle
            return self._reference(value, note=f"could not be copied: {type(exc).__name__}")

    def _reference(self, obj: Any, note: str = "") -> dict:
        origin = self.origins.get(id(obj))
        if origin is not None and origin[1] is obj:
            return {"$": "host", "k": origin[0]}
        if isinstance(obj, types.ModuleType):
            return {"$": "remote", "kind": "module", "oid": 0, "type": "module", "summary": str(obj.__name__)[:200]}
        oid = next(self.oids)
        self.objects[oid] = obj
        kind = "class" if isinstance(obj, type) else "function" if _is_function(obj) else "object"
        return {
            "$": "remote",
            "kind": kind,
            "oid": oid,
            "type": _type_name(obj)[:200],
            "summary": _summary(obj, kind, note),
        }

    # -- tools --------------------------------------------------------------------------------------------------------

    def call_tool(self, stub: ToolStub, args: tuple, kwargs: dict) -> Any:
        cid = next(self.cids)
        encoder = self.encoder
        encoder.start_message(self.budget)
        header = {
            "t": "tool",
            "id": self.call_id,
            "cid": cid,
            "name": stub.name,
            "args": [encoder.value(a) for a in args],
            "kwargs": {str(k): encoder.value(v) for k, v in kwargs.items()},
        }
        # The final answer's values stay referable: the write-back names them instead of sending them again.
        encoder.export([*args, *kwargs.values()] if stub.final else ())
        self._send_message(header, encoder.buffers)
        while True:
            reply, buffers = self.channel.recv()
            if reply.get("t") != "tool_result" or reply.get("cid") != cid:
                continue  # a stale answer to a call an interrupt abandoned
            if type(reply.get("budget")) is int:
                self.budget = reply["budget"]
            if isinstance(reply.get("printed"), str) and reply["printed"]:
                sys.stdout.write(reply["printed"])  # the tool's prints, in the step's logs
            if not reply.get("ok"):
                raise _tool_error(stub.name, reply.get("type", "Exception"), reply.get("message", ""))
            if stub.final:
                return HostValue(cid)
            return pickle.loads(buffers[reply["value"]])


# --- helpers -------------------------------------------------------------------------------------------------------


_referenced_names = referenced_names
_mutable = is_mutable


def _file_size_limit() -> int | None:
    """The worker's largest file (RLIMIT_FSIZE, set by confinement): memory files obey it too."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if limit == resource.RLIM_INFINITY else limit


def _close(fds: list[int]) -> None:
    for fd in fds:
        if fd >= 0:
            os.close(fd)


def _fingerprint(value: Any, max_bytes: int) -> int | None:
    return wire.fingerprint(mappings.plain_view(value), max_bytes)  # a memmap's change is seen like an array's


def _is_function(obj: Any) -> bool:
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)) or (
        callable(obj) and type(obj).__name__ == "partial"
    )


def _type_name(obj: Any) -> str:
    kind = type(obj)
    module = getattr(kind, "__module__", "")
    return f"{module}.{kind.__qualname__}" if module not in ("builtins", "__main__", None, "") else kind.__qualname__


def _summary(obj: Any, kind: str, note: str) -> str:
    if kind in ("function", "class"):
        name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "?")
        try:
            signature = str(inspect.signature(obj))
        except (TypeError, ValueError):
            signature = "(...)"
        return f"{name}{signature}"[:300]
    return note


# --- without the guards (confinement tests, trusted code) ----------------------------------------------------------


def _run_unguarded(worker: Worker, code: str) -> CodeOutput:
    """Plain ``exec`` of the code (the last expression is the output) with the worker's timers and capture; the
    boundary is then the process and the OS confinement alone."""
    ns = worker.ns
    for name, stub in worker.tool_stubs.items():
        ns[name] = _final_raiser(stub) if stub.final else stub
    try:
        tree = ast.parse(code, "<agent code>")
    except SyntaxError as exc:
        raise ExecutionError(f"SyntaxError: {exc.msg}", cause_type="SyntaxError", lineno=exc.lineno) from None
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    body = compile(tree, "<agent code>", "exec")
    tail = compile(ast.Expression(last.value), "<agent code>", "eval") if last is not None else None
    buffer = capture.CappedBuffer(worker.config.max_print_outputs_length, worker.outbox.output)
    warned = capture.WarningLog()
    timeout = worker.config.executor_kwargs.get("timeout_seconds")
    call = limits.CallState(timeout=timeout, max_operations=None, namespace={}, budget_key="R")
    worker.executor._call = call
    value: Any = None
    try:
        with capture.capture_output(buffer), capture.capture_warnings(warned), limits.interrupts(call):
            call.arm()
            try:
                exec(body, ns)
                value = eval(tail, ns) if tail is not None else None
            except FinalAnswerException as answer:
                return CodeOutput(answer.value, buffer.getvalue(), True, warnings=warned.lines())
            except BaseException as exc:
                if call.pending in ("timeout", "stop"):
                    kind = "ExecutionTimeout" if call.pending == "timeout" else "ExecutionStopped"
                    raise _limit_error(kind, timeout, buffer.getvalue()) from None
                worker.note_refused(exc)
                lineno = _agent_line(exc)
                raise ExecutionError(
                    f"Error on line {lineno} of the code:\n{type(exc).__name__}: {exc}"
                    if lineno
                    else f"{type(exc).__name__}: {exc}",
                    logs=buffer.getvalue(),
                    cause_type=type(exc).__name__,
                    lineno=lineno,
                    warnings=warned.lines(),
                ) from None
            finally:
                call.disarm()
    finally:
        worker.executor._call = None
    return CodeOutput(value, buffer.getvalue(), False, warnings=warned.lines())


def _final_raiser(stub: ToolStub) -> Callable:
    def final_answer(*args: Any, **kwargs: Any) -> Any:
        raise FinalAnswerException(stub(*args, **kwargs))

    return final_answer


def _limit_error(kind: str, timeout: Any, logs: str) -> ExecutionError:
    from .. import errors

    text = (
        f"{errors.timeout_message(timeout)}: it was stopped"
        if kind == "ExecutionTimeout"
        else "the code was stopped on request"
    )
    return getattr(errors, kind)(f"{kind}: {text}", logs=logs, cause_type=kind)


def _agent_line(exc: BaseException) -> int | None:
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<agent code>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
