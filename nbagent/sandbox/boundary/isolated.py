"""IsolatedPythonExecutor: the agent's code runs in a confined worker process forked from the kernel.

The same surface as :class:`~nbagent.sandbox.executor.LocalPythonExecutor` (``executor(code) -> CodeOutput``,
``send_tools``, ``send_variables``, ``state``, ``request_stop``, the same errors and messages), over a process
boundary:

* **Worker**: forked at the first call (a copy-on-write view of the kernel, unpicklable objects included), confined
  (confine.py) and kept for the next calls, so state persists. When notebook cells ran since the last call and the
  worker holds nothing the notebook would lose, it is forked afresh (the cheapest way to see in-place changes).
* **Namespace**: before a call, notebook variables rebound since the worker last saw them are sent (pickled: host to
  worker is the trusted direction). After it, the names the code bound or deleted, and the notebook objects it
  changed in place (for names the code mentions), come back as plain data decoded without pickle (wire.py); anything
  else becomes a labelled handle or a function proxy (proxies.py). The host never runs the agent's code. Buffers over
  1 MiB (arrays, frame columns) come through the socket into the host's private huge-page memory, or, where shared
  memory gets huge pages, in sealed memory files the host creates and maps copy-on-write (shared.py).
* **Tools** run here, in the host: the worker calls stubs; ``final_answer``'s value is kept here.
* **Limits** from outside: the worker's own timer ends the code at ``timeout_seconds`` (clean error with the line);
  a worker that does not answer is killed ``KILL_GRACE_SECONDS`` later, as one that ignores a stop request after
  ``STOP_GRACE_SECONDS``. Memory, crashes, ``os._exit``: step errors; a fresh worker takes over.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import itertools
import os
import socket
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from nbagent.media.figures import checked_figures

from .. import errors
from ..guards import policy
from ..guards.capture import MAX_WARNING_CHARS, MAX_WARNINGS, CappedBuffer, capture_output
from ..guards.executor import CodeOutput, PythonExecutor, _default_final_answer, grant_variable
from ..guards.policy import shared_name
from ..wire import budget, changes, shared, timeline
from ..wire import codec as wire
from ..wire.capabilities import Grant, RefusedCapability
from ..wire.channel import Channel, ChannelClosed, ChannelTimeout, FrameRefused
from ..wire.proxies import DeadHandleError, RemoteClass, RemoteFunction, RemoteObject
from ..wire.visibility import NOT_SHARED, Visibility, missing_name
from . import confine, grants, proxy, refusals, spans, tasks, unchanged, wipe, worker
from .model_memory import model_memory
from .namespace import dumps, execution_count
from .process import WorkerProcess, crash_signal, describe_status, fork, lost_note, shutdown
from .scratch import Scratch
from .watch import NO_ANSWER, CallWatch, only_late_output

KILL_GRACE_SECONDS = 0.15
STOP_GRACE_SECONDS = 0.3
START_TIMEOUT_SECONDS = 60.0
DEFAULT_MEMORY_LIMIT_BYTES = 2 * 2**30
DEFAULT_FILE_LIMIT_BYTES = 2**30
#: Steps whose namespace snapshots are kept for "re-run from step k" (wire/timeline.py).
DEFAULT_MAX_SNAPSHOTS = 20
#: Authorizing one of these grants the network (HTTPS to public addresses through the host's proxy, proxy.py).
NETWORK_MODULES = frozenset(
    {"socket", "ssl", "http", "urllib", "urllib3", "requests", "httpx", "aiohttp", "ftplib", "smtplib", "imaplib",
     "poplib", "xmlrpc", "websocket", "websockets", "ddgs", "duckduckgo_search", "*"}
)  # fmt: skip
_PLAIN_TYPES = (type(None), bool, int, float, str, bytes, complex, list, tuple, dict, set, frozenset)
_MISSING = object()
_notified: set[str] = set()


class IsolatedPythonExecutor(PythonExecutor):
    """Runs agent code in a confined worker process; ``state`` is the (possibly shared) namespace.

    Args:
        additional_authorized_imports, max_print_outputs_length, additional_functions, timeout_seconds, namespace,
        max_operations, max_recursion, max_allocation_bytes: as for ``LocalPythonExecutor`` (the last three apply
            inside the worker, where its guards are a usability layer: clear refusals, protected tools).
        memory_limit_bytes: address space the worker may add to the kernel's (default 2 GiB); above it the code gets
            ``MemoryError``.
        allow_read / allow_write: extra paths the worker may read / write (it always reads the Python installation
            and the working directory, and writes its scratch directory ``scratch_dir``).
        allow_network: None (default): granted iff a network module (``NETWORK_MODULES``) is authorized. The worker
            then reaches the network only through a CONNECT proxy run here (proxy.py): HTTPS to public addresses,
            every connection noted in the step.
        allow_domains: the domains the proxy lets a granted worker reach (``"example.com"`` covers its subdomains);
            None (default): any public address.
        allow_hosts: the user's explicit grants of single ``"host:port"`` pairs (``"127.0.0.1:8080"``), reachable
            even when loopback or private, which the proxy otherwise always refuses.
        on_output: called with printed text as the code produces it (also settable as an attribute).
        guards: False runs the code in the worker without the rewrite and guards: the process boundary and the OS
            confinement alone (for tests of the boundary, and trusted code).
        confine: False skips the OS confinement (the process boundary and limits stay).
        file_limit_bytes: largest file the worker may write.
        max_transfer_bytes: most plain data one call sends back, tool calls and write-back together, as the host
            counts what decoding allocates (larger values stay in the worker as handles, and the step says so).
            The attribute ``max_held_bytes`` (default: a quarter of the machine's memory, 512 MiB to 16 GiB) bounds
            what the agent's values hold in the notebook over steps (``wire/budget.py``).
        copy_inputs: the notebook's names are never rebound, changed or deleted by the code: its changes stay in
            the worker's copies (later calls see them); names it creates still come back. Settable between calls.
        max_snapshots / max_snapshot_bytes: how many step snapshots ``checkpoint`` keeps for ``rewind`` and how many
            bytes of old values they may keep alive (default: what ``max_held_bytes`` leaves of the agent's values
            bound now, so that a hostile worker cannot make the kernel hold more through snapshots); the oldest go
            first.

    The attribute ``shared_buffers`` (settable between calls) says whether buffers over 1 MiB come back in sealed
    memory files mapped copy-on-write (``wire/shared.py``): True where the OS has ``memfd`` (Linux) and gives shared
    memory huge pages, or the environment says ``NBAGENT_SHARED_BUFFERS=1``; else (and with ``=0``) they come through
    the socket into the host's private memory, in huge pages where Linux allows them (the default ``madvise``).

    After each call, ``last_changes`` lists the names the code created, rebound, changed in place (proven by a
    checksum in the worker; the detail says what shows: columns, shape, length, keys) or deleted (``changes.py``),
    and ``last_refusals`` what the boundary refused the code (a file, the network, a connection: ``refusals.py``);
    ``grant(refused)`` widens the confinement for it, ``revoke(grant)`` narrows it again (``grants.py``).
    """

    def __init__(
        self,
        additional_authorized_imports: Any = (),
        max_print_outputs_length: int | None = None,
        additional_functions: Mapping[str, Callable] | None = None,
        timeout_seconds: float | None = policy.DEFAULT_TIMEOUT_SECONDS,
        namespace: dict | None = None,
        memory_limit_bytes: int | None = DEFAULT_MEMORY_LIMIT_BYTES,
        allow_read: Any = (),
        allow_write: Any = (),
        allow_network: bool | None = None,
        max_operations: int | None = policy.DEFAULT_MAX_OPERATIONS,
        max_recursion: int | None = policy.DEFAULT_MAX_RECURSION,
        max_allocation_bytes: int | None = policy.DEFAULT_MAX_ALLOCATION_BYTES,
        on_output: Callable[[str], None] | None = None,
        guards: bool = True,
        confine: bool = True,
        file_limit_bytes: int | None = DEFAULT_FILE_LIMIT_BYTES,
        max_transfer_bytes: int = 2**30,
        copy_inputs: bool = False,
        allow_domains: Any = None,
        allow_hosts: Any = (),
        max_snapshots: int = DEFAULT_MAX_SNAPSHOTS,
        max_snapshot_bytes: int | None = None,
    ) -> None:
        if not hasattr(os, "fork"):
            raise RuntimeError("IsolatedPythonExecutor needs os.fork (Linux or macOS); use LocalPythonExecutor")
        if isinstance(additional_authorized_imports, str):
            additional_authorized_imports = [additional_authorized_imports]
        self.additional_authorized_imports = list(additional_authorized_imports or ())
        self.authorized_imports = sorted(set(policy.BASE_BUILTIN_MODULES) | set(self.additional_authorized_imports))
        self.max_print_outputs_length = (
            policy.DEFAULT_MAX_PRINT_OUTPUTS_LENGTH if max_print_outputs_length is None else max_print_outputs_length
        )
        self.additional_functions = dict(additional_functions or {})
        self.timeout_seconds = timeout_seconds
        self.memory_limit_bytes = memory_limit_bytes
        self.allow_read = tuple(str(p) for p in ([allow_read] if isinstance(allow_read, str) else allow_read))
        self.allow_write = tuple(str(p) for p in ([allow_write] if isinstance(allow_write, str) else allow_write))
        if allow_network is None:
            allow_network = any(name.split(".")[0] in NETWORK_MODULES for name in self.additional_authorized_imports)
        self.allow_network = bool(allow_network)
        policy_ = proxy.Policy.make(allow_domains, allow_hosts)  # a clear ValueError for a malformed entry
        self._proxy = proxy.ConnectProxy(policy_) if self.allow_network else None
        self._policy = policy_  # the proxy's, kept for a network granted later (with the connections granted)
        self.on_output = on_output
        self.guards = guards
        self.confine = confine
        self.file_limit_bytes = file_limit_bytes
        self.max_transfer_bytes = max_transfer_bytes
        self.max_held_bytes = budget.default_held_bytes()
        self.shared_buffers = shared.available()
        self._held = budget.HeldValues()
        self._watch: CallWatch | None = None
        self._inner_kwargs = {
            "additional_authorized_imports": self.additional_authorized_imports,
            "max_print_outputs_length": self.max_print_outputs_length,
            "timeout_seconds": timeout_seconds,
            "max_operations": max_operations,
            "max_recursion": max_recursion,
            "max_allocation_bytes": max_allocation_bytes,
            "max_memory_bytes": None,
            "report_changes": False,  # the host reports (it knows which names are the notebook's)
        }
        self.state: dict = namespace if namespace is not None else {}
        self.state.setdefault("__name__", "__main__")
        self.state.setdefault("__builtins__", builtins)
        scratch = Scratch()  # locked while this kernel lives; orphans of killed kernels are swept (scratch.py)
        self.scratch_dir = scratch.path
        self.host_pid = os.getpid()
        self.confinement: dict[str, Any] = {}
        self._holder: list[WorkerProcess | None] = [None]
        self._finalizer = weakref.finalize(self, shutdown, self._holder, scratch)
        self._generation = 0
        self._running = threading.Lock()
        self._tools: dict[str, Callable] = {}
        self._tools_sent = False
        self._mirror: dict[str, Any] = {}
        self._origins: dict[int, Any] = {}
        self._keys = itertools.count(1)
        self._remotes: weakref.WeakValueDictionary[int, RemoteObject] = weakref.WeakValueDictionary()
        self._released: list[int] = []
        self._execution_count: int | None = None
        self._stop_requested: float | None = None
        self._lost_note = ""
        self._synced: dict[str, Any] = {}
        self._call_ids = itertools.count(1)
        self.copy_inputs = copy_inputs
        self.last_changes: list[dict[str, Any]] = []
        #: What the boundary did during the last call that the step should say (a connection made through the
        #: proxy, a name kept in the worker and why, a worker replaced after a protocol anomaly); each note also
        #: ends the call's logs, as a line starting with ``[nbagent]``.
        self.last_notes: list[str] = []
        self._agent_values: dict[str, Any] = {}  # names this executor bound -> the value (the agent's own)
        self._worker_modules: dict[str, str] = {}  # names bound to modules only the worker imported
        self._pending_module = ""
        self.max_snapshot_bytes = max_snapshot_bytes
        self.timeline = timeline.Timeline(max_snapshots, max_snapshot_bytes, shared=shared_name)
        self._code = ""  # the code of the call under way (its top-level definitions can re-make its functions)
        self._definitions: dict[str, tuple[str, Any]] = {}  # name -> (its def/class source, the handle it made)
        self._kept_in_worker: set[str] = set()  # the notebook's names the code changed in the worker's copy only
        self.last_refusals: list[RefusedCapability] = []
        self._grant_book = grants.GrantBook()
        #: threads and processes a worker may have at once (tasks.py: a pids cgroup, or the host's count); settable
        #: between calls, applied to the next worker
        self.max_tasks = tasks.DEFAULT_MAX_TASKS
        self._remaking = False  # a rewind re-makes definitions: no tool runs (the calls are refused and listed)
        self._refused_tools: list[str] = []
        self._rules_changed = False  # a grant changed what a worker is allowed at its start: a fresh one applies it
        #: which of the namespace's names the code sees (wire/visibility.py): every name but credentials by default,
        #: the task's names when an agent says so (``share``); the others are not in the worker at all
        self.visibility = Visibility(None)
        self._hidden: dict[str, str] = {}  # this call's hidden names -> why

    # -- smolagents surface -------------------------------------------------------------------------------------------

    def send_tools(self, tools: Mapping[str, Callable]) -> None:
        """Make ``tools`` callable by name; they run in this process. Calling ``final_answer`` ends the call."""
        self._tools = dict(tools)
        self._tools_sent = False

    def send_variables(self, variables: Mapping[str, Any]) -> None:
        self.state.update(variables)

    def share(self, names: Any) -> None:
        """The namespace's names the code may see from now on: ``names`` (an iterable), or every name but credentials
        (None); the names the code creates are its own. A hidden name is not in the worker (a credential's value not
        in its memory either) and is asked for (``last_refusals``)."""
        self.visibility.share(names)

    def request_stop(self) -> None:
        """Thread-safe: end the running call (ExecutionStopped) within ``STOP_GRACE_SECONDS`` + 0.1 s."""
        if not self._running.locked():
            return
        self._stop_requested = time.monotonic()  # also while the worker starts: the call's watch honours it
        process = self._holder[0]
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, worker.STOP_SIGNAL)

    def __call__(self, code_action: str) -> CodeOutput:
        if not isinstance(code_action, str):
            raise TypeError(f"code must be a str, not {type(code_action).__name__}")
        self.last_changes = []
        self.last_notes = []
        self._reset_refusals()
        self._code = code_action
        try:
            return self._locked(lambda: self._run({"t": "exec", "code": code_action}, []))
        except errors.ExecutionError as failure:  # a hidden variable the code reached for: the loop may ask for it
            refused = self.visibility.refusal(missing_name(str(failure)), self.state)
            if refused is not None and refused not in self.last_refusals:
                self.last_refusals = [*self.last_refusals, refused]
            raise
        finally:
            if self.timeline.snapshots:  # the values the write-back replaced are now held by snapshots alone
                self._set_snapshot_room()
                self.timeline.enforce(self.state)

    def restart(self) -> None:
        """Replace the worker by a fresh fork of the kernel (objects that live only in the old one are lost)."""
        self._locked(lambda: self._replace_worker())

    def close(self) -> None:
        """Stop the worker and remove the scratch directory (also done when the executor is garbage collected)."""
        self._finalizer()
        if self._proxy is not None:
            self._proxy.close()  # (without close, its threads end with the worker's sockets)

    # -- time travel (wire/timeline.py) ---------------------------------------------------------------------------

    def checkpoint(self, step_number: int) -> None:
        """Snapshot the namespace just before step ``step_number``'s code runs (pointers only: see ``rewind``)."""
        self._set_snapshot_room()
        self.timeline.checkpoint(step_number, self.state, self._bookkeeping())  # (which enforces the limits)

    def rewind(self, step_number: int, keep: bool = True) -> timeline.Rewound:
        """Put the namespace back as it was before step ``step_number``'s code ran.

        The bindings the write-backs made since are undone (the host never changed a notebook object in place, so the
        snapshot's objects are the values as they were); a name the notebook rebound since is left and said. The
        worker is replaced by a fork of the restored kernel, where the functions and classes the agent defined are
        re-made from their source; other objects that lived only in the old worker are named as not restorable. The
        line cut off is ``result.branch`` (``restore_branch`` makes it live again); ``keep=False`` drops it (a step
        tried again, after a grant)."""
        return self._locked(lambda: self._rewind(step_number, keep))

    def restore_branch(self, branch: timeline.Branch) -> timeline.Rewound:
        """Make a line an earlier rewind cut off live again (the current line is cut off in its place)."""
        return self._locked(lambda: self._restore_branch(branch))

    def _rewind(self, step_number: int, keep: bool = True) -> timeline.Rewound:
        outcome, snapshot = self.timeline.rewind(step_number, self.state, self._bookkeeping(), keep)
        if snapshot is not None:
            self._take_bookkeeping(snapshot.extra, outcome)
            self._fresh_worker(outcome)
        outcome.note = outcome.describe()
        return outcome

    def _restore_branch(self, branch: timeline.Branch) -> timeline.Rewound:
        back, _ = self.timeline.rewind(branch.start, self.state, self._bookkeeping())
        outcome = self.timeline.graft(branch, self.state)
        outcome.step, outcome.found, outcome.branch = branch.start, True, back.branch
        outcome.kept.update(back.kept)
        self._take_bookkeeping(branch.tip.extra, outcome)
        self._fresh_worker(outcome)
        outcome.note = outcome.describe().replace(f"as they were before step {branch.start}", "as that run left them")
        return outcome

    def _set_snapshot_room(self) -> None:
        """Snapshots and the agent's values bound now share ``max_held_bytes`` (unless ``max_snapshot_bytes`` says)."""
        room = max(0, self.max_held_bytes - self._held.total(self.state))
        limit = self.max_snapshot_bytes
        self.timeline.max_bytes = room if limit is None else min(limit, room)

    def _bookkeeping(self) -> dict[str, Any]:
        return {
            "agent_values": dict(self._agent_values),
            "worker_modules": dict(self._worker_modules),
            "definitions": dict(self._definitions),
            "kept_in_worker": set(self._kept_in_worker),
        }

    def _take_bookkeeping(self, extra: dict[str, Any], outcome: timeline.Rewound) -> None:
        self._agent_values = dict(extra.get("agent_values", {}))
        self._worker_modules = dict(extra.get("worker_modules", {}))
        self._definitions = dict(extra.get("definitions", {}))
        self._kept_in_worker = set(extra.get("kept_in_worker", set()))
        for name in outcome.restored:
            if self._agent_values.get(name, _MISSING) is self.state.get(name):
                self._held.record(name, self.state[name], timeline.estimate_bytes(self.state[name]))

    def _fresh_worker(self, outcome: timeline.Rewound) -> None:
        """The old worker holds the later steps' state: a fork of the restored kernel replaces it (at the next call,
        or now to re-make the agent's functions and classes from their source)."""
        handles = {n: v for n, v in self.state.items() if isinstance(v, RemoteObject) and self._shared(n)}
        remake = {n: src for n, (src, made) in self._definitions.items() if handles.get(n) is made}
        process = self._holder[0]
        if process is not None:
            self._discard(process, "replaced")
        self._lost_note = ""
        for name, handle in handles.items():
            if name not in remake:
                outcome.unrestorable[name] = f"a {handle._type} that lived only in the replaced worker"
        for name in sorted(self._kept_in_worker):  # the fresh worker sees the notebook's own object
            outcome.unrestorable[name] = "the agent's change to it stayed in the replaced worker's copy (copy_inputs)"
        self._kept_in_worker.clear()
        if remake:
            self._remake(remake, handles, outcome)

    def _remake(self, sources: dict[str, str], handles: dict[str, Any], outcome: timeline.Rewound) -> None:
        """Run the definitions again in the fresh worker, with every tool refused: a default argument, decorator or
        class body that calls a tool gets a clear error there, and the host's tool is never called (its effect would
        repeat with no step and no ask). The note says which definitions ran again and which tool calls were
        refused."""
        saved = (self.last_changes, self.last_notes, self.last_refusals, self._code, self.on_output)
        failures: dict[str, str] = {}
        self._remaking, self._refused_tools = True, []
        try:
            for name, code in sources.items():  # one by one: a definition that fails leaves the others made
                try:
                    self.on_output, self._code = None, code
                    self._run({"t": "exec", "code": code}, [])
                except (errors.ExecutionError, OSError) as exc:
                    lines = str(exc).strip().splitlines()
                    failures[name] = lines[-1].strip()[:200] if lines else type(exc).__name__
        finally:
            self.last_changes, self.last_notes, self.last_refusals, self._code, self.on_output = saved
            self._remaking = False
        outcome.reran = list(sources)
        outcome.refused_tools = sorted(set(self._refused_tools))
        for name in sources:
            old, new = handles[name], self.state.get(name)
            if isinstance(new, RemoteObject) and new is not old:
                self._rebind_everywhere(old, new)
                outcome.redefined.append(name)
            else:
                why = failures.get(name, "not bound")
                outcome.unrestorable[name] = f"its definition failed in the fresh worker: {why}"

    def _rebind_everywhere(self, old: Any, new: Any) -> None:
        """A handle re-made by a fresh worker replaces the old one in every snapshot and in the bookkeeping."""
        self.timeline.rebind(old, new)
        for snapshot in self.timeline.all_snapshots():
            definitions = snapshot.extra.get("definitions", {})
            for name, (source, made) in list(definitions.items()):
                if made is old:
                    definitions[name] = (source, new)
            values = snapshot.extra.get("agent_values", {})
            for name, value in list(values.items()):
                if value is old:
                    values[name] = new

    @property
    def worker_pid(self) -> int | None:
        process = self._holder[0]
        return process.pid if process is not None else None

    # -- proxies ------------------------------------------------------------------------------------------------------

    def owns(self, target: RemoteObject) -> bool:
        return target._owner is self and target._generation == self._generation and self._holder[0] is not None

    def call_remote(self, target: RemoteObject, args: tuple, kwargs: dict) -> Any:
        """Run a function (or class) the agent's code defined, in the worker, under the same limits."""
        if not self.owns(target):
            raise DeadHandleError(f"{target!r} belonged to a worker process that was replaced")
        data = self._pickle((args, kwargs))
        header = {"t": "call", "oid": target._oid, "args": 0}
        saved = self.on_output
        self.on_output = saved or _write_stdout
        self._code = ""
        try:
            result = self._locked(lambda: self._run(header, [data], new_worker=False))
        finally:
            self.on_output = saved
        return result.output

    # -- a call -------------------------------------------------------------------------------------------------------

    def _locked(self, action: Callable[[], Any]) -> Any:
        if not self._running.acquire(blocking=False):
            raise RuntimeError("this executor is already running code (calls cannot overlap or nest)")
        try:
            self._stop_requested = None
            return action()
        finally:
            self._stop_requested = None
            self._running.release()

    def _run(self, header: dict, buffers: list, *, new_worker: bool = True) -> CodeOutput:
        self._hidden = self.visibility.hidden(self.state, [n for n in self.state if self._shared(n)])
        if new_worker and any(n in self._mirror for n, why in self._hidden.items() if why != NOT_SHARED):
            self._rules_changed = True  # a credential the worker was given is hidden now: a fresh one never had it
        if new_worker:
            self._ensure_worker()
        elif self._holder[0] is None:
            raise DeadHandleError("the worker process that held this function was replaced")
        sync, sync_buffers = self._sync(len(buffers))
        if sync.get("unavailable") and new_worker and not self._live_remotes():
            self._replace_worker()
            sync, sync_buffers = {}, []
        call_id = next(self._call_ids)
        header = dict(header, id=call_id, sync=sync, release=self._take_released(), budget=self._begin_call(call_id))
        header["shared_buffers"] = self._watch.shared_buffers if self._watch is not None else False
        header["huge_pages"] = header["shared_buffers"] and shared.huge_pages()
        if not self._tools_sent:
            header["tools"] = self._tool_specs()
        process = self._holder[0]
        assert process is not None
        process.resume()  # stopped since its last call (``_after_call``)
        try:
            process.channel.send(header, buffers + sync_buffers)
        except OSError:
            return self._failed(process, "crash", CappedBuffer(self.max_print_outputs_length))
        self._tools_sent = True
        self._mirror.update(self._synced)
        for name in sync.get("delete", []):
            self._mirror.pop(name, None)
        try:
            return self._wait(process, call_id)
        finally:
            self._after_call(process)

    def _after_call(self, process: WorkerProcess) -> None:
        """Between calls the worker is stopped (SIGSTOP): a thread its code started runs only within a call's
        deadline. One that holds more threads than ``max_tasks`` (where the host counts them) is killed now."""
        if self._holder[0] is not process or process.poll() is not None:
            return
        process.pause()
        if process.tasks is not None and process.tasks.over():
            self._discard(process, "replaced")
            self.note(f"the worker had more than {self.max_tasks} threads after the call: it was killed")

    def _begin_call(self, call_id: int) -> int:
        """The call's watch (deadlines, budget, final answers); returns the budget the worker is told. A worker that
        sent anything but printed text since its last answer (frames that would answer the next calls) is replaced
        first."""
        process = self._holder[0]
        if process is not None and not only_late_output(process.channel):
            self._discard(process, "replaced")
            self._restart_after_anomaly()
        held = self._held.total(self.state)
        self._forget_unbound_agent_values()
        call_budget = budget.CallBudget(self.max_transfer_bytes, held, self.max_held_bytes)
        self._watch = CallWatch(
            call_id,
            self.timeout_seconds,
            KILL_GRACE_SECONDS,
            call_budget,
            self._stop_deadline,
            shared_buffers=bool(self.shared_buffers),
        )
        return call_budget.told()

    def _forget_unbound_agent_values(self) -> None:
        """Values the agent bound whose names the notebook has since rebound or deleted are no longer the agent's
        (and no longer kept alive here: a large frame's memory is freed when the user drops it)."""
        state = self.state
        self._agent_values = {n: v for n, v in self._agent_values.items() if state.get(n, _MISSING) is v}

    def _stop_deadline(self) -> float | None:
        return self._stop_requested + STOP_GRACE_SECONDS if self._stop_requested else None

    def _wait(self, process: WorkerProcess, call_id: int) -> CodeOutput:
        streamed = CappedBuffer(self.max_print_outputs_length)
        watch = self._watch
        assert watch is not None and watch.call_id == call_id
        process.channel.caps = watch.budget.frame_cap  # checked before a frame's buffers are allocated
        try:
            while True:
                limit = watch.limit()
                reason = watch.expired() or ("tasks" if process.tasks is not None and process.tasks.over() else "")
                if reason:
                    return self._failed(process, reason, streamed)
                wait = 0.05 if limit is None else max(0.0, min(0.05, limit - time.monotonic()))
                if not process.channel.readable(wait):
                    if process.poll() is not None:
                        return self._failed(process, "crash", streamed)
                    continue
                try:
                    header, buffers = process.channel.recv(
                        deadline=limit if limit is not None else time.monotonic() + 60
                    )
                except ChannelTimeout:
                    continue
                kind = header.get("t")
                if kind == "out":
                    self._stream(header.get("text"), streamed)
                    if streamed.total > self.max_print_outputs_length + budget.OUT_CHUNK_CHARS * 8:
                        raise wire.WireError("more printed output than the worker may stream")
                elif header.get("id") != call_id:
                    continue  # a late answer to an earlier call (or a forged one): not this call's
                elif kind == "tool":
                    try:
                        self._serve_tool(process, header, buffers, watch)
                    except ChannelTimeout:  # the worker does not read the answer (it is stuck in other code)
                        return self._failed(process, "timeout", streamed)
                elif kind == "ran":
                    watch.on_ran()
                elif kind == "shm":
                    try:
                        self._grant(process, header, watch)
                    except ChannelTimeout:  # the worker does not read the answer
                        return self._failed(process, "timeout", streamed)
                elif kind == "done":
                    return self._outcome(process, header, buffers, watch)
        # The step's error is raised after the handler, so that it does not chain the exception whose traceback holds
        # the message's decoded buffers (up to the call's budget, kept alive by the error the notebook keeps).
        except wire.DecodeAbandoned as exc:  # the deadline passed or Stop was asked while decoding
            failure = (exc.reason, "")
        except FrameRefused as exc:
            failure = ("protocol", str(exc))
        except (ChannelClosed, ConnectionError):  # the worker is gone (a reset socket says so too)
            failure = ("crash", "")
        except (wire.WireError, budget.OverBudget) as exc:
            failure = ("protocol", str(exc))
        except KeyboardInterrupt:
            self._interrupt(process)
            interrupt = KeyboardInterrupt()
            interrupt.logs = streamed.getvalue()  # type: ignore[attr-defined]
            raise interrupt from None
        finally:
            watch.close()  # memory files granted and never used
        return self._failed(process, failure[0], streamed, detail=failure[1])

    def _grant(self, process: WorkerProcess, header: dict, watch: CallWatch) -> None:
        """The worker asks for memory files for its next message: create them (checked against the budget) and pass
        their descriptors, or refuse (``n`` 0: the worker sends inline)."""
        grant = watch.grant(header)
        fds = grant.fds if grant is not None else []
        limit = max(watch.deadline or 0.0, time.monotonic() + 5.0)  # the worker is waiting for this answer
        process.channel.send({"t": "shm_ok", "n": len(fds)}, deadline=limit, fds=fds)

    def _stream(self, text: Any, streamed: CappedBuffer) -> None:
        if not isinstance(text, str):
            return
        streamed.write(text)
        if self.on_output is not None:
            try:
                self.on_output(text)
            except Exception:
                pass

    def _interrupt(self, process: WorkerProcess) -> None:
        """A kernel interrupt while waiting: stop the code, or kill the worker if it does not end promptly."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, worker.STOP_SIGNAL)
        limit = time.monotonic() + STOP_GRACE_SECONDS
        with contextlib.suppress(Exception, KeyboardInterrupt):
            while time.monotonic() < limit:
                if process.channel.readable(0.05):
                    header, _ = process.channel.recv(deadline=limit)
                    if header.get("t") == "done":
                        return
                    if header.get("t") == "shm":  # no memory files now: the worker sends its answer inline
                        process.channel.send({"t": "shm_ok", "n": 0}, deadline=limit)
                    if header.get("t") == "tool":
                        break  # a tool call now would run in the host after the interrupt: replace the worker
        self._discard(process, "the kernel was interrupted while the worker's code ran")

    # -- results ------------------------------------------------------------------------------------------------------

    def _outcome(self, process: WorkerProcess, header: dict, buffers: list, watch: CallWatch) -> CodeOutput:
        """The worker's ``done``: everything is decoded and checked before the notebook changes (an anomaly binds
        nothing), then the write-back, then the step's result."""
        decoder = self._decoder(watch.take_shared(header, buffers), watch)
        decode = functools.partial(wire.decoded, decoder)
        values, costs = self._decode_names(header.get("names"), decoder, watch)
        images = header.get("images", [])
        images = [decode(node) for node in images] if isinstance(images, list) else []
        drawn = checked_figures(header.get("figures"))  # the worker's summaries, bounded and checked
        error = header.get("error")
        answer = watch.final_answer(header)
        output = decode(header.get("output")) if error is None and answer is NO_ANSWER else None
        watch.settle(decoder, process.channel.last_header_bytes)
        self._take_refusals(header.get("refused"))
        in_place = header.get("modified") if isinstance(header.get("modified"), dict) else {}
        deleted = header.get("deleted", [])
        self.last_changes = self._bind(values, costs, in_place) + self._delete(
            deleted if isinstance(deleted, list) else []
        )
        warned = _warnings(header.get("warnings"))
        if answer is not NO_ANSWER:  # the host's final_answer ran: the first answer ends the step
            if error is not None or not header.get("final"):
                self.note("the code went on after final_answer() and hid it; the first answer stands")
            return CodeOutput(
                output=answer,
                logs=self._logs(header),
                is_final_answer=True,
                images=images,
                warnings=warned,
                figures=drawn,
            )
        if error is not None:
            raise self._error(error, watch.started)
        return CodeOutput(
            output=output, logs=self._logs(header), is_final_answer=False, images=images, warnings=warned, figures=drawn
        )

    def _decode_names(self, names: Any, decoder: wire.Decoder, watch: CallWatch) -> tuple[dict, dict]:
        """The write-back's values by name (aliases resolved) and what each cost the budget."""
        if not isinstance(names, dict):
            raise wire.WireError("bad write-back")
        values: dict[str, Any] = {}
        costs: dict[str, int] = {}
        for name, node in names.items():
            if not self._shared(name):  # never a dunder, an IPython internal, get_ipython...
                raise wire.WireError(f"the worker may not bind {str(name)[:40]!r}")
            if isinstance(node, dict) and node.get("$") == "same":
                continue
            self._pending_module = ""
            before = decoder.cost
            values[name] = wire.decoded(decoder, node)
            costs[name] = decoder.cost - before
            self._say_kept(name, node, watch)
            if values[name] is _MISSING and self._pending_module:
                self._worker_modules[name] = self._pending_module
            self._pending_module = ""
        for name, node in names.items():
            if isinstance(node, dict) and node.get("$") == "same":
                if node.get("name") not in values:
                    raise wire.WireError("bad alias")
                values[name] = values[node["name"]]
        return values, costs

    def _bind(self, values: dict, costs: dict, in_place: dict) -> list[dict[str, Any]]:
        """Bind what the write-back may bind; the change report (what was kept in the worker says why)."""
        report: list[dict[str, Any]] = []
        defined = timeline.definitions_in(self._code) if self._code and _makes_handles(values) else {}
        for name, value in values.items():
            entry = self._change_of(name, value, in_place)
            owned = not self._notebook_owns(name)  # a name the agent created (before this call or now)
            refusal = self._writeback_refusal(name, value, in_place)  # a builtin, IPython's, a module: never bound
            kept = refusal is not None or (self.copy_inputs and not owned)
            if entry is not None:
                report.append(
                    dict(entry, kept=True, reason=refusal) if refusal else dict(entry, kept=True) if kept else entry
                )
            if kept and refusal is None:
                self._kept_in_worker.add(name)  # a fresh worker would not see this change (copy_inputs)
            if value is _MISSING or kept:  # with copy_inputs the notebook's names keep their objects
                continue
            if name not in self.state:
                self.visibility.created.add(name)
            self._worker_modules.pop(name, None)
            self.state[name] = value
            self._mirror[name] = value
            self.timeline.wrote(name, value)
            if name in defined and isinstance(value, (RemoteFunction, RemoteClass)):
                self._definitions.pop(name, None)  # kept in the order of definition: later ones may use earlier ones
                self._definitions[name] = (defined[name], value)
            if owned:
                self._agent_values[name] = value
                self._held.record(name, value, costs.get(name, 0))
        return report

    def _delete(self, deleted: list) -> list[dict[str, Any]]:
        """Unbind the names the code deleted (with ``copy_inputs``, the notebook's own stay); the change report."""
        report = []
        for name in deleted:
            if not self._shared(name):
                continue
            kept = self.copy_inputs and self._notebook_owns(name)
            report.append(changes.change(name, "deleted", kept=kept, yours=self._notebook_owns(name)))
            if kept:
                self._kept_in_worker.add(name)
                continue
            self._worker_modules.pop(name, None)
            self.state.pop(name, None)
            self._mirror.pop(name, None)
            self.timeline.wrote(name, timeline.MISSING)
        return report

    def _logs(self, header: dict) -> str:
        return self._with_notes(self._capped(header.get("logs", "")))

    def _capped(self, text: Any, least: int = 0) -> str:
        """The worker's logs or error text, cut like printed output (its first and last ``max_print_outputs_length
        // 2`` characters; ``least``: a floor, for messages): the worker's own cut passes as it is, a hostile
        worker's text is cut here."""
        text = text if isinstance(text, str) else ""
        cap = max(self.max_print_outputs_length, least)
        if len(text) <= cap + 200:  # room for the worker's own "truncated" line
            return text
        buffer = CappedBuffer(cap)
        buffer.write(text)
        return buffer.getvalue()

    def _say_kept(self, name: str, node: Any, watch: CallWatch) -> None:
        """The step says why a value stayed in the worker because of the budget (the worker marks it ``over``)."""
        if isinstance(node, dict) and node.get("$") == "remote" and type(node.get("over")) is int:
            self.note(
                f"`{str(name)[:80]}` ({budget.human(node['over'])} or more) stays in the worker as a handle: over "
                f"{watch.budget.describe()}"
            )

    def note(self, text: str) -> None:
        """Record something the boundary did during this call, for the step (see ``last_notes``)."""
        if text not in self.last_notes:
            self.last_notes.append(text)

    def _with_notes(self, logs: str) -> str:
        for text in self._proxy.take_notes() if self._proxy is not None else ():
            self.note(text)  # the connections this call made through the proxy, and its refusals
        if not self.last_notes:
            return logs
        lines = "".join(f"[nbagent] {text}\n" for text in self.last_notes)
        return f"{logs}{'' if not logs or logs.endswith(chr(10)) else chr(10)}{lines}"

    def _writeback_refusal(self, name: str, value: Any, in_place: dict) -> str | None:
        """Why ``name`` stays in the worker (policy.writeback_refusal; or an in-place change of a notebook object that
        cannot come back, a memmap's), said in the step; None: it may be bound."""
        foreign = value is _MISSING or isinstance(value, RemoteObject)
        hidden = policy.ipython_hidden_names(self.state)
        refusal = policy.writeback_refusal(name, value, self.state, foreign=foreign, hidden=hidden)
        if refusal is None and name in self._hidden:  # a name of the user's the agent never saw: never overwritten
            refusal = f"it is {self._hidden[name]}"
        current = self.state.get(name, _MISSING)
        if refusal is None and value is not current and changes.users_code(current) and self._notebook_owns(name):
            kind = "class" if isinstance(current, type) else "function"
            refusal = f"it would replace your {kind} {name}, which the agent's code would then run when you call it"
        if refusal is None and in_place.get(name) is True and value is self.state.get(name, _MISSING):
            filename = getattr(value, "filename", None)  # np.memmap: the worker wrote its private copy of the file
            granted = isinstance(filename, (str, os.PathLike)) and any(_within(filename, p) for p in self.allow_write)
            if not granted:
                refusal = "its change stayed in the worker's copy (a memmap's file is written only under allow_write)"
        if refusal is not None:
            self.note(f"kept {name} in the worker, not in your notebook: {refusal} (the agent's code still sees it)")
        return refusal

    def _change_of(self, name: str, value: Any, in_place: dict) -> dict[str, Any] | None:
        """How the worker's binding of ``name`` changed the notebook's namespace (None: it did not, visibly)."""
        old = self.state.get(name, _MISSING)
        if value is _MISSING:  # a module only the worker imported: reported as a module (``sys`` stands for it)
            return changes.change(name, "created" if old is _MISSING else "rebound", sys)
        if old is _MISSING:
            return changes.change(name, "created", value)
        yours = self._notebook_owns(name)  # the person's name: a warning that says what changed (columns, rows, keys)
        if name not in in_place:
            detail = changes.value_difference(old, value) if yours else ""
            return changes.change(name, "rebound", value, detail, yours=yours)
        detail = changes.value_difference(old, value)  # both at hand: the host's object and the worker's changed copy
        if not detail and not in_place[name]:
            return None  # sent back in case (it cannot be checksummed), with no visible change
        return changes.change(name, "modified", value, detail, yours=yours)

    def _notebook_owns(self, name: str) -> bool:
        """True for a name the notebook bound (not one this executor bound for the agent)."""
        return name in self.state and self._agent_values.get(name, _MISSING) is not self.state[name]

    def _decoder(self, buffers: list, watch: CallWatch) -> wire.Decoder:
        """One message's decoder: the call's table, what is left of its budget, its deadline and Stop."""

        def host(node: dict) -> Any:
            key = node.get("k")
            if key not in self._origins:
                raise wire.WireError("unknown host object")
            return self._origins[key]

        process = self._holder[0]
        header_bytes = process.channel.last_header_bytes if process is not None else 0
        return watch.decoder(buffers, self._make_remote, host, header_bytes)

    def _make_remote(self, node: dict) -> Any:
        kind, oid, type_name, summary = (node.get(k) for k in ("kind", "oid", "type", "summary"))
        if kind not in ("function", "class", "object", "module") or type(oid) is not int:
            raise wire.WireError("bad reference")
        type_name = type_name[:200] if isinstance(type_name, str) else "object"
        summary = summary[:300] if isinstance(summary, str) else ""
        if kind == "module":  # a module the agent may import: bound by name if this process has it
            if not policy.is_import_authorized(summary, self.authorized_imports):
                return _MISSING
            module = sys.modules.get(summary)
            if module is None:  # the worker alone imported it: a fresh worker imports it again (never the host)
                self._pending_module = summary
                return _MISSING
            return module
        cls = {"function": RemoteFunction, "class": RemoteClass}.get(kind, RemoteObject)
        remote = cls(self, self._generation, oid, kind, type_name, summary)
        self._remotes[oid] = remote
        weakref.finalize(remote, self._released.append, oid)
        return remote

    def _error(self, error: Any, started: float) -> BaseException:
        if not isinstance(error, dict):
            return errors.ExecutionError("ExecutionError: the worker sent a malformed error")
        name = error.get("class")
        message = self._capped(error.get("message", ""), least=_MIN_MESSAGE_CHARS)
        logs = self._with_notes(self._capped(error.get("logs", "")))
        if name == "KeyboardInterrupt":  # only the host's own interrupt raises KeyboardInterrupt (in _wait)
            if self._stop_requested:
                return errors.ExecutionStopped(
                    "ExecutionStopped: the code was stopped on request", logs=logs, cause_type="ExecutionStopped"
                )
            return errors.ExecutionError("ExecutionError: the code was interrupted", logs=logs, cause_type="Interrupt")
        # The worker's class name only selects among our ExecutionError subclasses.
        cls = getattr(errors, name) if isinstance(name, str) and name in _ERROR_CLASSES else errors.ExecutionError
        cause = str(error.get("cause_type", "") or "")
        if cause == "MemoryError" and self.memory_limit_bytes:
            message += f" (the worker's memory is limited to memory_limit_bytes={self.memory_limit_bytes:,})"
        lineno = error.get("lineno") if type(error.get("lineno")) is int else None
        return cls(message, logs=logs, cause_type=cause, lineno=lineno, warnings=_warnings(error.get("warnings")))

    def _failed(self, process: WorkerProcess, why: str, streamed: CappedBuffer, detail: str = "") -> CodeOutput:
        """The worker did not answer in time, crashed or broke the protocol: kill it, say what was lost."""
        if why == "crash" and self._stop_requested:
            why = "stop"  # a worker that ended after Stop was asked: the run stops, it did not crash
        status = self._discard(process, why)
        logs = self._with_notes(streamed.getvalue())
        lost = self._lost_note
        if why == "timeout":
            text = (
                f"ExecutionTimeout: {errors.timeout_message(self.timeout_seconds)}: it was stopped "
                f"(its worker process did not respond and was killed). {lost}"
            )
            raise errors.ExecutionTimeout(text.strip(), logs=logs, cause_type="ExecutionTimeout")
        if why == "tasks":
            text = (
                f"ExecutionError: the code started more than {self.max_tasks} threads (max_tasks): its worker process "
                f"was killed. {lost}"
            )
            raise errors.ExecutionError(text.strip(), logs=logs, cause_type="TaskLimit")
        if why == "stop":
            text = f"ExecutionStopped: the code was stopped on request (its worker process was killed). {lost}"
            raise errors.ExecutionStopped(text.strip(), logs=logs, cause_type="ExecutionStopped")
        if why == "protocol":
            self._restart_after_anomaly()
            logs = self._with_notes(streamed.getvalue())
            text = f"ExecutionError: the worker process broke the protocol ({detail}) and was replaced. {lost}"
            raise errors.ExecutionError(text.strip(), logs=logs, cause_type="WorkerProtocolError")
        text = f"WorkerCrash: {describe_status(status)}. {lost}"
        raise errors.ExecutionError(text.strip(), logs=logs, cause_type="WorkerCrash")

    def _restart_after_anomaly(self) -> None:
        """After a protocol anomaly: a fresh worker now (the killed one is never trusted again), and the step says so."""
        self.note("the worker process broke the protocol: it was killed and a fresh worker started")
        with contextlib.suppress(errors.ExecutionError, OSError):
            self._start_worker()

    # -- the worker ---------------------------------------------------------------------------------------------------

    def _ensure_worker(self) -> None:
        if self._rules_changed:
            self._restart_for_grants()
            return
        process = self._holder[0]
        if process is not None and process.poll() is None:
            count = execution_count(self.state)
            if count is None or count == self._execution_count or self._live_remotes():
                return
        self._replace_worker()

    def _replace_worker(self) -> None:
        process = self._holder[0]
        if process is not None:
            self._discard(process, "replaced")
        self._start_worker()

    def _discard(self, process: WorkerProcess, why: str) -> int | None:
        lost = sorted(
            name for name, value in self.state.items() if isinstance(value, RemoteObject) and self.owns(value)
        )
        status = process.kill()
        if self._holder[0] is process:
            self._holder[0] = None
            self._generation += 1
        self._lost_note = lost_note(lost, why)
        self._mirror.clear()
        self._origins.clear()
        self._tools_sent = False
        return status

    def _start_worker(self) -> None:
        try:
            self._start_worker_once()
        except _CrashedAtStart as first:  # before any code of the agent's ran: nothing was lost, so once more
            where = self._start_crash_trace()
            self._start_worker_once()
            note = f"the worker process crashed while starting ({first.signal_name}) and was started again"
            self.confinement["start"] = note
            warnings.warn(f"{note}; where it crashed: {where}", RuntimeWarning, stacklevel=2)

    def _start_crash_trace(self) -> str:
        """The Python frames a worker that crashed while starting was in (worker.py writes them), innermost first."""
        try:
            with open(os.path.join(self.scratch_dir, worker.START_CRASH_FILE)) as fh:
                lines = [line.strip() for line in fh if line.strip().startswith("File ")]
        except OSError:
            return "not known"
        return "; ".join(lines[:6]) or "not known"

    def _start_worker_once(self) -> None:
        self._withdraw_stale_grants()
        plan = confine.plan(
            self.scratch_dir,
            allow_read=self.allow_read,
            allow_write=self.allow_write,
            allow_network=self.allow_network,
            memory_limit_bytes=self.memory_limit_bytes,
            file_limit_bytes=self.file_limit_bytes,
            confine=self.confine,
        )
        self._generation += 1
        shared = {name: value for name, value in self.state.items() if self._shared(name) and name not in self._hidden}
        origins = {}
        for value in shared.values():
            if type(value) not in _PLAIN_TYPES:
                key = next(self._keys)
                self._origins[key] = value
                origins[id(value)] = (key, value)
        config = worker.WorkerConfig(
            plan=plan,
            executor_kwargs=dict(self._inner_kwargs),
            guards=self.guards,
            max_print_outputs_length=self.max_print_outputs_length,
            max_transfer_bytes=self.max_transfer_bytes,
            origins=origins,
            modules={n: m for n, m in self._worker_modules.items() if n not in shared},
            generation=self._generation,
            host_pid=self.host_pid,
            hidden=dict(self._hidden),
            credentials=tuple(name for name, why in self._hidden.items() if why != NOT_SHARED),
        )
        relay = self._proxy.attach() if self._proxy is not None and plan.network_namespace else None
        plan.relay_fd = relay.fileno() if relay is not None else None
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        for sock in (parent, child):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * 2**20)
        pid, known = unchanged.LEDGER.fork(
            lambda: fork(lambda: worker.main(child, config, self.state), held=frozenset({worker.STOP_SIGNAL})),
            unwatched=wipe.data_buffers([self.state]) + model_memory(),
        )  # the child: worker.main, never returns
        bound = tasks.bound(pid, self.max_tasks)  # before the worker runs any agent code (it waits for a call)
        child.close()
        if relay is not None:
            relay.close()
        channel = Channel(parent, max_bytes=2 * self.max_transfer_bytes + 2**28)
        _tell_known(channel, known)
        process = WorkerProcess(pid, channel, self._generation, bound)
        self._holder[0] = process
        self._mirror = dict(shared)
        self._tools_sent = False
        self._execution_count = execution_count(self.state)
        self._await_ready(process)
        process.pause()

    def _await_ready(self, process: WorkerProcess) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        try:
            header, buffers = process.channel.recv(deadline=deadline)
            values = _values_told(header, buffers)
            if values is not None:  # the values it searched for, sent before its search: its report follows
                header, buffers = process.channel.recv(deadline=deadline)
        except (ChannelClosed, ChannelTimeout, OSError):
            status = self._discard(process, "start")
            crash = crash_signal(status)
            if crash is not None:
                raise _CrashedAtStart(crash) from None
            raise errors.ExecutionError(
                f"ExecutionError: the worker process did not start ({describe_status(status)})"
            ) from None
        if header.get("t") != "ready" or "error" in header:
            self._discard(process, "start")
            raise errors.ExecutionError(
                f"ExecutionError: the worker process could not confine itself: {header.get('error')}"
            )
        if values is not None and isinstance(header.get("clean"), int) and len(buffers) == 1:
            unchanged.LEDGER.record(header["clean"], values, spans.from_bytes(buffers[0]))
        report = header.get("report") if isinstance(header.get("report"), dict) else {}
        report["tasks"] = process.tasks.describe() if process.tasks is not None else "not bounded"  # the host's word
        self.confinement = report
        notice = report.get("notice")
        if isinstance(notice, str) and notice not in _notified:
            _notified.add(notice)
            warnings.warn(f"nbagent isolated executor: {notice}", RuntimeWarning, stacklevel=4)

    def _live_remotes(self) -> list[RemoteObject]:
        return [r for r in list(self._remotes.values()) if r._generation == self._generation]

    def _take_released(self) -> list[int]:
        released, self._released[:] = list(self._released), []
        return released

    # -- refusals and grants (refusals.py, grants.py) -----------------------------------------------------------------

    @property
    def grants(self) -> list[Grant]:
        """The grants in force (``grant``), oldest first (variables last)."""
        return self._grant_book.current() + [Grant("variable", name) for name in sorted(self.visibility.granted)]

    def grant(self, refused: RefusedCapability, scope: str = "run") -> Grant:
        """Widen the confinement for what ``refused`` names: a person's (or a policy's) answer, never the worker's.

        A read or write adds that path to ``allow_read`` / ``allow_write`` (a file not there yet is created empty,
        the Grant's note says so), the network sets ``allow_network``: both at the next call, in a fresh worker
        (the OS rules are fixed when a worker starts; the step names what only the old worker held). A connection is
        let through the proxy at once. ``scope`` ("once" or "run") is recorded for the caller, who revokes a "once"
        grant. ValueError, in a sentence, for what is never granted.
        """
        if refused.kind == "variable":  # sent to the worker at the next call (a hidden credential: ValueError)
            return grant_variable(self.visibility, self.state, refused, scope)
        grant = self._grant_book.add(refused, scope, self._reach(), self._policy)
        self._widen(grant, True)
        return grant

    def revoke(self, grant: Grant) -> None:
        """Withdraw a grant (ValueError if it is not in force); file rules and the network at the next call."""
        if grant.kind == "variable":  # taken out of the worker's namespace at the next call
            if grant.target not in self.visibility.granted:
                raise ValueError(f"{grant.describe()} is not a grant in force")
            self.visibility.granted.discard(grant.target)
            return
        self._grant_book.remove(grant)
        self._widen(grant, False)

    def _widen(self, grant: Grant, on: bool) -> None:
        if grant.kind == "connect":
            self._policy = self._policy.granting(grant.target, on)
            if self._proxy is not None:
                self._proxy.policy = self._policy  # read at each connection: no restart
            return
        if grant.kind == "network":
            self.allow_network = on
            if on and self._proxy is None:
                self._proxy = proxy.ConnectProxy(self._policy)
            elif not on and self._proxy is not None:
                self._proxy.close()
                self._proxy = None
        elif grant.kind == "read":
            self.allow_read = grants.toggled(self.allow_read, grant.target, on)
        else:
            self.allow_write = grants.toggled(self.allow_write, grant.target, on)
        self._rules_changed = True

    def _reach(self) -> refusals.Reach:
        return refusals.Reach(self.scratch_dir, self.allow_read, self.allow_write, self.allow_network)

    def _reset_refusals(self) -> None:
        self.last_refusals = []
        if self._proxy is not None:
            self._proxy.take_refusals()  # an earlier call's, which it did not wait for

    def _take_refusals(self, sent: Any) -> None:
        """After a call: what the worker says it was refused (checked here) and what the proxy refused."""
        found = refusals.from_worker(sent, self._reach())
        proxied = refusals.from_proxy(self._proxy.take_refusals()) if self._proxy is not None else []
        self.last_refusals = refusals.merged(self.last_refusals, found, proxied)

    def _restart_for_grants(self) -> None:
        """A fresh worker with the changed grants; the step says so, and what only the old worker held."""
        self._rules_changed = False
        process = self._holder[0]
        if process is not None:
            self._discard(process, "grants")
            self.note(self._lost_note)
        self._start_worker()

    def _withdraw_stale_grants(self) -> None:
        """Granted paths that now lead elsewhere (a link planted since) are withdrawn before a worker starts."""
        for grant, why in self._grant_book.stale():
            self.revoke(grant)
            self.note(f"the grant to {grant.describe()} was withdrawn: {why}")
        self._rules_changed = False  # the worker about to start applies the grants as they now are

    # -- the namespace ------------------------------------------------------------------------------------------------

    def _shared(self, name: Any) -> bool:
        return shared_name(name)

    def _sync(self, first_buffer: int) -> tuple[dict, list]:
        """The notebook's changes since the worker last saw the namespace (rebinds and deletions)."""
        sets: dict[str, tuple[int, int | None]] = {}
        unavailable: dict[str, str] = {}
        buffers: list[bytes] = []
        current = {name: value for name, value in self.state.items() if self._shared(name) and name not in self._hidden}
        for name, value in current.items():
            if self._mirror.get(name, _MISSING) is value:
                continue
            try:
                data = self._pickle(value)
            except Exception as exc:
                unavailable[name] = (
                    f"the notebook bound it to a {type(value).__name__} after the worker started, and that cannot be "
                    f"copied into the worker ({type(exc).__name__}); executor.restart() starts a worker that sees it "
                    "(objects that live only in the current worker are then lost)"
                )
                continue
            key = None
            if type(value) not in _PLAIN_TYPES:
                key = next(self._keys)
                self._origins[key] = value
            sets[name] = (first_buffer + len(buffers), key)
            buffers.append(data)
        deleted = [name for name in self._mirror if name not in current]
        self._synced = {name: current[name] for name in sets}
        sync: dict[str, Any] = {"hidden": dict(self._hidden)}
        if sets:
            sync["set"] = sets
        if deleted:
            sync["delete"] = deleted
        if unavailable:
            sync["unavailable"] = unavailable
        return sync, buffers

    def _pickle(self, value: Any) -> bytes:
        return dumps(value, self.state)

    # -- tools --------------------------------------------------------------------------------------------------------

    def _tool_table(self) -> dict[str, Callable]:
        return {"final_answer": _default_final_answer, **self.additional_functions, **self._tools}

    def _tool_specs(self) -> list[dict]:
        specs = []
        for name, tool in self._tool_table().items():
            spec = {"name": name, "final": name == "final_answer"}
            for attribute in ("description", "inputs", "output_type"):
                value = getattr(tool, attribute, None)
                if isinstance(value, (str, dict)):
                    spec[attribute] = _jsonable(value)
            specs.append(spec)
        return specs

    def _serve_tool(self, process: WorkerProcess, header: dict, buffers: list, watch: CallWatch) -> None:
        """Run a tool the worker's code called, here; its arguments count against the call's budget, and a call of
        ``final_answer`` is recorded by its id (the only way the call can end with a final answer)."""
        name, args, kwargs, cid = (header.get(k) for k in ("name", "args", "kwargs", "cid"))
        if not isinstance(args, list) or not isinstance(kwargs, dict) or type(cid) is not int:
            raise wire.WireError("bad tool call")
        decoder = self._decoder(watch.take_shared(header, buffers), watch)
        call_args = [wire.decoded(decoder, a) for a in args]
        call_kwargs = {str(k): wire.decoded(decoder, v) for k, v in kwargs.items()}
        watch.settle(decoder, process.channel.last_header_bytes)
        tool = self._tool_table().get(name) if isinstance(name, str) else None
        reply: dict[str, Any] = {"t": "tool_result", "cid": cid, "ok": True}
        out: list[bytes] = []
        printed = CappedBuffer(self.max_print_outputs_length)
        started = time.monotonic()
        try:
            if tool is None:
                raise NameError(f"no tool named {name!r}")
            if self._remaking:  # a rewind re-makes definitions: a tool's effect would repeat with no step, no ask
                self._refused_tools.append(name[:100])
                raise RuntimeError(
                    f"{name} was not run: tools are not called while a rewind re-makes the agent's definitions"
                )
            if watch.answers:  # the first final answer ended the step: nothing runs after it
                raise RuntimeError(f"{name} was not run: the step already gave its final answer")
            with capture_output(printed):
                result = tool(*call_args, **call_kwargs)
            if name == "final_answer":
                watch.answers[cid] = result
            else:
                out.append(self._pickle_result(result))
                reply["value"] = 0
        except Exception as exc:
            reply = {"t": "tool_result", "cid": cid, "ok": False, "type": type(exc).__name__, "message": str(exc)}
        finally:
            watch.add_tool_time(time.monotonic() - started)
        reply["printed"] = printed.getvalue()
        reply["budget"] = watch.budget.told()  # what the worker may still send in this call
        limit = max(watch.deadline or 0.0, time.monotonic() + 5.0)  # the worker is waiting for this answer
        process.channel.send(reply, out, deadline=limit)

    def _pickle_result(self, result: Any) -> bytes:
        try:
            return self._pickle(result)
        except Exception:
            return self._pickle(str(result))


#: An error message is cut like printed output, but never below this (the error's type and line stay readable).
_MIN_MESSAGE_CHARS = 2_000

_ERROR_CLASSES = frozenset(
    {"ExecutionError", "PolicyError", "ExecutionStopped", "ExecutionTimeout", "OperationLimitExceeded"}
)


def _tell_known(channel: Channel, known: unchanged.Known | None) -> None:
    """The worker's first frame: the kernel's pages it need not search (unchanged.py); it waits for this one."""
    header = {"t": "known"} if known is None else {"t": "known", "epoch": known.epoch, "since": known.since}
    with contextlib.suppress(OSError):  # a worker dead already: _await_ready says so
        channel.send(header, [spans.to_bytes(known.clean)] if known is not None else [])


def _values_told(header: dict, buffers: list) -> frozenset[bytes] | None:
    """The values a starting worker searches for (sent before its search, before any agent code): for the ledger."""
    if header.get("t") != "values":
        return None
    return frozenset(bytes(buffer) for buffer in buffers)


class _CrashedAtStart(errors.ExecutionError):
    """The worker died of a signal before it was ready: no code of the agent's had run."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(f"ExecutionError: the worker process crashed while starting ({signal_name})")
        self.signal_name = signal_name


def _makes_handles(values: dict[str, Any]) -> bool:
    return any(isinstance(value, (RemoteFunction, RemoteClass)) for value in values.values())


def _warnings(sent: Any) -> list[str]:
    """The warnings a worker says its code raised: at most ``MAX_WARNINGS`` (+1 for the count of the rest) lines of
    bounded text; anything else it sends is no warning. A hostile worker can put words there, never more."""
    if not isinstance(sent, list):
        return []
    lines = [line for line in sent[: MAX_WARNINGS + 1] if isinstance(line, str)]
    return [line if len(line) <= MAX_WARNING_CHARS else line[: MAX_WARNING_CHARS - 1] + "…" for line in lines]


def _jsonable(value: Any) -> Any:
    import json

    return json.loads(json.dumps(value, default=str))


def _within(path: Any, root: str) -> bool:
    path, root = os.path.realpath(os.fspath(path)), os.path.realpath(os.path.expanduser(root))
    return path == root or path.startswith(root.rstrip("/") + "/")


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
