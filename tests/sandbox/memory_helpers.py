"""Read another process's memory from outside (``/proc/<pid>/mem``; Linux, root), for the secrets tests.

A module of its own, not conftest: several conftest modules exist and only one can be imported by that name.
"""

from __future__ import annotations

from collections.abc import Iterable


def memory_hits(pid: int, needles: Iterable[bytes]) -> dict[bytes, int]:
    """How often each needle occurs in the readable memory of process ``pid``."""
    needles = list(needles)
    hits = dict.fromkeys(needles, 0)
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as memory:
        for line in maps:
            fields = line.split()
            path = fields[5] if len(fields) > 5 else ""
            if not fields[1].startswith("r") or path.startswith(("[vvar", "[vsyscall")):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            try:
                memory.seek(start)
                data = memory.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue
            for needle in needles:
                hits[needle] += data.count(needle)
    return hits
