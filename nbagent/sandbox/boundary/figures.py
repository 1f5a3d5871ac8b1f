"""Matplotlib in the worker: a non-interactive backend, and the figures a call drew, taken as PIL images.

The forked kernel may have the inline backend loaded, whose ``show()`` would publish on the kernel's (closed)
connection; the worker switches pyplot to Agg at start. ``plt.show()`` in a call renders and closes the figures that
are new since the call began (so a figure drawn after it is a new one, as in a notebook), and after the call the rest
are rendered and closed too. Each rendered figure is also read in a few numbers (``nbagent.media.figures``: the marks
it drew), sent beside the images as plain data the host checks again.
"""

from __future__ import annotations

import io
import sys
from typing import Any

from nbagent.media.figures import figure_summary


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
            # the kernel's open figures, copied by the fork, are not the agent's: `plt.plot` drew on the kernel's
            # current figure, which counted as open before the call and was never taken (closed here, not there)
            pyplot.close("all")
    except Exception:
        pass


# The current call's figures: those open when it began, those ``plt.show()`` already took, and their summaries.
_CALL: dict[str, Any] = {"before": set(), "taken": [], "summaries": []}


def _show(*args: Any, **kwargs: Any) -> None:
    """``plt.show()`` in the worker: the call's new figures become step images now (and are closed)."""
    _CALL["taken"] += _render_new(_CALL["before"], limit=20 - len(_CALL["taken"]))


def open_figures() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    before = set(pyplot.get_fignums()) if pyplot is not None else set()
    if pyplot is not None and pyplot.show is not _show:
        use_agg()
    _CALL["before"], _CALL["taken"], _CALL["summaries"] = before, [], []
    return before


def take_new(before: set[int], limit: int = 20) -> list[Any]:
    """The call's figures as PIL images: those ``plt.show()`` took, then the new ones still open (closed now)."""
    taken, _CALL["taken"] = _CALL["taken"], []
    return taken + _render_new(before, limit - len(taken))


def take_summaries() -> list[dict[str, Any]]:
    """The summaries of the figures the call's images were rendered from (after :func:`take_new`), in their order."""
    summaries, _CALL["summaries"] = _CALL["summaries"], []
    return summaries


def _render_new(before: set[int], limit: int) -> list[Any]:
    """Render and close the figures not in ``before``; PIL images (RGBA)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    from PIL import Image

    images: list[Any] = []
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
                _CALL["summaries"].append(figure_summary(figure))
        except Exception:
            pass
        finally:
            pyplot.close(figure)
    return images
