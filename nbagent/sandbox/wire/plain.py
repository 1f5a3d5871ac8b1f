"""The wire format's vocabulary: its limits, its errors, and the one value type it defines (:class:`AgentValue`).

What travels and how is said in ``codec``; ``encoding`` (the worker's side) and ``decoding`` (the host's side) both
build on the names here, so that the two ends agree on every limit.
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any

from .budget import MAX_HEADER_BYTES

MAX_DEPTH = 64
MAX_NODES = 2_000_000
#: Ints travel up to CPython's int/str conversion limit (4300 decimal digits by default: about 14,300 bits).
MAX_INT_BITS = math.ceil((sys.get_int_max_str_digits() or 4300) * math.log2(10))
#: Strings this long go as a UTF-8 buffer (once, however often they occur), lists of scalars this long as JSON in a
#: buffer (outside the header).
LONG_STR = 1024
LONG_LIST = 256
JSON_PART_ITEMS = 4096
JSON_PART_BYTES = 1 << 20
#: A dict or set may have this many keys sharing a hash with another key (building it is quadratic in them).
MAX_HASH_COLLISIONS = 1024
#: The worker keeps its (upper-bound) estimate of a frame's JSON header under this.
HEADER_ESTIMATE_LIMIT = MAX_HEADER_BYTES // 2
CHECK_EVERY_NODES = 4096
MAX_DECIMAL_CHARS = 10_000
DTYPE_PATTERN = re.compile(r"^[<>|=][biufcmMSU]\d{1,4}(\[[A-Za-z0-9]{1,3}\])?$")
IMAGE_MODES = frozenset({"1", "L", "LA", "RGB", "RGBA", "I", "F", "I;16", "CMYK"})
MASKED_DTYPES = {
    "Int8": "i1", "Int16": "i2", "Int32": "i4", "Int64": "i8", "UInt8": "u1", "UInt16": "u2", "UInt32": "u4",
    "UInt64": "u8", "Float32": "f4", "Float64": "f8", "boolean": "b1",
}  # fmt: skip


class WireError(ValueError):
    """The data does not follow the format (the host treats the worker as broken)."""


class NotPlain(Exception):
    """Raised by the encoder: the value is not plain data (or too deep, or too large)."""


class TooLarge(NotPlain):
    """Raised by the encoder: the value does not fit in the budget (the whole top-level value becomes a handle)."""


class DecodeAbandoned(Exception):
    """Raised by the decoder's ``check``: the step's deadline passed or a stop was requested (``reason``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def collisions(keys: Any) -> int:
    """How many of ``keys`` share their hash with an earlier key (cheap: the keys' hashes only)."""
    return len(keys) - len(set(map(hash, keys)))


class AgentValue:
    """Stands for an output whose class the agent's code defined (or that holds such objects): its ``repr`` and
    ``str``, computed under the call's limits, so that showing it later runs no agent code."""

    __slots__ = ("text", "str_text", "type_name")

    def __init__(self, text: str, str_text: str, type_name: str) -> None:
        self.text, self.str_text, self.type_name = str(text), str(str_text), type_name

    def __repr__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.str_text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AgentValue) and other.text == self.text

    __hash__ = None  # type: ignore[assignment]


JSON_KINDS = frozenset({int, float, str, bool, type(None)})
