"""The sandbox policy: every rule about what agent code may do, in one place.

The code a language model writes runs natively, in the notebook's namespace. These rules protect the kernel from a
mistaken or prompt-injected model; the other modules of this package only *enforce* them:

* ``rewrite.py`` applies the static rules while rewriting the code (names, attribute names, binding forms),
* ``guards.py`` and ``modules.py`` apply the runtime rules (imports, ``getattr``-style access, module attributes,
  allocation sizes, file paths),
* ``limits.py`` enforces the limits (time, operations, recursion, memory, print output).

Summary of the rules
--------------------
1. **Imports** come from an allow-list: :data:`BASE_BUILTIN_MODULES` plus the user's ``additional_authorized_imports``
   (``"pkg"`` and ``"pkg.*"`` grant a package and its submodules, ``"*"`` grants everything). Modules in
   :data:`NEVER_IMPORTABLE` stay refused even then: they spawn processes, execute code, unpickle, walk frames, or
   could change the sandbox itself. A module reached as an attribute of another module is checked the same way.
2. **Builtins**: :data:`FORBIDDEN_BUILTINS` are unavailable; :data:`GUARDED_BUILTINS` are replaced by checked versions.
3. **Attributes**: names in :data:`INTROSPECTION_ATTRIBUTES` are refused, and so are dunder names except the harmless
   :data:`READABLE_DUNDERS`. Other names starting with ``_`` are allowed only on objects defined in the notebook
   itself (the agent's or the user's own classes, instances and functions) and for the namedtuple API. The same rules
   apply to ``getattr``/``setattr``/``delattr``/``hasattr``, to ``str.format`` field paths and to
   ``operator.attrgetter``/``methodcaller``. Attributes of modules, and of classes not defined in the notebook, are
   read-only.
4. **Per-module rules** (:data:`DENIED_MODULE_ATTRIBUTES`) apply *even when the module is authorized*: no process
   spawning, no environment variables, no unpickling, nothing that runs code later (event-loop callbacks, accessors
   registered on library classes); no pandas ``eval`` or Styler, ``query`` only in a safe subset, and strings in
   pandas' dispatching methods only for :data:`PANDAS_STRING_FUNCTIONS`.
5. **Tools and protected names** (``final_answer``, the tools, ``additional_functions``) cannot be bound by any form,
   and tool objects are exposed only through read-only proxies.
6. **The notebook**: IPython internals (:func:`is_ipython_internal`) and modules (or functions and classes of modules)
   the user imported but the agent was not granted are invisible to agent code.
7. **Resources**: see the ``DEFAULT_*`` limits below; single allocations are bounded by ``max_allocation_bytes`` and
   big-integer results by :data:`MAX_INT_BITS`.
8. **The write-back** (isolated executor): the worker never binds, in the notebook, a name that shadows a builtin, one
   of IPython's own names or a module the user imported (:func:`writeback_refusal`); the value stays in the worker.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .frontend import FRONTEND_ATTRIBUTES

# --- 1. imports ---------------------------------------------------------------------------------------------------

#: smolagents' base set, always authorized.
BASE_BUILTIN_MODULES: tuple[str, ...] = (
    "collections",
    "datetime",
    "itertools",
    "math",
    "queue",
    "random",
    "re",
    "stat",
    "statistics",
    "time",
    "unicodedata",
)

#: Refused even when authorized (also with ``"*"``); a dotted entry also covers its submodules.
# fmt: off
NEVER_IMPORTABLE: frozenset[str] = frozenset(
    {
        # processes, threads, signals, code that runs after the call
        "subprocess", "_posixsubprocess", "multiprocessing", "_multiprocessing", "concurrent", "threading",
        "_thread", "signal", "_signal", "pty", "pexpect", "atexit", "weakref", "_weakref", "faulthandler", "sched",
        "webbrowser", "asyncio.subprocess",
        # raw OS access behind the os module"s back, native code
        "posix", "nt", "_posixshmem", "resource", "_ctypes", "ctypes", "cffi", "_cffi_backend",
        # executing or compiling code, unpickling, introspection of frames and objects
        "builtins", "__builtin__", "__main__", "importlib", "imp", "pkgutil", "zipimport", "runpy", "code", "codeop",
        "compileall", "py_compile", "pdb", "bdb", "trace", "dis", "inspect", "gc", "marshal", "pickle", "_pickle",
        "pickletools", "shelve", "copyreg", "dill", "cloudpickle", "joblib", "_xxsubinterpreters", "_interpreters",
        "site", "sysconfig", "ensurepip", "venv", "pip", "setuptools", "distutils", "pydoc", "idlelib", "tkinter",
        "readline", "rlcompleter", "_testcapi", "_testinternalcapi",
        # the host: the kernel, the notebook server, this library
        "IPython", "ipykernel", "jupyter_client", "jupyter_core", "jupyter_server", "zmq", "tornado", "nbagent",
        "smolagents",
        # escape hatches inside otherwise harmless packages
        "numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing", "numpy.lib.format", "pandas.io.pickle",
        "pandas.core.computation", "pandas.compat.pickle_compat", "pandas.io.pytables", "pandas.testing",
        "pandas.core.apply", "pandas.io.formats.style", "pandas.io.formats.style_render",  # string dispatch, Styler
        "torch.hub", "torch.utils.cpp_extension", "torch.package", "torch.multiprocessing",
    }
)
# fmt: on


def _prefixes(module_name: str) -> Iterable[str]:
    parts = module_name.split(".")
    return (".".join(parts[: i + 1]) for i in range(len(parts)))


def never_importable(module_name: str) -> bool:
    return any(prefix in NEVER_IMPORTABLE for prefix in _prefixes(module_name))


def is_import_authorized(module_name: str, authorized: Iterable[str]) -> bool:
    """True if ``module_name`` may be imported given the effective allow-list ``authorized``."""
    if never_importable(module_name):
        return False
    granted = set(authorized)
    if "*" in granted:
        return True
    return any(prefix in granted or f"{prefix}.*" in granted for prefix in _prefixes(module_name))


def grant_hint(module_name: str, executor: str = "LocalPythonExecutor") -> str:
    """How to grant `module_name`, naming the executor the code runs in (`executor`: its class name)."""
    return (
        f"To grant it, add it to `additional_authorized_imports`: CodeAgent(additional_authorized_imports="
        f"[{module_name!r}]) (the agent's {executor}) or `%%agent --imports {module_name}`."
    )


def import_refusal(module_name: str, authorized: Iterable[str], executor: str = "LocalPythonExecutor") -> str:
    if never_importable(module_name):
        return f"Import of {module_name} is not allowed: this module is never available to agent code."
    allowed = ", ".join(sorted(set(authorized)))
    return f"Import of {module_name} is not allowed. Authorized imports: {allowed}. {grant_hint(module_name, executor)}"


# --- 2. builtins --------------------------------------------------------------------------------------------------

#: Builtins agent code cannot use, with the reason shown to the model.
FORBIDDEN_BUILTINS: dict[str, str] = {
    "eval": "executes code outside the sandbox",
    "exec": "executes code outside the sandbox",
    "compile": "creates code outside the sandbox",
    "globals": "exposes the sandbox internals",
    "locals": "exposes the sandbox internals",
    "vars": "exposes object internals (use attributes directly)",
    "breakpoint": "would block the kernel",
    "input": "would block the kernel waiting for keyboard input",
    "help": "is interactive",
    "get_ipython": "gives access to the IPython shell, outside the sandbox",
    "exit": "would stop the kernel",
    "quit": "would stop the kernel",
    "copyright": "is interactive",
    "credits": "is interactive",
    "license": "is interactive",
    "memoryview": "exposes raw memory",
    "open": "reads and writes files; file access requires authorizing 'io' (or pathlib)",
}

#: Builtins replaced by checked versions (see guards.py). ``open`` is only available when ``io`` is authorized.
GUARDED_BUILTINS: frozenset[str] = frozenset({"getattr", "setattr", "delattr", "hasattr", "pow", "open"})

#: Dunder names agent code may *read* as plain names.
READABLE_DUNDER_NAMES: frozenset[str] = frozenset({"__name__", "__doc__", "__debug__"})

# --- 3. attributes ------------------------------------------------------------------------------------------------

#: Introspection attributes without underscores that lead to frames, code objects and globals.
# fmt: off
INTROSPECTION_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended", "cr_frame", "cr_code", "cr_await",
        "cr_origin", "cr_running", "cr_suspended", "ag_frame", "ag_code", "ag_await", "ag_running", "f_back",
        "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "f_trace_lines", "f_trace_opcodes", "f_lasti",
        "f_lineno", "f_generator", "tb_frame", "tb_next", "tb_lasti", "tb_lineno", "co_code", "co_consts",
        "co_names", "co_varnames", "co_cellvars", "co_freevars", "co_filename", "co_name", "co_qualname",
        "co_firstlineno", "co_lnotab", "co_linetable", "co_exceptiontable", "co_flags", "co_argcount",
        "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_stacksize", "co_positions", "co_lines",
        "codeobj", "func_globals", "func_code", "func_closure", "func_defaults", "func_dict", "im_func", "im_self",
        "im_class", "cell_contents",
    }
)
# fmt: on

#: Dunder attributes agent code may read: descriptive strings and the ordinary protocol methods, whose results
#: give no more power than the corresponding syntax. Notably absent: ``__dict__``, ``__globals__``, ``__code__``,
#: ``__closure__``, ``__self__``, ``__func__``, ``__subclasses__``, ``__bases__``, ``__mro__``, ``__getattribute__``,
#: ``__setattr__``, ``__reduce__``, ``__builtins__``, ``__traceback__``, ``__mul__``/``__pow__`` (allocation guard).
# fmt: off
READABLE_DUNDERS: frozenset[str] = frozenset(
    {
        "__name__", "__qualname__", "__doc__", "__module__", "__version__", "__class__", "__annotations__",
        "__init__", "__new__", "__post_init__", "__init_subclass__", "__set_name__", "__class_getitem__", "__call__", "__members__", "__match_args__", "__slots__",
        "__len__", "__iter__", "__next__", "__reversed__", "__contains__", "__getitem__", "__setitem__",
        "__delitem__", "__missing__", "__repr__", "__str__", "__format__", "__hash__", "__bool__", "__eq__",
        "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__",
        "__isub__", "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__",
        "__ifloordiv__", "__mod__", "__rmod__", "__imod__", "__neg__", "__pos__", "__abs__", "__invert__",
        "__and__", "__rand__", "__iand__", "__or__", "__ror__", "__ior__", "__xor__", "__rxor__", "__ixor__",
        "__rshift__", "__rrshift__", "__irshift__", "__matmul__", "__rmatmul__", "__imatmul__", "__divmod__",
        "__rdivmod__", "__int__", "__float__", "__complex__", "__index__", "__round__", "__floor__", "__ceil__",
        "__trunc__", "__cause__", "__context__", "__notes__", "__suppress_context__", "__enter__", "__exit__", "__aenter__", "__aexit__", "__await__", "__aiter__", "__anext__",
    }
)
# fmt: on

#: Dunders a class body defined by agent code may not define: ``__del__`` would run code after the call returned.
FORBIDDEN_CLASS_DUNDERS: frozenset[str] = frozenset({"__del__", "__class__", "__dict__", "__builtins__"})

#: Underscore attributes that are public API (namedtuple).
PUBLIC_UNDERSCORE_ATTRIBUTES: frozenset[str] = frozenset({"_asdict", "_replace", "_fields", "_field_defaults", "_make"})

#: Attribute names whose *value* is checked at run time because they are dangerous only on some objects:
#: ``str.format``/``format_map`` walk attribute paths; pandas ``eval``/``query`` resolve ``@names`` in the caller's
#: frame, its dispatching methods look strings up as attributes, its Styler (and ``to_latex``'s formatters) apply
#: ``str.format`` templates to the cells (see pandas_calls.py).
_CHECKED_FOR_STRINGS = frozenset(
    {"format", "format_map", "eval", "query", "style", "agg", "aggregate", "apply", "transform", "pivot_table",
     "crosstab", "to_latex"}
)  # fmt: skip
#: ... and the methods of live widgets, comms and the kernel's objects (frontend.py: the page is the person's).
RUNTIME_CHECKED_ATTRIBUTES: frozenset[str] = _CHECKED_FOR_STRINGS | FRONTEND_ATTRIBUTES


_DISPLAY_HOOK = re.compile(r"_repr_\w*_|_ipython_\w*_|_mime\w*_")


def is_display_hook(name: str) -> bool:
    """IPython display hooks: HTML/JavaScript they return runs in the (trusted) notebook frontend, which can send
    code to the kernel, so agent code may not define them (library objects keep theirs)."""
    return bool(_DISPLAY_HOOK.fullmatch(name))


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def attribute_refusal(name: str, *, store: bool = False) -> str | None:
    """Why ``obj.<name>`` is refused whatever ``obj`` is, or None if it may be allowed (possibly after a runtime check)."""
    if name in INTROSPECTION_ATTRIBUTES:
        return f"access to attribute {name!r} is not allowed: it exposes interpreter internals (frames, code, globals)"
    if store and is_display_hook(name):
        return f"setting the IPython display hook {name!r} is not allowed: its output would run in the browser"
    if is_dunder(name):
        if store:
            return f"assigning or deleting the special attribute {name!r} is not allowed"
        if name not in READABLE_DUNDERS:
            return f"Forbidden access to dunder attribute: {name} (special attributes are not available to agent code)"
    return None


def is_private(name: str) -> bool:
    """Underscore names that are allowed only on the notebook's own objects."""
    return name.startswith("_") and not is_dunder(name) and name not in PUBLIC_UNDERSCORE_ATTRIBUTES


# --- 4. per-module rules (apply even when the module is authorized) ------------------------------------------------

_OS_PROCESS_AND_ENV = (
    "system popen spawnl spawnle spawnlp spawnlpe spawnv spawnve spawnvp spawnvpe execl execle execlp execlpe execv "
    "execve execvp execvpe fork forkpty posix_spawn posix_spawnp kill killpg abort _exit environ environb getenv "
    "getenvb putenv unsetenv register_at_fork startfile plock setuid setgid seteuid setegid setreuid setregid "
    "setresuid setresgid setgroups initgroups setsid setpgid setpgrp chroot nice pidfd_open wait wait3 wait4 waitpid "
    "waitid sched_setaffinity sched_setscheduler sched_setparam add_dll_directory"
)

#: module name -> attribute names refused even when the module is authorized.
DENIED_MODULE_ATTRIBUTES: dict[str, frozenset[str]] = {
    "os": frozenset(_OS_PROCESS_AND_ENV.split()),
    "sys": frozenset(
        "modules settrace setprofile gettrace getprofile setrecursionlimit exit meta_path path_hooks "
        "path_importer_cache path excepthook displayhook breakpointhook unraisablehook addaudithook audit "
        "call_tracing setswitchinterval setdlopenflags monitoring activate_stack_trampoline "
        "deactivate_stack_trampoline remote_exec last_traceback last_value last_type last_exc stdin "
        "set_asyncgen_hooks set_coroutine_origin_tracking_depth".split()
    ),
    "types": frozenset("CodeType FunctionType LambdaType FrameType TracebackType CellType new_class".split()),
    "string": frozenset({"Formatter"}),
    "numpy": frozenset({"NpzFile", "memmap"}),
    "numpy.lib.npyio": frozenset({"NpzFile"}),
    "numpy.lib.stride_tricks": frozenset({"as_strided"}),  # reads and writes arbitrary process memory
    "pandas": frozenset({"read_pickle", "eval", "HDFStore", "read_hdf"}),
    "pandas.api.extensions": frozenset(
        {
            "register_dataframe_accessor",
            "register_series_accessor",
            "register_index_accessor",
            "register_extension_dtype",
        }
    ),
    "asyncio": frozenset(
        "create_subprocess_exec create_subprocess_shell to_thread run_coroutine_threadsafe get_event_loop "
        "new_event_loop set_event_loop get_running_loop set_event_loop_policy get_event_loop_policy".split()
    ),
    "logging": frozenset({"StrFormatStyle", "Formatter"}),
    "torch": frozenset({"hub"}),
    "shutil": frozenset({"register_unpack_format", "register_archive_format"}),
}

#: Builtins that must never reach agent code, even as attributes of a module or values in the namespace.
# fmt: off
DANGEROUS_CALLABLES: tuple[tuple[str, str], ...] = (
    ("builtins", "eval"), ("builtins", "exec"), ("builtins", "compile"), ("builtins", "__import__"),
    ("builtins", "globals"), ("builtins", "locals"), ("builtins", "vars"), ("builtins", "breakpoint"),
    ("builtins", "input"), ("builtins", "getattr"), ("builtins", "setattr"), ("builtins", "delattr"),
    ("builtins", "hasattr"), ("builtins", "open"), ("io", "open"), ("os", "system"), ("os", "popen"),
    ("os", "execv"), ("os", "execve"), ("os", "fork"), ("os", "kill"), ("os", "getenv"), ("os", "putenv"),
    ("subprocess", "Popen"), ("subprocess", "run"), ("subprocess", "call"), ("subprocess", "check_output"),
    ("pickle", "loads"), ("pickle", "load"), ("pickle", "Unpickler"), ("marshal", "loads"),
    ("importlib", "import_module"), ("operator", "attrgetter"), ("operator", "methodcaller"),
)
# fmt: on

#: Module attributes that are looked up live (not snapshot into the read-only module view): what nbagent swaps per
#: step (a step's ``print`` target, and the ``plt.show`` that gives a step its own figures).
LIVE_MODULE_ATTRIBUTES: dict[str, frozenset[str]] = {
    "sys": frozenset({"stdout", "stderr"}),
    "matplotlib.pyplot": frozenset({"show"}),
}


def module_attribute_refusal(module_name: str, attribute: str) -> str | None:
    denied = DENIED_MODULE_ATTRIBUTES.get(module_name)
    if denied and attribute in denied:
        return f"'{module_name}.{attribute}' is not available to agent code, even when {module_name!r} is authorized"
    return None


#: Functions pandas' dispatching methods (``agg``, ``apply``, ``transform``, ``pivot_table(aggfunc=)``...) may name by
#: a string: plain reductions and transforms. Any other string is looked up as an attribute of the object (``"eval"``,
#: ``"to_pickle"``, ``"_mgr"``) or of numpy, so it is refused (pandas_calls.py).
# fmt: off
PANDAS_STRING_FUNCTIONS: frozenset[str] = frozenset(
    {
        "sum", "mean", "median", "min", "max", "count", "size", "std", "var", "sem", "prod", "product", "first",
        "last", "nunique", "cumsum", "cumprod", "cummin", "cummax", "cumcount", "idxmin", "idxmax", "any", "all",
        "mode", "quantile", "describe", "rank", "pct_change", "diff", "shift", "abs", "round", "skew", "kurt",
        "head", "tail", "unique", "value_counts", "ngroup", "ffill", "bfill", "ohlc", "nth", "corr", "cov",
    }
)
#: What a ``DataFrame.query`` expression may use besides columns, literals and operators.
PANDAS_QUERY_METHODS: frozenset[str] = frozenset(
    {
        "contains", "startswith", "endswith", "match", "fullmatch", "lower", "upper", "strip", "len", "isin",
        "between", "isna", "notna", "isnull", "notnull",
    }
)
PANDAS_QUERY_ATTRIBUTES: frozenset[str] = PANDAS_QUERY_METHODS | frozenset(
    {"str", "dt", "year", "month", "day", "hour", "minute", "second", "dayofweek", "weekday", "quarter", "date"}
)
# fmt: on


def pandas_dispatch_refusal(method: str, name: str) -> str:
    shown = ", ".join(sorted(PANDAS_STRING_FUNCTIONS & {"sum", "mean", "count", "min", "max", "median", "nunique"}))
    return (
        f"pandas' {method}({name!r}) is not allowed: a string may only name a plain reduction or transform "
        f"({shown}, ...); pass a function instead, e.g. .{method}(sum) or .{method}(lambda s: ...)"
    )


# --- 5/6. names: tools, the notebook ------------------------------------------------------------------------------

_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "_ih", "_oh", "_dh", "_", "__", "___"})
_IPYTHON_PATTERN = re.compile(r"_i{0,3}\d*")


def is_ipython_internal(name: str) -> bool:
    """IPython's bookkeeping names (``In``, ``Out``, ``_``, ``_i3``, ``_12``...)."""
    return name in _IPYTHON_NAMES or bool(_IPYTHON_PATTERN.fullmatch(name))


def is_rebindable_underscore(name: str) -> bool:
    """IPython names that agent code may still use as its own throwaway variables (``for _ in ...``)."""
    return name in {"_", "__", "___"}


# --- 7. resources -------------------------------------------------------------------------------------------------

DEFAULT_TIMEOUT_SECONDS = 30
DEFAULT_MAX_OPERATIONS = 100_000_000  # loop iterations + function calls
DEFAULT_MAX_RECURSION = 1000  # nested Python calls below the call's own frame
DEFAULT_MAX_PRINT_OUTPUTS_LENGTH = 50_000  # characters of captured print output
DEFAULT_MAX_ALLOCATION_BYTES = 256 * 2**20  # one ``*``, ``**``, ``<<`` or repeat result
DEFAULT_MAX_MEMORY_BYTES = 8 * 2**30  # extra address space during a call (Linux, RLIMIT_AS)
MAX_INT_BITS = 8_000_000  # big-integer results of ``**`` (computing larger ones blocks the kernel uninterruptibly)
MAX_FACTORIAL_ARGUMENT = 200_000  # math.factorial / comb / perm arguments, same reason

#: Files no authorized reader (pandas, numpy, ``open``) may read: environment variables and credentials.
SECRET_PATH_PATTERNS: tuple[str, ...] = (
    r"^/proc/",
    r"^/sys/",
    r"(^|/)\.ssh(/|$)",
    r"(^|/)\.aws(/|$)",
    r"(^|/)\.gnupg(/|$)",
    r"(^|/)\.netrc$",
    r"(^|/)\.pgpass$",
    r"(^|/)\.env(\.|$)",
    r"(^|/)\.git-credentials$",
    r"(^|/)\.docker/config\.json$",
    r"(^|/)\.kube/",
    r"(^|/)\.config/gcloud/",
    r"(^|/)\.cache/huggingface/token$",
    r"(^|/)\.huggingface/token$",
    r"(^|/)\.pypirc$",
    r"(^|/)\.npmrc$",
    r"(^|/)\.jupyter/",
    r"(^|/)\.local/share/jupyter/runtime/",
)
_SECRET_PATH = re.compile("|".join(SECRET_PATH_PATTERNS))


def secret_path_refusal(resolved_path: str) -> str | None:
    if _SECRET_PATH.search(resolved_path):
        return f"reading {resolved_path!r} is not allowed: it may hold secrets or environment variables"
    return None


def shared_name(name: Any) -> bool:
    """Names the notebook and the worker share: identifiers, not dunders, not IPython's own."""
    if type(name) is str:
        return _shared_text(name)  # asked of every name at every step: the answer is remembered
    return isinstance(name, str) and _shared_text(str(name))


@functools.lru_cache(maxsize=1 << 16)
def _shared_text(name: str) -> bool:
    if not name.isidentifier() or is_dunder(name):
        return False
    return not is_ipython_internal(name) and name not in ("In", "Out", "get_ipython", "exit", "quit")


# --- 8. the write-back: what the isolated worker may never bind in the notebook ------------------------------------

#: IPython's own names that are not bookkeeping patterns (``display`` is a builtin only inside IPython).
IPYTHON_OWN_NAMES = frozenset(
    {"display", "get_ipython", "In", "Out", "exit", "quit", "_ih", "_oh", "_dh", "_", "__", "___"}
)
_ABSENT = object()


def writeback_refusal(
    name: str, value: Any, notebook: Mapping, *, foreign: bool, hidden: Iterable[str] = ()
) -> str | None:
    """Why the worker's binding of ``name`` to ``value`` stays in the worker instead of ``notebook`` (None: it may be
    bound there). Such a binding would run the agent's code, or send the user's data to the worker, the next time the
    user types the name: a builtin (``print``, ``len``, ``open``), one of IPython's own names, a module the user
    imported. ``foreign`` is True for a value that lives in the worker (a function proxy, a handle).

    One exception: a name the user already bound to plain data of their own (``id = 3``) may receive plain data
    (never a function, class, module or handle): it is their variable, no longer the builtin."""
    import builtins
    import types

    if name in IPYTHON_OWN_NAMES or is_ipython_internal(name) or name in hidden:
        return f"{name} is one of IPython's own names"
    current = notebook.get(name, _ABSENT)
    if hasattr(builtins, name):
        plain = not foreign and not callable(value) and not isinstance(value, types.ModuleType)
        if current is _ABSENT or callable(current) or isinstance(current, types.ModuleType) or not plain:
            return f"it would shadow the builtin {name} in your notebook"
    if isinstance(current, types.ModuleType) and value is not current and not isinstance(value, types.ModuleType):
        return f"your notebook imported the module {getattr(current, '__name__', name)} as {name}"
    return None


def ipython_hidden_names(namespace: Mapping) -> frozenset[str]:
    """The names IPython keeps out of ``%who`` in ``namespace`` when it is the running shell's (else none)."""
    import sys

    module = sys.modules.get("IPython.core.getipython")
    try:
        shell = module.get_ipython() if module else None
    except Exception:
        return frozenset()
    if shell is None or getattr(shell, "user_ns", None) is not namespace:
        return frozenset()
    return frozenset(getattr(shell, "user_ns_hidden", None) or ())
