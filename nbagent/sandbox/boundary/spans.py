"""Sets of addresses as sorted lists of half-open ``(start, end)`` ranges, and their form on the wire."""

from __future__ import annotations

from array import array

Spans = list[tuple[int, int]]


def merged(ranges: Spans) -> Spans:
    """``ranges`` (in any order, overlapping or touching) as sorted disjoint ranges."""
    out: Spans = []
    for low, high in sorted(ranges):
        if out and low <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def without(runs: Spans, skip: Spans) -> Spans:
    """``runs`` less the ``skip`` ranges (runs sorted and non-overlapping; skip in any order): one sweep."""
    skip = merged(list(skip))
    out = []
    index = 0
    for start, end in runs:
        while index < len(skip) and skip[index][1] <= start:
            index += 1
        at = index
        while at < len(skip) and skip[at][0] < end:
            low, high = skip[at]
            if low > start:
                out.append((start, low))
            start = max(start, high)
            at += 1
        if start < end:
            out.append((start, end))
    return out


def intersection(first: Spans, second: Spans) -> Spans:
    """What both sorted disjoint lists cover."""
    out: Spans = []
    i = j = 0
    while i < len(first) and j < len(second):
        low, high = max(first[i][0], second[j][0]), min(first[i][1], second[j][1])
        if low < high:
            out.append((low, high))
        if first[i][1] < second[j][1]:
            i += 1
        else:
            j += 1
    return out


def whole_pages(ranges: Spans, page: int) -> Spans:
    """The whole pages inside each range (a range's partial first and last pages left out)."""
    out = []
    for start, end in ranges:
        low, high = -(-start // page) * page, end - end % page
        if low < high:
            out.append((low, high))
    return out


def to_bytes(ranges: Spans) -> bytes:
    return array("Q", [bound for span in ranges for bound in span]).tobytes()


def from_bytes(data: bytes | memoryview) -> Spans:
    """The ranges :func:`to_bytes` wrote; anything malformed reads as none (never a wrong range)."""
    bounds = array("Q")
    if len(data) % 16:
        return []
    bounds.frombytes(bytes(data))
    pairs = list(zip(bounds[::2], bounds[1::2]))
    if any(low >= high for low, high in pairs) or pairs != merged(pairs):
        return []
    return pairs
