"""Layer 0, media: values that are not text — images and the agent types tools return.

Modules:
    images       is_image, image_to_png, and the per-step image collector (tool images, matplotlib figures)
    agent_types  AgentText, AgentImage, AgentAudio and the input/output conversions of tools
"""

from .images import collect_images, image_to_png, is_image, report_image

__all__ = ["collect_images", "image_to_png", "is_image", "report_image"]
