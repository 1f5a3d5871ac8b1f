"""What `%%agent`/`%agent` check in their input before a run: options, the usage line, a task ending in `?`, imports.

* `check_options` refuses an unknown option with "did you mean" (and never takes an abbreviation:
  `--max-step` is an error, not `--max-steps`).
* `usage_line` is one clean line naming the magic that was used (`%%agent` or `%agent`).
* `check_pointed_names` refuses a task whose backticked name (`` `grades` ``) names no variable, with "did
  you mean" over the notebook's names: a model told of a variable that is not there invents its data
  (measured: 10 steps and 10 minutes, then `pd.read_csv('grades.csv')`). Backticked words that are
  not meant as variables pass: a column of a frame, a Python builtin or keyword, a module, a pandas or
  numpy function or method (`groupby`).
* `keep_agent_questions` is an IPython input transformer: IPython reads a line that ends in `?` as a
  help request (`%agent What is the capital of France?` would show help on `France`); this one hands
  such a line to the magic instead. `%agent?` alone still shows the magic's help.
* `check_names` refuses, before any model call, an `-o`/`--agent` that is not a Python name (`-o 2best` once ran
  the model for 2.5 minutes and stored the answer in `globals()['2best']`) and an `--imports` module that is not
  installed, with "did you mean" over the importable modules.
* `imports_notice` says in one line what authorizing a sensitive module (os, sys, shutil, socket, …)
  does and does not allow, as the sandbox's policy enforces it.
"""

from __future__ import annotations

import difflib
import importlib.util
import keyword
import pkgutil
import re
import shlex
import sys
from collections.abc import Iterable
from typing import Any

__all__ = [
    "check_options",
    "usage_line",
    "check_pointed_names",
    "check_names",
    "did_you_mean_variable",
    "keep_agent_questions",
    "install_question_transformer",
    "imports_notice",
]

_NUMBER = re.compile(r"^-\d")
_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
_SHOWN_NAMES = 8


def _option_strings(parser: Any) -> tuple[set[str], set[str]]:
    """Every option string of `parser`, and those that take a value."""
    known: set[str] = set()
    with_value: set[str] = set()
    for action in parser._actions:
        known.update(action.option_strings)
        if action.nargs != 0:
            with_value.update(action.option_strings)
    return known, with_value


HELP_WORDS = ("-h", "--help")


def wants_help(line: str) -> bool:
    """`%agent --help`, `%%agent -h`: the options before any task (or `--`) ask for the help."""
    try:
        words = shlex.split(line)
    except ValueError:  # unbalanced quotes: the parse says so
        return False
    for word in words:
        if word == "--" or not word.startswith("-"):
            return False
        if word in HELP_WORDS:
            return True
    return False


def help_text(parser: Any, magic: str) -> str:
    """The magic's help as `%agent?` shows it, for `--help`: usage, what it does, every option."""
    text = parser.format_help().removeprefix("::").strip("\n").removeprefix("  ")
    text = text.replace("%agent [", f"{magic} [", 1)
    return f"{text}\n\n%%agent [options] then the task in the cell · %agent [options] task · %agent? shows this too"


def check_options(words: list[str], parser: Any, magic: str) -> None:
    """Raise a `UsageError` for an option `parser` does not know, suggesting the closest ones."""
    from IPython.core.error import UsageError

    known, with_value = _option_strings(parser)
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return
        if word.startswith("-") and len(word) > 1 and not _NUMBER.match(word):
            option = word.split("=", 1)[0]
            if option not in known:
                raise UsageError(
                    f"{magic}: unknown option {option}{_did_you_mean(option, known)}\n{usage_line(parser, magic)}"
                )
            if option in with_value and "=" not in word:
                index += 1  # its value may itself start with "-"
        index += 1


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    names = sorted(c[2:] for c in choices if c.startswith("--"))
    close = difflib.get_close_matches(word.lstrip("-"), names, n=2, cutoff=0.7)
    return f" (did you mean {' or '.join('--' + c for c in close)}?)" if close else ""


def check_names(out: str | None, agent: str | None, imports: Iterable[str]) -> None:
    """Refuse names the run could not use, before the model loads: `UsageError` with the reason."""
    from IPython.core.error import UsageError

    for option, name in (("-o", out), ("--agent", agent)):
        if name is not None and (problem := _not_a_name(name)):
            raise UsageError(f"{option} {name}: {problem}")
    for module in (name.removesuffix(".*") for name in imports):
        if module != "*" and not _installed(module):
            close = difflib.get_close_matches(module, _importable_modules(), n=2, cutoff=0.75)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            raise UsageError(f"--imports {module}: no module of that name is installed in this kernel{hint}")


def _not_a_name(name: str) -> str | None:
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) and name != "_":
        return f"`{name}` is a Python keyword: choose another variable name"
    if not name.isidentifier():
        return "not a Python variable name (letters, digits and _, not starting with a digit)"
    return None


def _installed(module: str) -> bool:
    if not all(part.isidentifier() for part in module.split(".")):
        return False
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that is not a package, or a broken one
        return False


def _importable_modules() -> list[str]:
    return sorted({*sys.stdlib_module_names, *(m.name for m in pkgutil.iter_modules())})


def usage_line(parser: Any, magic: str) -> str:
    """`usage: %%agent [-m MODEL] [--tools TOOLS] …` on one line, for the magic that was used."""
    text = " ".join(parser.format_usage().replace("::", " ").split())
    text = re.sub(r"^(usage:\s*)?%{1,2}\S+\s*", "", text)
    where = "TASK" if magic == "%agent" else "(the task in the cell body)"
    return f"usage: {magic} {text} {where}".replace("  ", " ")


# ---------------------------------------------------------------------------- names the task points at


def check_pointed_names(task: str, namespace: dict[str, Any], magic: str) -> None:
    """Raise a `UsageError` for the first backticked name of `task` that no variable of `namespace` has."""
    from IPython.core.error import UsageError

    for name in dict.fromkeys(_BACKTICKED.findall(task)):
        if name in namespace or _not_meant_as_variable(name, namespace):
            continue
        raise UsageError(
            f"{magic}: the task points at `{name}`, but no variable {name!r} is defined in the notebook"
            f"{did_you_mean_variable(name, namespace)}. Define it first (run the cell that makes it), or write "
            "the word without backticks if it is not a variable."
        )


def did_you_mean_variable(name: str, namespace: dict[str, Any]) -> str:
    """ " (did you mean `sales`?)" over the notebook's own names, else the data variables there are (or "")."""
    names = _user_names(namespace)
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        return f" (did you mean {' or '.join(f'`{c}`' for c in close)}?)"
    data = [n for n in names if not callable(namespace[n]) and type(namespace[n]).__name__ != "module"]
    if not data:
        return " (the notebook defines no variables yet)"
    more = ", …" if len(data) > _SHOWN_NAMES else ""
    return f" (the notebook's variables: {', '.join(f'`{n}`' for n in data[:_SHOWN_NAMES])}{more})"


def _user_names(namespace: dict[str, Any]) -> list[str]:
    """The names a person defined: not private, not IPython's own (In, Out, exit, quit, get_ipython)."""
    hidden = {"In", "Out", "exit", "quit", "get_ipython"} if "_ih" in namespace else set()
    return [name for name in namespace if not name.startswith("_") and name not in hidden]


def _not_meant_as_variable(name: str, namespace: dict[str, Any]) -> bool:
    """A backticked word that is something else: a column, a builtin or keyword, a module, a pandas/numpy name."""
    import builtins
    import importlib.util
    import keyword

    if keyword.iskeyword(name) or hasattr(builtins, name):
        return True
    if any(name in map(str, getattr(value, "columns", ())) for value in namespace.values() if _is_frame(value)):
        return True
    libraries = [sys.modules.get(module) for module in ("pandas", "numpy")]
    frames = [getattr(sys.modules.get("pandas"), kind, None) for kind in ("DataFrame", "Series")]
    if any(hasattr(owner, name) for owner in [*libraries, *frames] if owner is not None):
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _is_frame(value: Any) -> bool:
    return type(value).__name__ == "DataFrame" and type(value).__module__.startswith("pandas")


# ---------------------------------------------------------------------------- a task ending in "?"

_AGENT_LINE = re.compile(r"^(?P<indent>[ \t]*)%agent(?P<rest>[ \t]+\S.*?)[ \t]*$")


def keep_agent_questions(lines: list[str]) -> list[str]:
    """IPython cleanup transformer: a `%agent …?` line runs the magic instead of asking for help."""
    out = []
    for line in lines:
        match = _AGENT_LINE.match(line.rstrip("\n"))
        rest = match.group("rest").strip() if match else ""
        if match and rest.endswith("?") and rest.strip("?"):
            newline = "\n" if line.endswith("\n") else ""
            line = f"{match.group('indent')}get_ipython().run_line_magic('agent', {rest!r}){newline}"
        out.append(line)
    return out


def install_question_transformer(shell: Any) -> None:
    """Add `keep_agent_questions` to `shell`'s cleanup transformers once (they run before the help `?` check)."""
    transformers = getattr(shell, "input_transformers_cleanup", None)
    if transformers is not None and keep_agent_questions not in transformers:
        transformers.append(keep_agent_questions)


# ---------------------------------------------------------------------------- sensitive imports

_FILE_MODULES = frozenset({"os", "shutil", "pathlib", "glob", "io", "tempfile", "fileinput", "zipfile", "tarfile"})


def imports_notice(modules: Iterable[str], executor: str) -> str | None:
    """One line on what authorizing sensitive `modules` allows with `executor` ("isolated"/"local"); None if none is."""
    from nbagent.sandbox.boundary.isolated import NETWORK_MODULES
    from nbagent.sandbox.guards.policy import never_importable

    names = list(dict.fromkeys(m.strip() for m in modules if m.strip()))
    tops = {name.split(".")[0] for name in names}
    confined = executor == "isolated" and sys.platform.startswith("linux")
    parts = []
    refused = [name for name in names if never_importable(name)]
    if refused:
        parts.append(f"{', '.join(refused)} stay refused (never importable by agent code)")
    if "os" in tops:
        parts.append("os without processes or environment variables")
    if "sys" in tops:
        parts.append("sys without sys.modules, sys.path, tracing, exit or stdin")
    if tops & _FILE_MODULES:
        parts.append(
            "files: reads only Python, system libraries and the working directory (no dot-files), "
            "writes only a scratch directory"
            if confined
            else f"files: whatever this kernel may read and write ({_unconfined(executor)})"
        )
    if tops & NETWORK_MODULES:
        parts.append(
            "network: HTTPS through the kernel's proxy, to public addresses only (ports 80/443)"
            if confined
            else f"network: unrestricted ({_unconfined(executor)})"
        )
    if not parts:
        return None
    return f"--imports {','.join(names)}: {'; '.join(parts)}."


def _unconfined(executor: str) -> str:
    return "the local executor" if executor == "local" else "no OS confinement on this platform"
