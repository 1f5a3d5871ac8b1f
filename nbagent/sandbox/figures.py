"""Matplotlib in the worker: a non-interactive backend, and the figures a call drew, taken as PIL images.

The forked kernel may have the inline backend loaded, whose ``show()`` would publish on the kernel's (closed)
connection; the worker switches pyplot to Agg at start, makes ``plt.show()`` a no-op, and after each call renders the
figures that are new since the call began and closes them.
"""

from __future__ import annotations

import io
import sys
from typing import Any


def use_agg() -> None:
    """Make matplotlib (if the kernel imported it) draw off-screen; ``show()`` keeps figures for :func:`take_new`."""
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is None:
        return
    try:
        matplotlib.rcParams["backend"] = "agg"
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.switch_backend("agg")
            pyplot.show = _show
    except Exception:
        pass


def _show(*args: Any, **kwargs: Any) -> None:
    """``plt.show()`` in the worker: the figures stay open and become the step's images."""


def open_figures() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return set()
    if pyplot.show is not _show:
        use_agg()
    return set(pyplot.get_fignums())


def take_new(before: set[int], limit: int = 20) -> list[Any]:
    """Render and close the figures not in ``before``; PIL images (RGBA)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    from PIL import Image

    images = []
    for number in pyplot.get_fignums():
        if number in before:
            continue
        figure = pyplot.figure(number)
        try:
            if len(images) < limit:
                buffer = io.BytesIO()
                figure.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
                image = Image.open(io.BytesIO(buffer.getvalue()))
                image.load()
                images.append(image)
        except Exception:
            pass
        finally:
            pyplot.close(figure)
    return images
