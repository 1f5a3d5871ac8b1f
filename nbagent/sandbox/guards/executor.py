"""LocalPythonExecutor: run model-written Python natively, in a shared namespace, closed and bounded.

The smolagents-compatible surface (``executor(code) -> CodeOutput``, ``send_tools``, ``send_variables``, ``state``)
over the pipeline *parse -> check -> rewrite -> compile -> run natively with guards*. See ``policy.py`` for the rules,
``rewrite.py`` for the transformation, ``guards.py``/``modules.py`` for the runtime checks and ``limits.py`` for how a
running call is stopped (timeout, :meth:`LocalPythonExecutor.request_stop`, operation budget) in the main thread or
in any other thread.

Differences from smolagents (on purpose): the code runs natively with full Python semantics; ``output`` is the value
of a trailing expression (like a notebook cell), not of the last statement; the namespace may be the notebook's own.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import linecache
import re
import threading
import types
import warnings
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    ExecutionError,
    ExecutionStopped,
    ExecutionTimeout,
    FinalAnswerException,
    OperationLimitExceeded,
    PolicyError,
    Refusal,
    SandboxInterrupt,
    timeout_message,
)
from ..wire.capabilities import Grant, RefusedCapability
from ..wire.changes import NamespaceSnapshot, is_mutable, referenced_names, users_code
from ..wire.codec import AgentValue
from ..wire.timeline import MISSING, Branch, Rewound, Snapshot, Timeline
from ..wire.visibility import Visibility, missing_name
from . import policy
from .capture import CappedBuffer, WarningLog, capture_output, capture_warnings
from .copies import InputCopies
from .limits import PROTECTED_CODES, CallState, interrupts, process_limits
from .policy import shared_name
from .rewrite import WRAPPER_NAME, RewriteContext, StaticRefusal, rewrite
from .runtime import Guards, ToolProxy

_QUALNAME_PREFIX = f"{WRAPPER_NAME}.<locals>."
_executor_ids = itertools.count(1)


@dataclass
class CodeOutput:
    """What a call produced: the trailing expression's value (or the final answer), the printed text, the
    matplotlib figures the code drew (PIL images; the isolated executor fills it, the local one leaves it empty)
    and the warnings it raised, one line each (kept out of ``logs``: a person reads them, the model does not).
    ``figures``: a summary per figure drawn, in the order of ``images`` (``nbagent.media.figures``: the marks it
    drew), filled like ``images``."""

    output: Any
    logs: str
    is_final_answer: bool
    images: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    figures: list = field(default_factory=list)


def _default_final_answer(answer: Any) -> Any:
    """Ends the step and returns ``answer`` as the final answer."""
    return answer


class LocalNotice(UserWarning):
    """Shown once per process when a LocalPythonExecutor is created."""


LOCAL_NOTICE = (
    "LocalPythonExecutor runs the agent's code inside this process: its checks protect against a mistaken model, "
    "not a hostile one (a prompt-injected model can get around them). Use IsolatedPythonExecutor "
    "(executor_type='isolated') for a process boundary with OS confinement."
)
_noticed: list[bool] = []


def _notice_once() -> None:
    if not _noticed:
        _noticed.append(True)
        warnings.warn(LOCAL_NOTICE, LocalNotice, stacklevel=3)


class PythonExecutor(ABC):
    """What runs an agent's code (smolagents' base class): ``send_tools``, ``send_variables``, ``__call__``.

    Both of nbagent's executors are one. Subclass it to run the code some other way and pass an instance as
    ``CodeAgent(executor=...)``: the loop calls the three methods below and ``request_stop`` (Stop, the step's
    deadline), and uses what else an executor offers only where it is there (``on_output`` for live prints,
    ``rewind``, ``grant`` for the permission asks, ``state``). A failing code raises an ``ExecutionError`` (smolagents'
    ``InterpreterError``), which the model is shown; a call of the ``final_answer`` tool gives
    ``CodeOutput(value, logs, is_final_answer=True)``. ``authorized_imports`` is what the system prompt offers
    (None: the agent's ``additional_authorized_imports`` over the usual base modules).
    """

    authorized_imports: list[str] | None = None

    @abstractmethod
    def send_tools(self, tools: Mapping[str, Callable]) -> None:
        """Make ``tools`` (the agent's, ``final_answer`` among them) callable by name from the code."""

    @abstractmethod
    def send_variables(self, variables: Mapping[str, Any]) -> None:
        """Make ``variables`` (the run's ``additional_args``) visible to the code."""

    @abstractmethod
    def __call__(self, code_action: str) -> CodeOutput:
        """Run ``code_action``; its value (or the final answer), the printed text, whether it answered."""

    def request_stop(self) -> None:
        """Ask a running call to stop (thread-safe). This default cannot: the call runs to its end."""
        return None


class LocalPythonExecutor(PythonExecutor):
    """Runs agent code natively with the sandbox policy, in this process; ``state`` is the (possibly shared) namespace.

    It protects against a mistaken model, not an attacker: in-process checks over an open object graph cannot be
    closed (see the issue tracker's security review). For untrusted models use :class:`IsolatedPythonExecutor`.

    Args:
        additional_authorized_imports: modules the code may import besides ``policy.BASE_BUILTIN_MODULES``
            (``"pkg"``/``"pkg.*"`` grant a package and its submodules, ``"*"`` everything not in the never-list).
        max_print_outputs_length: cap on captured print output (default 50,000 characters; the middle is cut).
        additional_functions: extra callables available by name (protected like tools).
        timeout_seconds: wall-clock limit per call (None: none).
        namespace: the namespace to run in, e.g. an IPython ``user_ns``; a new dict by default.
        max_operations: budget of loop iterations + function calls per call (None: none).
        max_recursion: nested Python calls allowed below the call (None: Python's limit).
        max_allocation_bytes: largest single ``*``/``**``/``<<`` result (None: unchecked).
        max_memory_bytes: extra address space a call may take (Linux; None: unlimited).
        on_output: called with printed text as the code produces it (also settable as an attribute).
        report_changes: after each call, ``last_changes`` lists the names it created, rebound, changed in place
            (when a container's shape, columns, length or keys show it) or deleted (see ``changes.py``).
        copy_inputs: the code works on copies of the namespace's objects, which stay untouched; names it creates
            are still bound there (see ``copies.py``). Settable as an attribute between calls.

    The isolated executor's refusals and grants have the same surface here, empty: this process has no OS confinement
    that could refuse the code a file or a connection (``last_refusals`` and ``grants`` stay ``[]``; ``grant()``
    raises). The attribute ``on_code_error`` (None, or a callable) is given the exception the code ended with, after
    the limits are lifted (the isolated worker reads what the OS refused from it).
    """

    def __init__(
        self,
        additional_authorized_imports: Any = (),
        max_print_outputs_length: int | None = None,
        additional_functions: Mapping[str, Callable] | None = None,
        timeout_seconds: float | None = policy.DEFAULT_TIMEOUT_SECONDS,
        namespace: dict | None = None,
        max_operations: int | None = policy.DEFAULT_MAX_OPERATIONS,
        max_recursion: int | None = policy.DEFAULT_MAX_RECURSION,
        max_allocation_bytes: int | None = policy.DEFAULT_MAX_ALLOCATION_BYTES,
        max_memory_bytes: int | None = policy.DEFAULT_MAX_MEMORY_BYTES,
        on_output: Callable[[str], None] | None = None,
        report_changes: bool = True,
        copy_inputs: bool = False,
    ) -> None:
        _notice_once()
        if isinstance(additional_authorized_imports, str):
            additional_authorized_imports = [additional_authorized_imports]
        self.additional_authorized_imports = list(additional_authorized_imports or ())
        self.authorized_imports = sorted(set(policy.BASE_BUILTIN_MODULES) | set(self.additional_authorized_imports))
        self.max_print_outputs_length = (
            policy.DEFAULT_MAX_PRINT_OUTPUTS_LENGTH if max_print_outputs_length is None else max_print_outputs_length
        )
        self.timeout_seconds = timeout_seconds
        self.max_operations = max_operations
        self.max_recursion = max_recursion
        self.max_allocation_bytes = max_allocation_bytes
        self.max_memory_bytes = max_memory_bytes
        self.state: dict = namespace if namespace is not None else {}
        self.state.setdefault("__name__", "__main__")
        self.state.setdefault("__builtins__", builtins)
        self.additional_functions = dict(additional_functions or {})
        self._id = next(_executor_ids)
        self._prefix = f"_nb{self._id}."
        self._guards = Guards(self.state, tuple(self.authorized_imports), max_allocation_bytes)
        self._tools: dict[str, Callable] = {}
        self._running = threading.Lock()
        self._call: CallState | None = None
        self._step = 0
        self._filenames: set[str] = set()
        self._risky = False  # the code has used a way to make classes without a class statement
        self._seen_classes: weakref.WeakSet = weakref.WeakSet()
        self.on_output: Callable[[str], None] | None = on_output
        self.report_changes = report_changes
        self.copy_inputs = copy_inputs
        self.last_changes: list[dict[str, Any]] = []
        self.last_refusals: list[RefusedCapability] = []  # always empty: nothing here is refused by the OS
        self.on_code_error: Callable[[BaseException], None] | None = None
        self._copies = InputCopies()
        self.timeline = Timeline(shared=shared_name)
        #: which of the namespace's names the code sees (wire/visibility.py); every name but credentials by default,
        #: the task's names when an agent says so (``share``)
        self.visibility: Visibility | None = Visibility(None)  # None in the isolated worker: its host decides
        self.send_tools({})

    # -- smolagents surface -------------------------------------------------------------------------------------------

    def send_tools(self, tools: Mapping[str, Callable]) -> None:
        """Make ``tools`` callable by name (read-only). Calling ``final_answer`` ends the call."""
        self._tools = dict(tools)
        callables = {"final_answer": _default_final_answer, **self.additional_functions, **self._tools}
        self._guards.tools = {
            name: ToolProxy(name, tool, self._guards, final=(name == "final_answer"))
            for name, tool in callables.items()
        }

    def send_variables(self, variables: Mapping[str, Any]) -> None:
        self.state.update(variables)

    def share(self, names: Any) -> None:
        """The namespace's names the code may see from now on: ``names`` (an iterable), or every name but credentials
        (None); the names the code creates are its own. A hidden name is asked for (``last_refusals``)."""
        self.visibility.share(names)

    @property
    def grants(self) -> list[Grant]:
        return [Grant("variable", name) for name in sorted(self.visibility.granted)]

    def grant(self, refused: RefusedCapability, scope: str = "run") -> Grant:
        """A hidden variable becomes visible (the only thing this executor can grant); ValueError for a credential."""
        if refused.kind == "variable":
            return grant_variable(self.visibility, self.state, refused, scope)
        raise RuntimeError(
            "LocalPythonExecutor has no OS confinement to widen: the code runs in this process with its powers "
            "(IsolatedPythonExecutor refuses files and connections and grants them)"
        )

    def revoke(self, grant: Grant) -> None:
        if grant.kind != "variable" or grant.target not in self.visibility.granted:
            raise ValueError(f"{grant.describe()} is not a grant in force")
        self.visibility.granted.discard(grant.target)

    def request_stop(self) -> None:
        """Thread-safe: stop the running call promptly; it raises ExecutionStopped. No effect when idle."""
        call = self._call
        if call is not None:
            call.request_stop()

    def __call__(self, code_action: str) -> CodeOutput:
        if not isinstance(code_action, str):
            raise TypeError(f"code must be a str, not {type(code_action).__name__}")
        if not self._running.acquire(blocking=False):
            raise RuntimeError("this executor is already running code (calls cannot overlap or nest)")
        self.last_changes = []
        self.last_refusals = []
        names_before = set(self.state)
        copying = self.copy_inputs
        if copying:
            self._copies.enter(self.state, code_action, shared_name)
        agents = (lambda name: name in self.visibility.created) if self.visibility is not None else (lambda name: False)
        before = NamespaceSnapshot(self.state, shared_name, code_action, agents) if self.report_changes else None
        bindings = self._bindings() if self.timeline.snapshots else None
        try:
            return self._run(code_action)
        except ExecutionError as failure:  # a hidden variable the code reached for: the loop may ask for it
            refused = self.visibility.refusal(missing_name(str(failure)), self.state) if self.visibility else None
            self.last_refusals = [refused] if refused is not None else []
            raise
        finally:
            if self.visibility is not None:
                self.visibility.created.update(n for n in self.state if n not in names_before and shared_name(n))
            try:
                if bindings is not None:
                    self._note_writes(bindings, code_action)
                changes = before.report(self.state) if before is not None else []
                kept = self._copies.leave(self.state, shared_name) if copying else set()
                self.last_changes = [dict(c, kept=True) if c["name"] in kept else c for c in changes]
            finally:
                self._running.release()

    # -- time travel (wire/timeline.py) ---------------------------------------------------------------------------

    def checkpoint(self, step_number: int) -> None:
        """Snapshot the namespace's bindings just before step ``step_number``'s code runs (see ``rewind``)."""
        self.timeline.checkpoint(step_number, self.state, {"used": set()})

    def rewind(self, step_number: int, keep: bool = True) -> Rewound:
        """Put the namespace's bindings back as they were before step ``step_number``: names created since are
        removed, rebound ones get their objects back (a name the notebook rebound since is left, and said). This
        executor runs the code on the objects themselves, so what the later steps may have changed in place is named
        as not restorable (the isolated executor, the default, restores those too)."""
        later = [s for s in self.timeline.snapshots if s.step >= step_number]
        outcome, snapshot = self.timeline.rewind(step_number, self.state, keep=keep)
        if snapshot is not None:
            self._name_in_place(snapshot, later, outcome)
        outcome.note = outcome.describe()
        return outcome

    def restore_branch(self, branch: Branch) -> Rewound:
        """Make a line an earlier rewind cut off live again (its bindings; the current line is cut off instead)."""
        back, _ = self.timeline.rewind(branch.start, self.state)
        outcome = self.timeline.graft(branch, self.state)
        outcome.step, outcome.found, outcome.branch = branch.start, True, back.branch
        outcome.kept.update(back.kept)
        if back.branch is not None and branch.snapshots:
            self._name_in_place(branch.snapshots[0], back.branch.snapshots, outcome)
        outcome.note = outcome.describe().replace(f"as they were before step {branch.start}", "as that run left them")
        return outcome

    def _bindings(self) -> dict[str, Any]:
        return {name: value for name, value in self.state.items() if shared_name(name)}

    def _note_writes(self, before: dict[str, Any], code: str) -> None:
        """The bindings the call changed are the agent's (a rewind undoes them); the names it used may have changed
        in place (a rewind names them)."""
        after = self._bindings()
        for name in set(before) | set(after):
            if before.get(name, MISSING) is not after.get(name, MISSING):
                self.timeline.wrote(name, after.get(name, MISSING))
        self.timeline.snapshots[-1].extra.setdefault("used", set()).update(referenced_names(code))

    def _name_in_place(self, base: Snapshot, later: list[Snapshot], outcome: Rewound) -> None:
        used = set().union(*(s.extra.get("used", set()) for s in later)) if later else set()
        for name in sorted(used):
            value = base.bindings.get(name, MISSING)
            if value is not MISSING and is_mutable(value) and name not in outcome.kept:
                outcome.unrestorable[name] = (
                    "later steps may have changed it in place, as the local executor runs the code on the objects "
                    "themselves; the isolated executor restores them"
                )

    # -- pipeline -----------------------------------------------------------------------------------------------------

    def _run(self, code: str) -> CodeOutput:
        self._step += 1
        filename = (
            f"<agent code, step {self._step}>" if self._id == 1 else f"<agent code {self._id}, step {self._step}>"
        )
        self._filenames.add(filename)
        if not self._risky and _CLASS_MAKING.search(code):
            self._risky = True
            self._seen_classes.update(_new_classes(self._seen_classes))
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        function, returns_value = self._compile(code, filename)
        return self._execute(function, returns_value, filename)

    def run_callable(
        self, function: Callable, args: tuple = (), kwargs: Mapping[str, Any] | None = None, *, contain: bool = True
    ) -> CodeOutput:
        """Call ``function(*args, **kwargs)`` (a function an earlier call defined) under the same limits as code;
        ``contain=False`` returns an agent-defined object itself (the isolated worker makes it a handle)."""
        if not self._running.acquire(blocking=False):
            raise RuntimeError("this executor is already running code (calls cannot overlap or nest)")
        try:
            self._step += 1
            kwargs = dict(kwargs or {})
            return self._execute(lambda: function(*args, **kwargs), True, f"<call {self._step}>", contain=contain)
        finally:
            self._running.release()

    def _execute(
        self, function: Callable[[], Any], returns_value: bool, filename: str, *, contain: bool = True
    ) -> CodeOutput:
        buffer = CappedBuffer(self.max_print_outputs_length, self.on_output)
        warned = WarningLog()
        budget_key = self._prefix + "R"
        call = CallState(
            timeout=self.timeout_seconds,
            max_operations=self.max_operations,
            namespace=self.state,
            budget_key=budget_key,
        )
        value: Any = None
        error: BaseException | None = None
        error_text = ""
        self._inject(call)
        self._guards.call = call
        self._call = call
        try:
            with (
                capture_output(buffer),
                capture_warnings(warned),
                process_limits(self.max_recursion, self.max_memory_bytes),
                interrupts(call),
            ):
                call.arm()
                try:
                    try:
                        value = function()
                        value = (self._contained(value) if contain else value) if returns_value else None
                    except BaseException as exc:  # every outcome of the agent code is reported
                        error = exc
                        error_text = _error_text(exc)  # str() of an agent exception runs here, under the limits
                    finally:
                        self._after_code()
                        call.disarm()
                # delivered between the code's end and disarm() (watchdog thread, or the alarm that re-raises a
                # final answer the code swallowed: it may land in _after_code's own loop)
                except (SandboxInterrupt, FinalAnswerException) as late:
                    call.disarm()
                    error, error_text = error or late, error_text or type(late).__name__
        finally:
            self._call = None
            self._guards.call = None
            self.state[budget_key] = itertools.repeat(True)
        if error is not None and self.on_code_error is not None:
            self.on_code_error(error)
        try:
            outcome = self._outcome(call, value, error, error_text, buffer.getvalue(), filename)
        except ExecutionError as failure:
            failure.warnings = warned.lines()
            raise
        outcome.warnings = warned.lines()
        return outcome

    def _contained(self, value: Any) -> Any:
        """Values of agent-defined classes never leave a call: they become their repr, computed here (under the
        limits), so the host's ``str(output)`` runs no agent code afterwards."""
        if _holds_agent_object(value, self._guards.is_notebook_class):
            return AgentValue(repr(value), str(value), _type_name(value))
        return value

    def _after_code(self) -> None:
        """Still under the limits: finalizers (``__del__``) that agent code slipped into classes through ``type``
        aliases, ``type.__new__`` or a metaclass ``__prepare__`` are removed before they could run later."""
        if not self._risky:
            return
        for cls in _new_classes(self._seen_classes):
            finalizer = _class_dict(cls).get("__del__")
            if isinstance(finalizer, types.FunctionType) and finalizer.__globals__ is self.state:
                type.__delattr__(cls, "__del__")
                print(
                    f"[sandbox] removed __del__ from class {type.__dict__['__name__'].__get__(cls)}: agent code cannot define finalizers"
                )

    def _compile(self, code: str, filename: str) -> tuple[types.FunctionType, bool]:
        try:
            tree = ast.parse(code, filename=filename)
            rewritten = rewrite(tree, self._context())
            try:
                module_code = compile(rewritten.tree, filename, "exec", flags=rewritten.flags, dont_inherit=True)
            except (TypeError, ValueError):  # a node the rewrite created without a position
                ast.fix_missing_locations(rewritten.tree)
                module_code = compile(rewritten.tree, filename, "exec", flags=rewritten.flags, dont_inherit=True)
        except SyntaxError as exc:
            raise ExecutionError(_syntax_message(exc, code), cause_type=type(exc).__name__, lineno=exc.lineno) from None
        except StaticRefusal as refusal:
            message = _located(code, refusal.lineno, None) + f"PolicyError: {refusal.message}"
            raise PolicyError(message, cause_type="PolicyError", lineno=refusal.lineno) from None
        except (ValueError, TypeError, RecursionError, MemoryError) as exc:  # e.g. absurdly nested code
            message = f"{type(exc).__name__}: the sandbox could not compile this code: {exc}"
            raise ExecutionError(message, cause_type=type(exc).__name__) from None
        wrapper = next(c for c in module_code.co_consts if isinstance(c, types.CodeType) and c.co_name == WRAPPER_NAME)
        return types.FunctionType(_strip_qualnames(wrapper), self.state, WRAPPER_NAME), rewritten.returns_value

    def _context(self) -> RewriteContext:
        ns, guards = self.state, self._guards
        guards.ipython_hidden = _ipython_hidden_names(ns)
        if self.visibility is not None:  # (the isolated worker's executor is told its hidden names by the host)
            guards.hidden_names = self.visibility.hidden(ns)
        hidden: dict[str, str] = {
            name: f"{name!r} is {why}; use another name" for name, why in guards.hidden_names.items()
        }
        modules: set[str] = set()
        for key, value in list(ns.items()):
            if not key.isidentifier() or policy.is_dunder(key):
                continue
            reason = guards.hidden_reason(key, value)
            if reason:
                hidden[key] = reason
            elif isinstance(value, types.ModuleType):
                modules.add(key)
        for key, source in list(guards.alias_sources.items()):
            if ns.get(key) is not source:
                del guards.alias_sources[key]
                guards.aliases.__dict__.pop(key, None)
        for key in modules:
            source = ns[key]
            guards.aliases.__dict__[key] = guards.views.view(source)
            guards.alias_sources[key] = source
        return RewriteContext(
            prefix=self._prefix,
            protected=frozenset(guards.tools),
            hidden=hidden,
            module_names=frozenset(modules),
            defined=lambda name: name in ns or hasattr(builtins, name),
            users_code=self._users_code(),
        )

    def _users_code(self) -> dict[str, str]:
        """The notebook's own functions and classes (not the agent's): the code may call them, never rebind them."""
        if self.visibility is None:  # in the isolated worker: the host keeps such a binding out of the notebook
            return {}
        created = self.visibility.created
        return {
            name: "class" if isinstance(value, type) else "function"
            for name, value in list(self.state.items())
            if name not in created and users_code(value)
        }

    def _inject(self, call: CallState) -> None:
        ns, prefix = self.state, self._prefix
        ns[prefix + "g"] = self._guards
        ns[prefix + "M"] = self._guards.aliases
        ns[prefix + "next"] = next
        ns[prefix + "compress"] = itertools.compress
        ns[prefix + "R"] = call.budget()
        self._guards.budget_key = prefix + "R"

    def _outcome(
        self, call: CallState, value: Any, error: BaseException | None, error_text: str, logs: str, filename: str
    ) -> CodeOutput:
        if call.user_interrupted:
            interrupt = KeyboardInterrupt()
            interrupt.logs = logs  # type: ignore[attr-defined]
            raise interrupt
        if call.pending == "final":
            return CodeOutput(output=call.final_value, logs=logs, is_final_answer=True)
        if type(error) is FinalAnswerException:  # raised outside an armed call: still an answer
            return CodeOutput(output=error.value, logs=logs, is_final_answer=True)
        if call.pending in ("timeout", "stop", "operations"):
            raise self._limit_error(call, error, logs, filename) from None
        if error is None:
            return CodeOutput(output=value, logs=logs, is_final_answer=False)
        where, lineno = self._where(error, filename)
        message = where + error_text + self._hint(error)
        error_class = PolicyError if isinstance(error, Refusal) else ExecutionError
        raise error_class(message, logs=logs, cause_type=_type_name(error), lineno=lineno) from None

    def _limit_error(self, call: CallState, error: BaseException | None, logs: str, filename: str) -> ExecutionError:
        where, lineno = self._where(error, filename) if error is not None else ("", None)
        if call.pending == "timeout":
            text = f"{timeout_message(self.timeout_seconds)}: it was stopped"
            return ExecutionTimeout(
                where + f"ExecutionTimeout: {text}", logs=logs, cause_type="ExecutionTimeout", lineno=lineno
            )
        if call.pending == "stop":
            text = f"the code was stopped on request after {call.elapsed():.1f} s"
            return ExecutionStopped(
                where + f"ExecutionStopped: {text}", logs=logs, cause_type="ExecutionStopped", lineno=lineno
            )
        text = (
            f"the code used more than max_operations={self.max_operations:,} loop iterations and function calls; "
            "is there an infinite loop?"
        )
        return OperationLimitExceeded(
            where + f"OperationLimitExceeded: {text}", logs=logs, cause_type="OperationLimitExceeded", lineno=lineno
        )

    def _hint(self, error: BaseException) -> str:
        if isinstance(error, RecursionError) and self.max_recursion is not None:
            return f" (the sandbox allows max_recursion={self.max_recursion} nested calls)"
        if isinstance(error, MemoryError) and not isinstance(error, Refusal) and self.max_memory_bytes is not None:
            return f" (the sandbox limits a call to max_memory_bytes={self.max_memory_bytes:,} of extra memory)"
        return ""

    def _where(self, error: BaseException, filename: str) -> tuple[str, int | None]:
        """Where the error happened in the agent's code (read from the traceback: no agent code runs)."""
        frames = []
        tb = error.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_filename in self._filenames:
                frames.append((code.co_filename, tb.tb_lineno, code.co_name))
            tb = tb.tb_next
        if not frames:
            return "", None
        first_file, first_line, _ = frames[0]
        text = _located_file(first_file, first_line, None)
        inner: list[tuple[tuple[str, int, str], int]] = []
        for frame in frames[1:]:  # collapse runs of the same frame (recursion)
            if inner and inner[-1][0] == frame:
                inner[-1] = (frame, inner[-1][1] + 1)
            else:
                inner.append((frame, 1))
        shown: list[tuple[tuple[str, int, str], int] | None] = list(inner)
        if len(shown) > 6:
            shown = shown[:2] + [None] + shown[-3:]
        for item in shown:
            if item is None:
                text += "  ...\n"
                continue
            (frame_file, line, name), count = item
            origin = "" if frame_file == filename else " (code from an earlier step)"
            label = "module level" if name == WRAPPER_NAME else f"{name}()"
            text += f"  which called {label}, line {line}{origin}:\n"
            text += f"    {linecache.getline(frame_file, line).strip()}\n"
            if count > 1:
                text += f"  [the same call repeated {count - 1} more times]\n"
        return text, first_line if first_file == filename else None


PROTECTED_CODES.add(LocalPythonExecutor._execute.__code__)

_CLASS_MAKING = re.compile(r"\btype\b|__new__|__prepare__|metaclass|__init_subclass__|__class__")
_CLASS_DICT = type.__dict__["__dict__"]
_TYPE_NAME = type.__dict__["__name__"]
_PLAIN_CONTAINERS = (list, tuple, set, frozenset, dict)


def grant_variable(visibility: Visibility, namespace: dict, refused: RefusedCapability, scope: str) -> Grant:
    """Make the hidden variable ``refused`` names visible; ValueError when it is never granted (a credential)."""
    asked = visibility.refusal(refused.target, namespace)
    if asked is None:
        raise ValueError(f"`{refused.target}` is no hidden variable of the notebook")
    if not asked.grantable:
        raise ValueError(f"{asked.describe()} is never granted: {asked.reason}")
    visibility.granted.add(refused.target)
    return Grant("variable", refused.target, scope)


def _class_dict(cls: type) -> Any:
    return _CLASS_DICT.__get__(cls)


def _type_name(obj: Any) -> str:
    return _TYPE_NAME.__get__(type(obj))


def _error_text(error: BaseException) -> str:
    try:
        text = str(error)
    except BaseException:  # a broken __str__, or an interrupt while it ran
        text = "<the exception's message could not be computed>"
    return f"{_type_name(error)}: {text}"


def _holds_agent_object(value: Any, is_agent_class: Callable[[Any], bool], depth: int = 0) -> bool:
    kind = type(value)
    if kind in _PLAIN_CONTAINERS and depth < 3:
        items = list(value.items()) if kind is dict else value
        return any(_holds_agent_object(item, is_agent_class, depth + 1) for item in itertools.islice(items, 1000))
    if kind is tuple:
        return False
    return any(is_agent_class(c) for c in type.__dict__["__mro__"].__get__(kind))


def _new_classes(seen: weakref.WeakSet) -> list[type]:
    """Every class not in ``seen`` (which is updated), found through the subclass lists from ``object`` down."""
    found: list[type] = []
    stack: list[type] = [object]
    visited: set[int] = set()
    while stack:
        cls = stack.pop()
        for sub in type.__subclasses__(cls) if cls is not type else type.__subclasses__(type):
            if id(sub) in visited:
                continue
            visited.add(id(sub))
            stack.append(sub)
            if sub not in seen:
                seen.add(sub)
                found.append(sub)
    return found


def _located(source: str, lineno: int | None, offset: int | None) -> str:
    if not lineno:
        return ""
    lines = source.splitlines()
    line = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
    text = f"Error on line {lineno} of the code:\n    {line.strip()}\n"
    if offset and line.strip():
        indent = len(line) - len(line.lstrip())
        text += "    " + " " * max(0, offset - 1 - indent) + "^\n"
    return text


def _located_file(filename: str, lineno: int, offset: int | None) -> str:
    return f"Error on line {lineno} of the code:\n    {linecache.getline(filename, lineno).strip()}\n"


def _syntax_message(exc: SyntaxError, code: str) -> str:
    return _located(code, exc.lineno, exc.offset) + f"{type(exc).__name__}: {exc.msg}"


def _strip_qualnames(code: types.CodeType) -> types.CodeType:
    """Functions defined at module level must not be qualified with the wrapper's name (reprs, pickling)."""
    consts = tuple(
        _strip_qualnames(c)
        if isinstance(c, types.CodeType)
        else c[len(_QUALNAME_PREFIX) :]
        if isinstance(c, str) and c.startswith(_QUALNAME_PREFIX)
        else c
        for c in code.co_consts
    )
    changes: dict[str, Any] = {}
    if consts != code.co_consts:
        changes["co_consts"] = consts
    qualname = getattr(code, "co_qualname", "")
    if qualname.startswith(_QUALNAME_PREFIX):
        changes["co_qualname"] = qualname[len(_QUALNAME_PREFIX) :]
    return code.replace(**changes) if changes else code


def _ipython_hidden_names(ns: dict) -> frozenset[str]:
    if "_ih" not in ns and "get_ipython" not in ns:
        return frozenset()
    names = {key for key in ns if policy.is_ipython_internal(key)}
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None and getattr(shell, "user_ns", None) is ns:
        names.update(key for key in getattr(shell, "user_ns_hidden", {}) if key in ns)
    names.update({"In", "Out", "get_ipython", "exit", "quit"} & set(ns))
    return frozenset(names)
