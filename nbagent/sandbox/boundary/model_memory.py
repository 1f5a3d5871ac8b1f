"""The memory a model loaded in the kernel holds, which the secrets scrub does not search (Linux; the kernel's side).

A local model's weights and caches are read from a public file or computed from it: numbers, never a copy of a
secret. They are also most of a kernel's memory: the default model's 1.3 GB were 85% of what a worker's start
searched, 0.64 s of each start with two secrets in the environment. :func:`remember_model_memory` runs a model's load
and keeps the private anonymous memory that load mapped anew (adjacent mappings joined; pieces of at least
``MIN_MODEL_BYTES``) for as long as the model lives and says it is loaded; :func:`model_memory` gives those ranges to
the scrub, which leaves them out.

What that leaves unsearched, and why it is safe: a piece is taken only if the load mapped it (it was not mapped
before) and is large (a secret's copies -- a string, a header, a client's buffer -- are small allocations: the heap,
Python's arenas). A model that is freed or collected gives its ranges back at once (``loaded`` is asked at every
scrub), so memory reused for something else is searched again. :func:`remember_model_buffer` keeps a buffer a loaded
model filled with its own numbers (a saved KV state, :mod:`nbagent.models.prompt_states`) out while it lives. Left: another thread of the kernel's that, during the load, copied a
secret into a new allocation of its own and had it placed inside such a piece.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from . import wipe
from .mappings import Region, regions

if TYPE_CHECKING:
    import numpy as np

#: Pieces a load mapped that are at least this large are the model's (a weights or cache buffer).
MIN_MODEL_BYTES = 16 << 20

T = TypeVar("T")
A = TypeVar("A", bound="np.ndarray")


@dataclass
class _Held:
    ranges: list[tuple[int, int]]
    loaded: Callable[[], bool]


_HELD: list[_Held] = []  # appended whole (atomic): read without a lock by a forked worker, where one could be held


def _anonymous(region: Region) -> bool:
    return wipe.searchable(region) and not region.path


def remember_model_memory(load: Callable[[], T], loaded: Callable[[T], bool]) -> T:
    """``load()``'s model, the memory it mapped kept out of the scrub while ``loaded(model)`` is true."""
    before = [(r.start, r.end) for r in regions()]
    model = load()
    new = wipe.merged(wipe.without(sorted((r.start, r.end) for r in regions() if _anonymous(r)), before))
    pieces = [(start, end) for start, end in new if end - start >= MIN_MODEL_BYTES]
    _HELD[:] = [held for held in _HELD if held.loaded()]  # the models freed since
    if pieces:
        _HELD.append(_Held(pieces, functools.partial(_still_loaded, loaded, weakref.ref(model))))
    return model


def remember_model_buffer(buffer: A) -> A:
    """``buffer`` (a numpy array of numbers a loaded model computed, e.g. a saved KV state) kept out of the scrub
    while it lives."""
    start = buffer.ctypes.data
    _HELD[:] = [held for held in _HELD if held.loaded()]
    _HELD.append(_Held([(start, start + buffer.nbytes)], functools.partial(_alive, weakref.ref(buffer))))
    return buffer


def _alive(buffer: weakref.ref) -> bool:
    return buffer() is not None


def _still_loaded(loaded: Callable[[Any], bool], model: weakref.ref) -> bool:
    """Whether the model lives (held weakly: the registry must not keep gigabytes alive) and says it is loaded."""
    alive = model()
    try:
        return alive is not None and bool(loaded(alive))
    except Exception:  # a model in an odd state: its memory is searched like any
        return False


def model_memory() -> list[tuple[int, int]]:
    """The ranges of the models still loaded."""
    return [piece for held in list(_HELD) if held.loaded() for piece in held.ranges]
