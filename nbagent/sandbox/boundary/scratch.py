"""The worker's scratch directory: one per executor, locked for as long as the kernel that made it lives.

A kernel that is killed with executors open (a restart, a crash, ``kill -9``) never runs their cleanup, so each
left a directory in the temporary folder. The lock is an ``flock`` on the directory itself, held by the kernel's
open descriptor: the operating system releases it when that process dies, whatever killed it, and the worker
cannot take or replace it (it closes every inherited descriptor, and cannot write the folder that holds the
directory). Making a new directory sweeps the ones whose lock nobody holds any more."""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import shutil
import tempfile

PREFIX = "nbagent-scratch-"
_MAKING = "nbagent-making-"


class Scratch:
    """A fresh, locked scratch directory; ``remove()`` unlocks and deletes it."""

    def __init__(self, parent: str | None = None) -> None:
        sweep(parent)
        # made under a name no sweep reads, locked, then given its name: another thread's or kernel's sweep between
        # the making and the lock removed it (evaluations on threads failed with FileNotFoundError)
        making = tempfile.mkdtemp(prefix=_MAKING, dir=parent)
        self._fd: int | None = os.open(making, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.path = os.path.join(os.path.dirname(making), PREFIX + os.path.basename(making)[len(_MAKING) :])
            os.rename(making, self.path)
        except OSError:
            os.close(self._fd)
            shutil.rmtree(making, ignore_errors=True)
            raise

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def sweep(parent: str | None = None) -> list[str]:
    """Remove this user's scratch directories that no live process holds; returns the paths removed."""
    removed = []
    for path in glob.glob(os.path.join(parent or tempfile.gettempdir(), PREFIX + "*")):
        if _orphaned(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _orphaned(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False  # gone, not a directory, a link, or not ours to open
    try:
        if os.fstat(fd).st_uid != os.getuid():
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True  # nobody holds it: the kernel that made it has died
    except OSError:
        return False  # held: its kernel is alive
    finally:
        os.close(fd)
