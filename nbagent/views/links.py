"""Which links the static HTML keeps clickable: the widget's safe-URL rule (js/markdown.js ``SAFE_URL``), in Python.

A saved run is opened inside Jupyter, on Jupyter's own origin: a relative link the model wrote
(``[x](/api/kernels)``, ``[x](../tree)``, ``//host/x``, ``https:/api`` which a browser resolves against the page) would
act on the user's server with their session. So only absolute ``http://``/``https://`` URLs with a host, ``mailto:``
and in-page ``#fragments`` stay links (opened in a new tab, without opener or referrer); any other link is shown as
its text alone, as the widget does.
"""

from __future__ import annotations

import re
from typing import Any

#: Keep in step with SAFE_URL in js/markdown.js.
SAFE_URL = re.compile(r"^(?:https?://[^/\\\s]|mailto:|#)", re.IGNORECASE)


def is_safe_url(href: Any) -> bool:
    return isinstance(href, str) and bool(SAFE_URL.match(href))


def keep_safe_links(md: Any) -> Any:
    """Install the rule on a markdown-it-py renderer: unsafe links become ``<span>`` of their text."""
    md.core.ruler.push("nbagent_safe_links", _rewrite_links)
    return md


def _rewrite_links(state: Any) -> None:
    for block in state.tokens:
        opened: list[Any] = []  # the link_open tokens, to close their links the same way
        for token in block.children or ():
            if token.type == "link_open":
                _rewrite_open(token)
                opened.append(token)
            elif token.type == "link_close" and opened:
                token.tag = opened.pop().tag


def _rewrite_open(token: Any) -> None:
    if is_safe_url(token.attrGet("href")):
        token.attrSet("target", "_blank")
        token.attrSet("rel", "noopener noreferrer")
        return
    token.tag = "span"
    token.attrs = {}
