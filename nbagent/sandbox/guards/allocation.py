"""The allocation guard: ``*``, ``**`` and ``<<`` (and their in-place forms) refuse absurd results before computing them.

``'a' * 10**10`` would try to allocate 10 GB and ``10**10**8`` would keep the kernel busy, uninterruptibly, for a
long time. The rewrite routes these operators here unless the operands make the result obviously small (both numbers,
a float operand, identical operands, a small constant exponent or shift). The checks use the exact values Python will
use (``int.__index__``, the base types' own ``__len__``), so agent-defined types with a lying ``__index__`` or
``__len__`` cannot slip past.
"""

from __future__ import annotations

import array
import builtins
import collections
import fractions
import operator
from typing import Any

from ..errors import AllocationTooLarge
from . import policy

_REPEATABLE = (str, bytes, bytearray, list, tuple, collections.deque, array.array)


def _format_size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n} TB"


_TRUE_LEN = (
    (str, str.__len__),
    (bytes, bytes.__len__),
    (bytearray, bytearray.__len__),
    (list, list.__len__),
    (tuple, tuple.__len__),
    (collections.deque, collections.deque.__len__),
    (array.array, array.array.__len__),
)


def _true_len(seq: Any) -> int:
    for cls, length in _TRUE_LEN:
        if isinstance(seq, cls):
            return length(seq)
    return len(seq)


def _as_index(value: Any) -> int | None:
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, (float, complex, str, bytes)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


class AllocationGuard:
    """Mixin of :class:`~nbagent.sandbox.guards.Guards` (the rewritten code calls these as ``_nbN.g.mul(a, b)``)."""

    max_allocation_bytes: int | None

    def refuse_allocation(self, what: str) -> None:
        raise AllocationTooLarge(f"{what}; the sandbox refuses it to protect the kernel")

    def _check_repeat(self, seq: Any, count: int) -> None:
        limit = self.max_allocation_bytes
        if limit is None or count <= 1:
            return
        length = _true_len(seq)
        if isinstance(seq, str):
            item = 1 if str.isascii(seq) else 4
        elif isinstance(seq, (bytes, bytearray)):
            item = 1
        else:
            item = 8
        size = length * count * item
        if size > limit:
            self.refuse_allocation(
                f"repeating a {type(seq).__name__} of length {length:,} {count:,} times would allocate about "
                f"{_format_size(size)}, above the limit of {_format_size(limit)} (max_allocation_bytes)"
            )

    def _repeat_operands(self, a: Any, b: Any) -> tuple[Any, Any]:
        """For ``sequence * n``: check the size and return the operands with ``n`` as the exact int Python will use
        (so a lying ``__index__``/``__len__`` on agent-defined types cannot slip past the check)."""
        if isinstance(a, _REPEATABLE) and not isinstance(b, _REPEATABLE):
            count = _as_index(b)
            if count is not None:
                self._check_repeat(a, count)
                return a, count
        elif isinstance(b, _REPEATABLE) and not isinstance(a, _REPEATABLE):
            count = _as_index(a)
            if count is not None:
                self._check_repeat(b, count)
                return count, b
        return a, b

    def mul(self, a: Any, b: Any) -> Any:
        ta = type(a)
        if ta is int or ta is float:
            tb = type(b)
            if tb is int or tb is float:
                return a * b
        a, b = self._repeat_operands(a, b)
        return a * b

    def imul(self, a: Any, b: Any) -> Any:
        a, b = self._repeat_operands(a, b)
        a *= b
        return a

    def _power_operands(self, base: Any, exp: Any) -> Any:
        if not isinstance(exp, int):
            return exp
        exp = int.__index__(exp)
        if exp <= 1:
            return exp
        if isinstance(base, int):
            bits = int.bit_length(base)
        elif isinstance(base, fractions.Fraction):
            numerator = fractions.Fraction.numerator.fget(base)  # type: ignore[attr-defined]
            denominator = fractions.Fraction.denominator.fget(base)  # type: ignore[attr-defined]
            bits = max(int.bit_length(numerator), int.bit_length(denominator))
        else:
            return exp
        if bits > 1 and (bits - 1) * exp > policy.MAX_INT_BITS:
            self.refuse_allocation(
                f"{base if bits < 64 else 'a ' + str(bits) + '-bit number'} ** {exp:,} would have about "
                f"{(bits - 1) * exp:,} bits, above the limit of {policy.MAX_INT_BITS:,} bits"
            )
        return exp

    def power(self, base: Any, exp: Any, mod: Any = None) -> Any:
        if mod is not None:
            return builtins.pow(base, exp, mod)
        return base ** self._power_operands(base, exp)

    def ipow(self, a: Any, b: Any) -> Any:
        a **= self._power_operands(a, b)
        return a

    def _shift_operand(self, a: Any, b: Any) -> Any:
        limit = self.max_allocation_bytes
        if not (isinstance(a, int) and isinstance(b, int)):
            return b
        b = int.__index__(b)
        if limit is not None and b > 0 and int.__index__(a):
            size = (int.bit_length(a) + b) // 8
            if size > limit:
                self.refuse_allocation(
                    f"{a} << {b:,} would allocate about {_format_size(size)}, above the limit of "
                    f"{_format_size(limit)} (max_allocation_bytes)"
                )
        return b

    def lshift(self, a: Any, b: Any) -> Any:
        return a << self._shift_operand(a, b)

    def ilshift(self, a: Any, b: Any) -> Any:
        a <<= self._shift_operand(a, b)
        return a
