"""Collecting the images a step produces: images tools return, and matplotlib figures the code draws.

While `collect_images()` is active (around one code action), tools report the
images they return (`report_image`), and matplotlib figures created by the code
are rendered to PIL images and closed, so they appear in the step, not in the
notebook cell's own output (`plt.show()` included). Each figure's summary (`figures.figure_summary`: the marks
it drew) goes to the `figures` list the caller passes.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .figures import MAX_FIGURES, figure_summary

__all__ = ["collect_images", "report_image", "is_image", "image_to_png"]

_collector: ContextVar[list[Any] | None] = ContextVar("nbagent_images", default=None)


def report_image(image: Any) -> None:
    """Record `image` in the step being collected (no-op outside `collect_images`)."""
    images = _collector.get()
    if images is not None and all(image is not seen for seen in images):
        images.append(image)


@contextmanager
def collect_images(load_matplotlib: bool = False, figures: list[Any] | None = None) -> Iterator[list[Any]]:
    """Yield the list that receives the step's images; `load_matplotlib` imports pyplot first so
    that `plt.show()` inside the code is caught too (pass it when the code mentions matplotlib).
    `figures`, if given, receives the summary of each matplotlib figure taken (`figure_summary`)."""
    images: list[Any] = []
    token = _collector.set(images)
    pyplot = _pyplot(load_matplotlib)
    before = set(pyplot.get_fignums()) if pyplot else set()
    original_show = pyplot.show if pyplot else None
    if pyplot is not None:
        pyplot.show = lambda *args, **kwargs: _take_new_figures(pyplot, before, images, figures)
    try:
        yield images
    finally:
        _collector.reset(token)
        if pyplot is not None:
            pyplot.show = original_show
        pyplot = sys.modules.get("matplotlib.pyplot")  # the code may have imported it itself
        if pyplot is not None:
            _take_new_figures(pyplot, before, images, figures)


def _pyplot(load: bool) -> Any:
    if load and "matplotlib.pyplot" not in sys.modules:
        try:
            import matplotlib.pyplot  # noqa: F401
        except ImportError:
            return None
    return sys.modules.get("matplotlib.pyplot")


def _take_new_figures(pyplot: Any, before: set[int], images: list[Any], figures: list[Any] | None) -> None:
    from PIL import Image

    for number in pyplot.get_fignums():
        if number in before:
            continue
        figure = pyplot.figure(number)
        buffer = io.BytesIO()
        try:
            figure.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
            if figures is not None and len(figures) < MAX_FIGURES:  # read once drawn: the tick labels are laid out
                figures.append(figure_summary(figure))
        finally:
            pyplot.close(figure)
        image = Image.open(io.BytesIO(buffer.getvalue()))
        image.load()
        images.append(image)


def is_image(value: Any) -> bool:
    """True for PIL images and AgentImage (checked by name: PIL stays an optional import)."""
    return type(value).__module__.startswith("PIL.") or type(value).__name__ == "AgentImage"


def image_to_png(image: Any) -> bytes:
    """PNG bytes of a PIL image or AgentImage."""
    pil = image.to_raw() if hasattr(image, "to_raw") else image
    buffer = io.BytesIO()
    pil.save(buffer, format="PNG")
    return buffer.getvalue()
