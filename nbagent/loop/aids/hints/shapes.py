"""numpy 2's axis and shape errors, said in the terms of the data (an `AxisError`, a broadcast, …).

The error says an axis or shapes; the hint says how many dimensions the array has and how many rows the
frames of the failing line have.
"""

from __future__ import annotations

from ..data_card import frames_in
from ..error_keys import axis_problem, shape_problem
from .failure import Failure

__all__ = ["numpy_hint"]


def numpy_hint(found: Failure) -> str:
    """numpy 2's axis and shape errors, said in the terms of the data (an `AxisError`, a broadcast, …)."""
    cause, message = found.cause, found.message
    axis = axis_problem(message) if cause == "AxisError" or "AxisError" in message else None
    if axis is not None:
        dims = "1 dimension" if axis.ndim == 1 else f"{axis.ndim} dimensions"
        return (
            f"Hint: that array has {dims}, so axis={axis.axis} does not exist (axes are 0 to {axis.ndim - 1}). For a "
            "table, axis=0 works down the rows (per column) and axis=1 across a row; a 1-D array or Series needs no axis."
        )
    shape = shape_problem(message) if cause == "ValueError" else ""
    if not shape:
        return ""
    frames = frames_in(found.source, found.namespace)[:2]
    sizes = "; ".join(f"`{name}` has {len(frame)} rows" for name, frame in frames)
    return f"Hint: {shape}." + (f" {sizes}." if sizes else "")
