"""The KV states of prompts a newer prompt branched away from, so a later prompt that starts like one of them again
evaluates only what is new (llama.cpp models).

llama.cpp keeps one sequence: a call reuses the longest start it shares with the *last* prompt and drops the rest.
A notebook asks about several frames in turn, and the data card of each comes before the question: a question about
`orders` after one about `clients` evaluated the whole `orders` card again (~1,000 tokens, 15 s on 2 cores), though
the question before last had computed it. Before a call drops a long stretch of the live sequence, :class:`PromptStates`
copies the context's state (its KV cache, ~28 KB per token for the 1.5B default) and, when a later prompt shares a
longer start with a kept state than with the live one, puts that state back first.

The states live in numpy buffers registered with the secrets scrub's model memory (:mod:`model_memory`): numbers the
model computed, never a copy of a secret's bytes, and not searched at a worker's start; an evicted state is searched
again like any memory. The kept states stay within ``budget_bytes``, the least recently used dropped first.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbagent.sandbox.boundary.model_memory import remember_model_buffer

if TYPE_CHECKING:  # numpy comes with llama-cpp-python; nbagent itself imports without it
    import numpy as np

#: A state is kept or restored only for at least this many tokens (fewer evaluate faster than a state copies).
MIN_TOKENS = 64


@dataclass(eq=False)  # told apart by identity (its arrays have no one truth value)
class _State:
    tokens: np.ndarray  # the token ids the state holds, in order
    data: np.ndarray  # llama.cpp's state bytes (uint8)


def shared_start(first: Sequence[int] | np.ndarray, second: Sequence[int] | np.ndarray) -> int:
    """How many tokens the two sequences share from their start."""
    import numpy as np

    length = min(len(first), len(second))
    differ = np.flatnonzero(np.asarray(first[:length]) != np.asarray(second[:length]))
    return int(differ[0]) if differ.size else length


class PromptStates:
    """The states kept for one `llama_cpp.Llama` (calls are serialised by the model's lock)."""

    def __init__(self, llama_cpp: Any, llm: Any, budget_bytes: int) -> None:
        self._llama_cpp, self._llm = llama_cpp, llm
        self.budget_bytes = budget_bytes
        self._states: list[_State] = []  # least recently used first

    @property
    def held_bytes(self) -> int:
        return sum(state.data.nbytes for state in self._states)

    def __len__(self) -> int:
        return len(self._states)

    def prepare(self, prompt: Sequence[int]) -> None:
        """Before a call on ``prompt``: keep the live state if the call would drop a long stretch of it, put back the
        kept state sharing the longest start with ``prompt`` if it beats the live one."""
        if self.budget_bytes <= 0:
            return
        live = self._llm.input_ids[: self._llm.n_tokens]
        live_shared = shared_start(live, prompt)
        if len(live) - live_shared >= MIN_TOKENS:
            self._keep(live.copy())
        shared, best = max(
            ((shared_start(state.tokens, prompt), state) for state in self._states),
            key=lambda kept: kept[0],
            default=(0, None),
        )
        if best is not None and shared >= live_shared + MIN_TOKENS:
            self._restore(best)

    def _keep(self, tokens: np.ndarray) -> None:
        """Copy the context's state (it holds ``tokens``), dropping the kept states it extends."""
        self._states = [state for state in self._states if shared_start(state.tokens, tokens) < len(state.tokens)]
        size = int(self._llama_cpp.llama_state_get_size(self._llm.ctx))
        if size > self.budget_bytes:
            return
        import numpy as np

        data = np.empty(size, dtype=np.uint8)
        written = self._llama_cpp.llama_state_get_data(self._llm.ctx, _pointer(data), size)
        if not 0 < written <= size:
            return
        data = remember_model_buffer(data[:written])
        self._states.append(_State(tokens, data))
        while self.held_bytes > self.budget_bytes:
            self._states.pop(0)

    def _restore(self, state: _State) -> None:
        self._states.remove(state)
        if self._llama_cpp.llama_state_set_data(self._llm.ctx, _pointer(state.data), state.data.nbytes) == 0:
            self._llm.reset()  # the context is in an unknown state: the call evaluates its whole prompt
            return  # (and the state that would not load is let go)
        self._llm.input_ids[: len(state.tokens)] = state.tokens
        self._llm.n_tokens = len(state.tokens)
        self._llm._requires_eval = True  # the logits are the state's: the call evaluates at least one token anew
        self._states.append(state)  # the most recently used


def _pointer(data: np.ndarray) -> Any:
    return data.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
