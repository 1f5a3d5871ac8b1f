"""A hint for `%%agent` used before `%load_ext nbagent`: IPython's bare "Cell magic `%%agent` not found" gets one line
that says what to run, in every kernel of a profile, without loading nbagent there.

What IPython allows cleanly: a file in the profile's `startup/` folder (run when a kernel starts) that registers a
custom exception handler (`InteractiveShell.set_custom_exc((UsageError,), handler)`, IPython's documented hook). It
is installed only on request (`nbagent hint install`, or `install_startup_hint()`), because it writes into the
person's IPython profile; `nbagent hint remove` takes it out. The file imports nothing of nbagent: a kernel pays
nothing until the error happens, and then the hint is given only if nbagent is installed in that kernel. The
handler shows every UsageError as IPython does (`showtraceback`); it never replaces a handler someone else set.

Not chosen: loading the extension in every kernel (`c.InteractiveShellApp.extensions`), which imports nbagent into
kernels that never use it; a file under `sys.prefix/etc/ipython`, which IPython reads only as one whole
`ipython_kernel_config` (no `.d` folder) that a package must not own.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["HINT", "STARTUP_NAME", "STARTUP_SOURCE", "install_startup_hint", "missing_agent_magic", "startup_path"]

HINT = "nbagent is installed but not loaded in this kernel: run `%load_ext nbagent` once (a cell of its own), then `%%agent`."
STARTUP_NAME = "50-nbagent-hint.py"
_MISSING = re.compile(r"^(Cell magic|Line magic function) `%{1,2}agent` not found")

# The startup file: self-contained (IPython runs it in every kernel of the profile; it must not import nbagent).
STARTUP_SOURCE = f'''\
"""nbagent's hint for %%agent used before %load_ext nbagent (installed by `nbagent hint install`; remove with
`nbagent hint remove`). It imports nothing until a magic is missing, and leaves other handlers alone."""


def _nbagent_hint():
    import importlib.util
    import re
    import sys

    from IPython import get_ipython
    from IPython.core.error import UsageError

    shell = get_ipython()
    if shell is None or shell.custom_exceptions:  # another handler is set: it stays
        return
    missing = re.compile({_MISSING.pattern!r})

    def handler(self, etype, value, tb, tb_offset=None):
        self.showtraceback((etype, value, tb), tb_offset=tb_offset)
        if missing.match(str(value)) and importlib.util.find_spec("nbagent") is not None:
            print({HINT!r}, file=sys.stderr)

    shell.set_custom_exc((UsageError,), handler)


_nbagent_hint()
del _nbagent_hint
'''


def missing_agent_magic(message: str) -> bool:
    """Whether an IPython UsageError's text says `%%agent` or `%agent` is not found (the extension is not loaded)."""
    return bool(_MISSING.match(message))


def startup_path(profile_dir: str | Path | None = None) -> Path:
    """Where the startup file goes: `<profile>/startup/50-nbagent-hint.py` (the default profile unless given)."""
    if profile_dir is None:
        from IPython.paths import get_ipython_dir

        profile_dir = Path(get_ipython_dir()) / "profile_default"
    return Path(profile_dir) / "startup" / STARTUP_NAME


def install_startup_hint(profile_dir: str | Path | None = None, remove: bool = False) -> Path:
    """Write (or with `remove=True`, delete) the startup file; the path it concerns."""
    path = startup_path(profile_dir)
    if remove:
        path.unlink(missing_ok=True)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(STARTUP_SOURCE, encoding="utf-8")
    return path
