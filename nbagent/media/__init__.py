"""Layer 0, media: values that are not text — images and the agent types tools return.

Modules:
    images       is_image, image_to_png, and the per-step image collector (tool images, matplotlib figures)
    figures      a matplotlib figure in a few numbers (the marks it drew), and the host's check of a sent summary
    agent_types  AgentText, AgentImage, AgentAudio and the input/output conversions of tools
"""

from .images import collect_images, image_to_png, is_image, report_image

__all__ = ["collect_images", "image_to_png", "is_image", "report_image"]
