"""Resource limits for the worker, clamped to the hard limits it inherited (containers and CI often set lower ones).

A process cannot raise its hard limit, so asking for more than it fails (``ValueError``): every call would fail to
confine. :func:`cap` sets the lower of the two and, when the hard limit wins, returns a sentence for the user (the
confinement report's ``notice``, which the executor shows once). The sentence names only the hard limit, which does
not change from one worker to the next, so it is shown once per kernel.
"""

from __future__ import annotations

import resource  # POSIX only: the worker exists only where fork does

_WHAT = {"RLIMIT_AS": "memory (address space)", "RLIMIT_FSIZE": "file size"}


def cap(name: str, wanted: int) -> tuple[int, str]:
    """Set soft and hard limit ``name`` (``"RLIMIT_AS"``...) to ``wanted``, or to the hard limit if that is lower.
    Returns the limit set and a notice ('' when ``wanted`` was granted)."""
    which = getattr(resource, name)
    hard = resource.getrlimit(which)[1]
    if hard == resource.RLIM_INFINITY or wanted <= hard:
        resource.setrlimit(which, (wanted, wanted))
        return wanted, ""
    resource.setrlimit(which, (hard, hard))
    notice = (
        f"the {_WHAT.get(name, name)} cap is lower than asked: this process's hard {name} is {_size(hard)}, which "
        "the worker cannot exceed"
    )
    return hard, notice


def add_notice(report: dict[str, object], text: str) -> None:
    """Append ``text`` to the report's notice (several parts of the confinement may have something to say)."""
    if text:
        earlier = report.get("notice")
        report["notice"] = f"{earlier}; {text}" if isinstance(earlier, str) and earlier else text


def _size(count: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"
