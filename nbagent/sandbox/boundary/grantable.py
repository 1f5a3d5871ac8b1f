"""What a person may be asked to grant: the reviewed allow-list, decided by where a path is (host side).

A write grant outlives the "yes" that gave it: whatever the code writes there, Python, Jupyter or the machine may
load later, outside any sandbox (a ``pandas.py`` in the working folder is imported by the next ``import pandas``, a
notebook is run by nbclient, ``/etc/ld.so.preload`` by every program). So a path is judged by where it is and what
loads from there, in this one module; refusals.py marks what fails here ``grantable=False`` (nobody is asked) and
grants.py checks again before it grants (defence in depth). Paths are resolved first (links, ``..``): a link is
judged by where it leads. ``tests/sandbox/test_grant_allowlist.py`` tests each entry; README's table says them.

**Never granted, to read or to write**

1. a hidden file or folder (a name starting with ``.``: ``~/.ipython``, ``~/.jupyter``, ``~/.config``, ``~/.local``,
   ``.git``, ``.ipynb_checkpoints``...): configuration and secrets;
2. the kernel's secrets (confine.never_granted: its connection file and key files, ``/proc``, ``/sys``, ``/dev``,
   ``/run``, ``/etc/shadow``, ``/etc/ssh``...);
3. a folder holding your home, the working folder, the connection file or the Python installation;
4. when the kernel runs as root, anything outside your folders (:func:`user_folders`: the working folder's tree,
   your home, the temporary folder): the file's permissions protect nothing from root.

**Never granted to write** (what Python or the machine loads code or configuration from)

5. the system (``/etc``, ``/usr``, ``/var`` but its temporary folder, ``/opt``, ``/boot``, ``/root``, ``/bin``,
   ``/sbin``, ``/lib*``, ``/snap``) and the Python installation (prefixes, standard library, site-packages, the user
   site, every ``sys.path`` entry inside them);
6. the folders programs and configuration are found in: every ``PATH`` entry, ``IPYTHONDIR``, ``JUPYTER_*``,
   ``XDG_CONFIG_HOME``/``XDG_DATA_HOME``, ``PYTHONUSERBASE``, ``MPLCONFIGDIR`` and the ``PYTHONSTARTUP`` file;
7. a notebook (``*.ipynb``): running it later runs what the code wrote into it;
8. a code-like file, anywhere (:data:`CODE_SUFFIXES`: ``.py``, ``.pyc``, ``.pth``, ``.so``...; pickles run code
   when loaded) and a file tools load configuration from by name (:data:`CONFIG_NAMES`: ``matplotlibrc``...);
9. an existing folder: a rule on a folder covers every file under it (code, notebooks, another project's);
10. a new folder in the working folder's tree or under a ``sys.path`` entry: it could be a package (the worker
    could create ``__init__.py`` in it: Landlock's rule on a folder lets it create any file there);
11. a file inside a package (a folder holding ``__init__.py``) under the working folder or a ``sys.path`` entry:
    the package may read it when imported.

**Granted** (when the file's own permissions let you do it too): reading any other file; writing a data file (any
other name) in the working folder's tree, your home, the temporary folder or, unless the kernel runs as root,
elsewhere; a new folder elsewhere (created empty, the code may create files in it; nothing imports from there). A
folder a person named in ``allow_write`` needs no grant: the worker writes it already.
"""

from __future__ import annotations

import os
import re
import site
import sys
import tempfile

from . import confine

#: Where the machine keeps its programs, libraries and configuration (never written; their temporary folder is).
SYSTEM_FOLDERS = (
    "/etc", "/usr", "/var", "/opt", "/boot", "/root", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/snap",
)  # fmt: skip
#: Temporary folders: your folders, even inside a system folder (``/var/tmp``).
TEMP_FOLDERS = ("/tmp", "/var/tmp")
#: Files Python, IPython or the machine runs, or that run code when loaded (pickles). Matched without case.
CODE_SUFFIXES = (
    ".py", ".pyw", ".pyc", ".pyo", ".pth", ".so", ".pyd", ".dll", ".dylib", ".egg", ".ipy", ".sh", ".bash",
    ".pkl", ".pickle",
)  # fmt: skip
_VERSIONED_LIBRARY = re.compile(r"\.so(\.\d+)+$")  # libfoo.so.1.2
#: Files a tool loads configuration (and through it, code: plugins, backends) from, found by name in its folder.
CONFIG_NAMES = ("matplotlibrc", "pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini")
NOTEBOOK_SUFFIX = ".ipynb"
#: Environment variables naming folders (or files) programs or configuration are loaded from.
CONFIG_VARIABLES = (
    "IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "XDG_CONFIG_HOME",
    "XDG_DATA_HOME", "PYTHONUSERBASE", "MPLCONFIGDIR", "PYTHONSTARTUP",
)  # fmt: skip
CONFIG_PATH_VARIABLES = ("PATH", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH")

_HIDDEN = "nbagent never grants hidden files or folders (names starting with '.': configuration and secrets)"
_CLOSED = (
    "nbagent never grants the kernel's connection file, your home's dotfiles, /proc, /sys, /dev or the system's secrets"
)


def why_not(kind: str, target: str, *, created: bool = False) -> str:
    """Why reading or writing ``target`` (an absolute path; a folder's ends with ``/``) is never granted; "" if a
    person may be asked. ``kind``: "read" or "write"; ``created``: nbagent created the folder for this very grant
    (judged as the new folder it was when granted)."""
    folder = target.endswith("/")
    path = os.path.realpath(target)
    folder = folder or os.path.isdir(path)
    why = _closed(path)
    if not why and kind == "write":
        why = _loads_code(path, folder, created)
    return why or _root_outside(path) or _own_permissions(kind, path)


# --- 1-4: never, to read or to write --------------------------------------------------------------------------------


def _closed(path: str) -> str:
    if any(part.startswith(".") for part in path.split("/")):
        return _HIDDEN
    if any(_inside(path, closed) for closed in confine.never_granted()) or confine.is_key_file(path):
        return _CLOSED
    holds = _holds_protected(path)
    return f"it holds {holds}: grant a folder inside it instead (allow_read / allow_write)" if holds else ""


def _holds_protected(path: str) -> str:
    connection = confine.connection_file()
    for name, protected in (
        ("your home folder", [_home()]),
        ("the working directory", [working_folder()]),
        ("the kernel's connection file", [connection] if connection else []),
        ("the Python installation", confine.python_roots()),
    ):
        if any(_inside(p, path) for p in protected):
            return name
    return ""


def is_root() -> bool:
    """The kernel runs as root: no file's permissions refuse it anything."""
    return getattr(os, "geteuid", lambda: -1)() == 0


def user_folders() -> list[str]:
    """Your folders: the working folder's tree, your home and the temporary folders (``/root``, root's home, is
    still never written: rule 5)."""
    return [working_folder(), *temp_folders(), _home()]


def _root_outside(path: str) -> str:
    if not is_root() or any(_inside(path, folder) for folder in user_folders() if folder != "/"):
        return ""
    return (
        "the kernel runs as root, so nbagent grants only paths in your folders (the working folder, your home, the "
        "temporary folder); name another one in allow_read / allow_write when you create the agent"
    )


# --- 5-11: never written ----------------------------------------------------------------------------------------


def _loads_code(path: str, folder: bool, created: bool = False) -> str:
    """Why writing ``path`` could make Python, Jupyter or the machine run the agent's code later; "" if it cannot."""
    return (
        _in_installation(path)
        or _in_config_folder(path)
        or _code_like(os.path.basename(path))
        or _folder_grant(path, folder, created)
        or _in_package(path)
    )


def _in_installation(path: str) -> str:
    system = [s for s in SYSTEM_FOLDERS if not any(_inside(path, t) for t in temp_folders())]
    for root in (*installation_folders(), *system):
        if _inside(path, root):
            return (
                f"nbagent never grants writing into the Python installation or the system (`{root}`): Python and "
                "the machine load code and configuration from there"
            )
    return ""


def _in_config_folder(path: str) -> str:
    for root in config_folders():
        if _inside(path, root):
            return (
                f"nbagent never grants writing into `{root}`: programs or configuration are loaded from there "
                "(PATH, IPYTHONDIR, JUPYTER_*, XDG_*, PYTHONSTARTUP)"
            )
    return ""


def _code_like(name: str) -> str:
    lower = name.lower()
    if lower.endswith(NOTEBOOK_SUFFIX):
        return "nbagent never grants writing a notebook: running it later would run what the code wrote into it"
    if lower.endswith(CODE_SUFFIXES) or _VERSIONED_LIBRARY.search(lower):
        return (
            "nbagent never grants writing Python files or other code (.py, .pth, .so, scripts, pickles): Python or "
            "the machine could run it later; keep code in a variable, or write it into the scratch folder"
        )
    if lower in CONFIG_NAMES:
        return f"nbagent never grants writing `{name}`: tools load their configuration (and plugins) from it"
    return ""


def _folder_grant(path: str, folder: bool, created: bool) -> str:
    if not folder:
        return ""
    if os.path.lexists(path) and not created:
        return (
            "nbagent never grants writing a whole folder: its rule would cover every file under it (code and "
            "notebooks included); files are granted one by one"
        )
    if any(_inside(path, root) for root in import_folders()):
        return (
            "nbagent never grants a new folder in the working folder or a folder Python imports from: it could "
            "become a package the kernel imports; write files into an existing folder, or into the scratch folder"
        )
    return ""


def _in_package(path: str) -> str:
    for root in import_folders():
        if not _inside(path, root) or path == root:
            continue
        parent = os.path.dirname(path)
        while _inside(parent, root) and parent != root:
            if any(os.path.exists(os.path.join(parent, f"__init__{s}")) for s in (".py", ".pyc")):
                return (
                    f"nbagent never grants writing inside the package `{parent}`: the kernel imports it, and it "
                    "may read its files"
                )
            parent = os.path.dirname(parent)
    return ""


# --- the places, as this kernel has them now --------------------------------------------------------------------


def working_folder() -> str:
    return os.path.realpath(os.getcwd())


def temp_folders() -> list[str]:
    return sorted({os.path.realpath(p) for p in (*TEMP_FOLDERS, tempfile.gettempdir())})


def import_folders() -> list[str]:
    """Every folder Python imports from: each ``sys.path`` entry (``''`` and relative ones are the working folder)
    and the working folder itself (a kernel started there has it on ``sys.path``)."""
    here = os.getcwd()
    return sorted(
        {working_folder()} | {os.path.realpath(os.path.join(here, p)) for p in sys.path if isinstance(p, str)}
    )


def installation_folders() -> list[str]:
    """The Python installation: the interpreter's folders, the site folders (the user's too) and every ``sys.path``
    entry inside them (a zip of the standard library, ``lib-dynload``)."""
    roots = set(confine.interpreter_roots())
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
        roots.add(site.getuserbase())
    except (AttributeError, TypeError):  # a site module replaced by a virtualenv's older one
        pass
    return sorted({os.path.realpath(r) for r in roots if r})


def config_folders() -> list[str]:
    """What the environment names as where programs and configuration are found (absolute entries only)."""
    named = [os.environ.get(v, "") for v in CONFIG_VARIABLES]
    for variable in CONFIG_PATH_VARIABLES:
        named += os.environ.get(variable, "").split(os.pathsep)
    return sorted({os.path.realpath(p) for p in named if p and os.path.isabs(p) and os.path.realpath(p) != "/"})


def _home() -> str:
    return os.path.realpath(os.path.expanduser("~"))


def _own_permissions(kind: str, path: str) -> str:
    """What the kernel's own user may not do either (the file's permissions): a grant would change nothing."""
    if kind == "read":
        if not os.path.exists(path):
            return "it does not exist"
        return "" if os.access(path, os.R_OK) else "the file's own permissions refuse it to you too"
    if os.path.lexists(path):
        return "" if os.access(path, os.W_OK) else "the file's own permissions refuse it to you too"
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        return "its folder does not exist"
    return "" if os.access(parent, os.W_OK) else "its folder's own permissions refuse it to you too"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
