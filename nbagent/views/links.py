"""Which links the static HTML keeps clickable: the widget's safe-URL rule (js/markdown.js ``SAFE_URL``), in Python.

A saved run is opened inside Jupyter, on Jupyter's own origin: a relative link the model wrote
(``[x](/api/kernels)``, ``[x](../tree)``, ``//host/x``, ``https:/api`` which a browser resolves against the page) would
act on the user's server with their session. So only absolute ``http://``/``https://`` URLs with a host, ``mailto:``
and in-page ``#fragments`` stay links (opened in a new tab, without opener or referrer); any other link is shown as
its text alone, as the widget does.

A link is followed by where it goes (``Open the report (attacker.example/r?k=…)``): a model, or a prompt injection in
the data it read, could otherwise hide a secret in a URL's query behind friendly text. :func:`link_destination` says
the host, path, query and fragment as they will be opened (js/markdown.js ``linkDestination`` says the same).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, urlsplit

#: Keep in step with SAFE_URL in js/markdown.js.
SAFE_URL = re.compile(r"^(?:https?://[^/\\\s]|mailto:|#)", re.IGNORECASE)


_KEEP = "/%:@!$&'()*+,;=-._~?#[]"  # what a URL may hold as it is; the rest (spaces, controls, non-ASCII) is escaped


def link_destination(href: str) -> str:
    """Where a (safe) link goes, for a person: ``attacker.example/r?k=s3cr3t`` (host as punycode, lower case; path,
    query and fragment percent-encoded where they hold spaces, controls or other characters), the address of a
    ``mailto:`` link, "" for an in-page ``#fragment``."""
    if href.startswith("#"):
        return ""
    if href[:7].lower() == "mailto:":
        return quote(href[7:], safe=_KEEP)
    try:
        parts = urlsplit(href)
        host = _host(parts.hostname or "")
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is no number: said as written
        return quote(href.split("//", 1)[-1], safe=_KEEP)
    user = quote(parts.netloc.rpartition("@")[0], safe=_KEEP) + "@" if "@" in parts.netloc else ""
    path = "" if parts.path in ("", "/") and not parts.query and not parts.fragment else parts.path or "/"
    tail = quote(path, safe=_KEEP) + (f"?{quote(parts.query, safe=_KEEP)}" if parts.query else "")
    return f"{user}{host}{port}{tail}" + (f"#{quote(parts.fragment, safe=_KEEP)}" if parts.fragment else "")


def _host(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return quote(host, safe="")


def is_safe_url(href: Any) -> bool:
    return isinstance(href, str) and bool(SAFE_URL.match(href))


def keep_safe_links(md: Any) -> Any:
    """Install the rule on a markdown-it-py renderer: unsafe links become ``<span>`` of their text."""
    md.core.ruler.push("nbagent_safe_links", _rewrite_links)
    return md


def _rewrite_links(state: Any) -> None:
    for block in state.tokens:
        if not block.children:
            continue
        children: list[Any] = []
        opened: list[tuple[Any, int]] = []  # the link_open tokens and where their text starts
        for token in block.children:
            children.append(token)
            if token.type == "link_open":
                _rewrite_open(token)
                opened.append((token, len(children)))
            elif token.type == "link_close" and opened:
                link, start = opened.pop()
                token.tag = link.tag
                if link.tag == "a":
                    text = "".join(t.content for t in children[start:-1] if t.type in ("text", "code_inline"))
                    children += _destination_tokens(state, str(link.attrGet("href")), text)
        block.children = children


def _destination_tokens(state: Any, href: str, text: str) -> list[Any]:
    """`<span class="nba-link-dest"> (host/path?query)</span>` after a link, unless its text says it already."""
    destination = link_destination(href)
    if not destination or text in (href, destination):
        return []
    token_class = type(state.tokens[0])
    opening = token_class("nba_link_dest_open", "span", 1, attrs={"class": "nba-link-dest"})
    return [
        opening,
        token_class("text", "", 0, content=f" ({destination})"),
        token_class("nba_link_dest_close", "span", -1),
    ]


def _rewrite_open(token: Any) -> None:
    if is_safe_url(token.attrGet("href")):
        token.attrSet("target", "_blank")
        token.attrSet("rel", "noopener noreferrer")
        return
    token.tag = "span"
    token.attrs = {}
