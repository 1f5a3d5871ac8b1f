"""The kernel's secrets, out of the forked worker (run in the worker, before any agent code, before Landlock).

The worker is a copy of the kernel's memory. Before the agent's code runs, :func:`scrub` takes out of it what the
kernel holds for itself, in two passes:

1. **References** are cleared where they live, through the objects' own machinery (traitlets' setters, not
   ``__dict__``): every ``jupyter_client`` ``Session`` (``key = b""``, which drops the HMAC object ``auth``), the
   kernel app's connection file, ports and ``argv``; ``sys.argv``/``sys.orig_argv``; the input/output history
   (``In``, ``Out``, ``_ih``, ``_oh``, ``_``, ``_iN``, ``_N``, the history manager's caches and database connection,
   the cells' sources in ``linecache``, the last execution result) -- always: the agent's code never had these names
   (they are IPython's own, hidden by the guards and never shared), so nothing it may do is lost; the credentials of
   the API clients we know (nbagent's models, ``openai``, ``httpx``, ``requests``, ``huggingface_hub``): their key,
   token, auth and secret-named header fields, found (only when one of those libraries is loaded) by one pass of the
   collector over the kernel's objects (``gc.get_referrers`` of the classes).
2. **Copies** are overwritten: each secret value found above (and each secret-named environment variable's value but
   a path's, :data:`PLACE_NAME`, and the texts of the user's credential variables the agent was not given:
   ``credentials``) is searched through the worker's private writable memory and masked in place (:mod:`wipe`), so
   freed buffers, derived strings (``"Bearer <key>"``) and the message buffers that carried it are blank too. The
   search never writes the memory of the data the agent can see (:func:`wipe.visible_buffers`: the texts, arrays and
   frame columns its namespace holds), so a secret's equal in the user's data is the user's data there and stays as
   it is: the scrub never changes data. Nor does it read a loaded model's weights and caches (:mod:`model_memory`:
   what a model's load mapped anew, while the model is loaded): numbers from a public file, 1.3 GB of the default
   model's, which took 0.64 s of each start with two secrets to mask (0.10 s without them). Nor, in a kernel whose
   memory the ledger watches (unchanged.py: from 160 MiB resident outside its namespace's arrays), the pages an earlier
   worker found free of these values that the kernel has not written since.

What stays readable: a secret equal to a value the agent's namespace holds (there, not elsewhere; in a namespace
larger than the walk that finds those values, :data:`wipe._MAX_WALKED` objects, one beyond it is masked instead in
the worker's copy: the walk can only keep memory out of the mask, never leave a secret readable), a secret never
found as a value (a credential object of a library not listed, a history line that does not look like a credential),
a copy another thread of the kernel's made into memory mapped beside a model's while it loaded, a value shorter than
:data:`MIN_SECRET_LENGTH` (the user's credentials: :data:`MIN_CREDENTIAL_LENGTH`, and shorter ones are overwritten in
place where only their name held them), a copy in another encoding (a UTF-16/32 string), derived state that is
not the secret's bytes (hash midstates), and, in a kernel whose memory the ledger watches, a copy a device wrote into
a buffer pinned for direct I/O after an earlier worker searched it (unchanged.py).

Cost, per worker start (``benchmarks/isolation.py scrub``, a real kernel on the quiet 2-core machine): 47 ms in a
plain one (numpy, pandas), of which the collector's pass 15 ms (a kernel always has jupyter_client's ``Session``
loaded) and the memory pass 27 ms; 85 ms in one holding 2 GiB of frames and 1M small objects (the frames' buffers
and a ``RangeIndex`` are not read; the small objects' heap is searched, 20-35 ms per value per 100 MB; the
namespace's walk stops at ``wipe._MAX_WALKED`` objects, where it took 2.8 s for the million); 97 ms in one that
allocated and freed 1 GB (freed pages are given back in the worker's copy, not searched: 320 ms before). Both
passes grow with the kernel: the collector's with its objects, the memory pass with its live heap times the values
found -- a test process holding a million objects, 1 GB of heap and five keys paid 1-5 s per start. The report
(``executor.confinement["kernel_secrets"]``) gives each part's cost.
"""

from __future__ import annotations

import functools
import gc
import re
import sys
import time
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from . import unchanged, wipe
from .model_memory import model_memory
from .unchanged import Known

#: Attribute, header and environment names whose values are credentials.
SECRET_NAME = re.compile(
    r"api[-_]?key|access[-_]?key|private[-_]?key|^_?key$|secret|token|passw|credential|auth|cookie|bearer",
    re.IGNORECASE,
)
#: Shorter values are not searched through memory (they would match unrelated bytes).
MIN_SECRET_LENGTH = 8
#: The texts of the user's credential variables are searched from this length (shorter ones are overwritten in place,
#: where only their name held them).
MIN_CREDENTIAL_LENGTH = 6
#: An environment value is masked only from this length (``AUTH_MODE=strict`` is no secret worth a memory search).
MIN_ENVIRONMENT_LENGTH = 12
#: A variable named like a credential that names a place holds a path, not the credential (``TIKTOKEN_CACHE_DIR``,
#: set by litellm at import; ``AWS_SHARED_CREDENTIALS_FILE``): its value is neither searched nor masked.
PLACE_NAME = re.compile(r"_(?:DIR|FILE|PATH)$", re.IGNORECASE)
#: A string literal of a history cell that looks like a credential (long, no blanks, letters and digits).
_CREDENTIAL_LITERAL = re.compile(r"""(['"])([^'"\s]{16,})\1""")
_NAMED_LITERAL = re.compile(r"""(?i)(?:key|token|secret|passw\w*|auth\w*)\w*['"]?\s*[=:]\s*(['"])([^'"\n]{8,})\1""")
_SECRET_FLAG = re.compile(r"(?i)^--?[\w-]*(?:key|token|secret|passw|auth)[\w-]*(?:=(.*))?$")
#: Classes whose instances hold credentials: (module, qualified name) of the base class.
CLIENT_CLASSES = (
    ("nbagent.models.api", "ApiModel"),
    ("openai._base_client", "BaseClient"),
    ("httpx._client", "BaseClient"),
    ("requests.sessions", "Session"),
    ("huggingface_hub.inference._client", "InferenceClient"),
    ("huggingface_hub.inference._generated._async_client", "AsyncInferenceClient"),
    ("jupyter_client.session", "Session"),
)
#: Modules whose text globals named like a credential are keys set for the whole process.
CLIENT_MODULES = ("openai", "litellm", "anthropic", "cohere", "groq", "mistralai")
_HF_AUTH_GLOBALS = ("_GOOGLE_COLAB_SECRET", "_OIDC_TOKEN_CACHE", "_OAUTH_REFRESH_CACHE")
_PLAIN_WORD = re.compile(rb"[a-z_]+")  # a name ("arguments"), not a credential: masking it would break the worker
#: The report's key for the pages found free of the values (unchanged.py), never shown.
CLEAN = "_clean"
_MAX_DEPTH = 3  # how deep a client's attributes are followed (client -> http client -> auth)


class Found:
    """The secret values found so far (searched through memory at the end) and what was cleared."""

    def __init__(self) -> None:
        self.values: set[bytes] = set()
        self.cleared: list[str] = []

    def value(self, value: Any) -> None:
        if type(value) is str:
            value = value.encode("utf-8", "ignore")
        if type(value) not in (bytes, bytearray):
            return
        value = bytes(value).strip()
        for prefix in (b"Bearer ", b"Basic ", b"Token ", b"token "):
            if value.startswith(prefix):
                self.value(value[len(prefix) :])
        if len(value) >= MIN_SECRET_LENGTH and not _PLAIN_WORD.fullmatch(value):
            self.values.add(value)


def scrub(
    environment: Mapping[str, str] | None = None,
    namespace: Mapping[str, Any] | None = None,
    hidden: Mapping[str, Any] | None = None,
    credentials: list[Any] | None = None,
    known: Known | None = None,
    tell: Callable[[frozenset[bytes]], None] | None = None,
) -> dict[str, Any]:
    """Clear the kernel's secrets in this (forked, single-threaded) process; returns what was done and its cost.

    ``namespace``: the names the agent will see; nothing they hold is ever written (a secret equal to the user's data
    is the user's data there). ``hidden``: the values of the names taken out of it (their large data buffers are not
    searched: the user's data, where no secret of the kernel's lives). ``credentials``: the texts of the user's
    credential variables taken out of it, removed from memory with the kernel's secrets (and, shorter than
    :data:`MIN_SECRET_LENGTH`, overwritten in place when nothing else holds them). ``known``: the kernel's pages an
    earlier worker found free of its values and the kernel has not written since (unchanged.py): not read again when
    this worker's values are among those; ``tell``: given the values searched for before the search (the ledger keeps
    them beside this worker's report; the copies sending them makes are searched with the rest)."""
    started = time.perf_counter()
    found = Found()
    for name, value in (environment or {}).items():
        if SECRET_NAME.search(name) and not PLACE_NAME.search(name) and len(value) >= MIN_ENVIRONMENT_LENGTH:
            found.value(value)  # a copy held elsewhere (a client read it at start) is masked with the rest
    _note_all(found, credentials or ())  # (a helper: a loop variable here would keep one of them alive)
    shell = _shell()
    costs: dict[str, float] = {}
    for step in (_sessions_and_app, _argv, _history, _clients):
        begun = time.perf_counter()
        try:
            step(shell, found)
        except Exception as exc:  # a library's odd state must not stop the others (or the worker)
            found.cleared.append(f"{step.__name__[1:]} failed: {type(exc).__name__}")
        costs[step.__name__[1:]] = round(time.perf_counter() - begun, 4)
    begun = time.perf_counter()
    reported = unchanged.LEDGER.reported_values(
        known
    )  # masked too: the ledger's copy of them is in the kernel's memory
    clean = None if known is None else known.clean if found.values <= reported else []
    values = set(found.values) | reported
    if tell is not None and values:
        tell(frozenset(values))
    seen = namespace if namespace is not None else getattr(shell, "user_ns", None) or {}
    models = model_memory() if values else []  # a loaded model's weights and caches (model_memory.py)
    skip = wipe.visible_buffers(seen, values) + wipe.data_buffers([hidden or {}]) + models
    searched = wipe.search(values, skip=skip, known=clean)
    masked = searched.masked
    if credentials:
        masked += wipe.overwrite_unheld(credentials)
        found.cleared.append(f"the notebook's credentials not shared with the agent ({len(credentials)} values)")
    costs["memory"] = round(time.perf_counter() - begun, 4)
    found.values.clear()
    return {
        "cleared": found.cleared,
        "values": len(values),
        "masked": masked,
        "model_memory_bytes": sum(end - start for start, end in models),  # not searched
        "searched_bytes": searched.searched_bytes,
        "known_free_bytes": searched.known_bytes,  # not searched: known free of the values (unchanged.py)
        CLEAN: searched.clean,  # taken out of the report by the worker, which sends them to the ledger
        "seconds": round(time.perf_counter() - started, 4),
        "costs": costs,
    }


def _note_all(found: Found, values: Any) -> None:
    """The user's credentials: searched from :data:`MIN_CREDENTIAL_LENGTH` (a password is no plain word to spare)."""
    for value in values:
        data = value.encode("utf-8", "ignore") if type(value) is str else value
        if type(data) is bytes and len(data) >= MIN_CREDENTIAL_LENGTH:
            found.values.add(data)


def _shell() -> Any:
    module = sys.modules.get("IPython.core.getipython")
    try:
        return module.get_ipython() if module else None
    except Exception:
        return None


# --- the kernel's session and connection --------------------------------------------------------------------------


def _blank_session(session: Any, found: Found) -> None:
    found.value(getattr(session, "key", None))
    session.key = b""  # a trait: its observer replaces ``auth`` (the HMAC object holding the key) by None
    if getattr(session, "auth", None) is not None:
        session.auth = None


def _sessions_and_app(shell: Any, found: Found) -> None:
    kernel = getattr(shell, "kernel", None)
    for session in (getattr(kernel, "session", None),):
        if session is not None:
            _blank_session(session, found)
            found.cleared.append("session key")
    app_module = sys.modules.get("ipykernel.kernelapp")
    app_class = getattr(app_module, "IPKernelApp", None)
    if app_class is None or not app_class.initialized():
        return
    app = app_class.instance()
    if getattr(app, "session", None) is not None:
        _blank_session(app.session, found)
    for port in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port"):
        if hasattr(app, port):
            setattr(app, port, 0)
    app.connection_file = ""
    for name in app.trait_names():  # curve_secretkey (CurveZMQ), whatever else is named like a credential
        value = getattr(app, name, None)
        if type(value) in (str, bytes) and SECRET_NAME.search(name):
            found.value(value)
            try:
                setattr(app, name, None)
            except Exception:
                setattr(app, name, type(value)())
    if hasattr(app, "argv"):
        app.argv = []
    found.cleared.append("connection info")


def _argv(shell: Any, found: Found) -> None:
    """The kernel's command line (its connection file, a token passed as a flag)."""
    for args in (sys.argv, getattr(sys, "orig_argv", [])):
        after_flag = False
        for arg in args:
            flag = _SECRET_FLAG.match(str(arg))
            if after_flag:
                found.value(arg)
            if flag and flag.group(1):
                found.value(flag.group(1))
            after_flag = bool(flag) and flag.group(1) is None
    _overwrite_command_line()
    sys.argv[:] = ["nbagent-worker"]
    if isinstance(getattr(sys, "orig_argv", None), list):
        sys.orig_argv[:] = ["nbagent-worker"]
    found.cleared.append("sys.argv")


def _overwrite_command_line() -> None:
    """The command line the process started with, in its own memory (a copy of the kernel's after fork: what
    ``/proc/<pid>/cmdline`` shows), becomes ``nbagent-worker``."""
    wipe.overwrite_startup_block("command line", b"nbagent-worker")


# --- the input/output history --------------------------------------------------------------------------------------


def _history_names(namespace: Mapping[str, Any]) -> list[str]:
    return [name for name in namespace if re.fullmatch(r"_i{1,3}|_i\d+|_\d+|_{1,3}|_ih|_oh|_dh|In|Out", name)]


def _history(shell: Any, found: Found) -> None:
    if shell is None:
        return
    namespace = shell.user_ns
    for cell in list(namespace.get("In", []) or []) + list(namespace.get("_ih", []) or []):
        _literals(cell, found)
    for value in list((namespace.get("Out") or {}).values()):
        if type(value) in (str, bytes) and len(value) <= 4096:
            found.value(value)
    for name in _history_names(namespace):
        value = namespace[name]
        if type(value) in (list, dict):
            value.clear()  # In is the history manager's input list, Out its output dict: cleared for both
        else:
            namespace[name] = ""
    _history_manager(getattr(shell, "history_manager", None))
    _cell_sources(getattr(shell, "compile", None))
    shell.last_execution_result = None
    kernel = getattr(shell, "kernel", None)
    if isinstance(getattr(kernel, "_parents", None), dict):
        kernel._parents.clear()  # the running cell's request, its code included
    found.cleared.append("input/output history")


def _literals(cell: Any, found: Found) -> None:
    """History lines are searched through memory only for what looks like a credential (the rest is cleared)."""
    if not isinstance(cell, str):
        return
    for match in _CREDENTIAL_LITERAL.finditer(cell):
        text = match.group(2)
        if re.search(r"[A-Za-z]", text) and re.search(r"\d", text) and not text.startswith(("/", "http", ".")):
            found.value(text)
    for match in _NAMED_LITERAL.finditer(cell):
        found.value(match.group(2))


def _history_manager(manager: Any) -> None:
    if manager is None:
        return
    for name in ("input_hist_parsed", "input_hist_raw", "db_input_cache", "db_output_cache", "dir_hist"):
        value = getattr(manager, name, None)
        if isinstance(value, list):
            value.clear()
    for name in ("output_hist", "output_hist_reprs"):
        value = getattr(manager, name, None)
        if isinstance(value, dict):
            value.clear()
    database = getattr(manager, "db", None)
    if database is not None and hasattr(database, "close"):
        try:
            manager.db = _closed_database()
        except Exception:
            pass


def _closed_database() -> Any:
    import sqlite3

    return sqlite3.connect(":memory:")


def _cell_sources(compiler: Any) -> None:
    """IPython keeps each cell's source in ``linecache`` for tracebacks."""
    import linecache

    names = set(getattr(compiler, "_filename_map", {}) or {})
    for cache in (linecache.cache, getattr(linecache, "_ipython_cache", {})):
        for name in [n for n in cache if n in names or str(n).startswith("<ipython-input-")]:
            cache.pop(name, None)
    if isinstance(getattr(compiler, "_filename_map", None), dict):
        compiler._filename_map.clear()


# --- API clients ---------------------------------------------------------------------------------------------------


def client_classes() -> set[type]:
    """The credential-holding classes (and their subclasses) among the modules already loaded (nothing is imported
    for this)."""
    classes: set[type] = set()
    stack = [getattr(sys.modules.get(module), name, None) for module, name in CLIENT_CLASSES]
    while stack:
        cls = stack.pop()
        if isinstance(cls, type) and cls not in classes:
            classes.add(cls)
            stack.extend(type.__subclasses__(cls))
    return classes


def _clients(shell: Any, found: Found) -> None:
    classes = client_classes()
    auth = sys.modules.get("huggingface_hub.utils._auth")
    for name in _HF_AUTH_GLOBALS if auth is not None else ():
        _blank_attribute(auth, name, getattr(auth, name, None), found, 0)
    for module in filter(None, map(sys.modules.get, CLIENT_MODULES)):  # ``openai.api_key = ...``, ``litellm.api_key``
        for name, value in list(vars(module).items()):
            if type(value) in (str, bytes) and SECRET_NAME.search(name):
                _blank_attribute(module, name, value, found, 0)
    if not classes:
        return
    count = 0
    # An instance of a Python class refers to its class for the collector: get_referrers finds the instances in one
    # pass in C (no list of every object, no isinstance, which lazy proxies such as openai's answer by importing).
    enabled = gc.isenabled()
    gc.disable()  # no collection while the kernel's objects are unfrozen (it would write, so copy, every page)
    gc.unfreeze()  # the worker froze the kernel's objects, which the collector's walks then skip
    try:
        instances = [obj for obj in gc.get_referrers(*classes) if type(obj) in classes]
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    for obj in instances:
        if type(obj).__module__ == "jupyter_client.session":
            _blank_session(obj, found)
        else:
            _blank_object(obj, found, 0)
        count += 1
    found.cleared.append(f"credentials of {count} client objects")


def _blank_object(obj: Any, found: Found, depth: int) -> None:
    attributes = getattr(obj, "__dict__", None)
    if type(attributes) is not dict or depth > _MAX_DEPTH:
        return
    for name, value in list(attributes.items()):
        if SECRET_NAME.search(name):
            _blank_attribute(obj, name, value, found, depth)
        elif type(value).__name__ in _HEADER_TYPES:
            _blank_headers(value, found)
        elif (type(value).__module__ or "").startswith(_CLIENT_PACKAGES):
            _blank_object(value, found, depth + 1)  # the http client inside an API client, its auth object


# Values are told apart by ``type()``, never ``isinstance``/``hasattr``: openai's lazy proxies answer those by
# importing modules (in the worker, before confinement).
_CLIENT_PACKAGES = ("httpx", "openai", "huggingface_hub", "requests", "nbagent.models")
_HEADER_TYPES = ("Headers", "dict", "CaseInsensitiveDict")


def _blank_attribute(owner: Any, name: str, value: Any, found: Found, depth: int) -> None:
    kind = type(value)
    if kind in (int, float, bool, type(None)):
        return  # max_tokens, token counts, flags: not credentials
    if kind in (str, bytes):
        found.value(value)
        replacement: Any = kind()
    elif kind in (list, tuple, set):
        for item in value:
            found.value(item)
        replacement = kind()
    elif kind is dict:
        _blank_headers(value, found, every=True)
        return
    elif kind in (types.FunctionType, types.MethodType, types.BuiltinFunctionType, functools.partial):
        replacement = None  # a key or token provider
    elif kind.__module__.startswith(_CLIENT_PACKAGES) or kind.__module__ in ("builtins",):
        for item in list((getattr(value, "__dict__", None) or {}).values()):
            found.value(item)  # an auth object (httpx.BasicAuth, a token cache): its text fields are the secret
        _blank_object(value, found, depth + 1)
        replacement = None
    else:
        return  # something of another library named like a credential: left alone
    try:
        setattr(owner, name, replacement)
    except Exception:  # a read-only property, a validating setter: the stored value itself
        attributes = getattr(owner, "__dict__", None)
        if type(attributes) is dict and name in attributes:
            attributes[name] = replacement


def _blank_headers(headers: Any, found: Found, every: bool = False) -> None:
    try:
        items = list(headers.items())
    except Exception:
        return
    for name, value in items:
        if every or SECRET_NAME.search(str(name)):
            found.value(value)
            try:
                del headers[name]
            except Exception:
                pass


def secret_values(values: Iterable[Any]) -> set[bytes]:
    """The searchable form of ``values`` (for tests and callers that know their secrets)."""
    found = Found()
    for value in values:
        found.value(value)
    return found.values
