"""The static HTML keeps only the links the widget keeps: absolute http(s), mailto and #fragments."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from nbagent.views.html import run_to_html
from nbagent.views.links import SAFE_URL, is_safe_url, link_destination

ROOT = Path(__file__).resolve().parents[2]
SAFE = ["https://example.org/a?b=1", "http://a.b/c", "HTTPS://EXAMPLE.ORG", "mailto:a@b.c", "#top"]
UNSAFE = [
    "/api/kernels",
    "../tree",
    "api/sessions",
    "//evil.example/x",
    "https:/api/kernels",  # same scheme as the page: the browser resolves it against Jupyter's origin
    "http:api",
    "https:///api",
    "javascript:alert(1)",
    "data:text/html,x",
    "file:///etc/passwd",
    "",
]


def _links(markdown: str) -> BeautifulSoup:
    run = {
        "task": "t",
        "status": "done",
        "steps": [{"kind": "task", "step_number": None, "task": markdown, "images": []}],
        "final_answer": {"text": markdown, "type": "str", "images": []},
    }
    return BeautifulSoup(run_to_html(run, [], css=False), "html.parser")


@pytest.mark.parametrize("href", UNSAFE)
def test_unsafe_links_are_shown_as_their_text(href: str) -> None:
    page = _links(f"see [the target]({href}) and [ref][r]\n\n[r]: {href or '/api'}")
    assert page.select("a") == []
    assert "the target" in page.text


def test_safe_links_stay_and_open_without_opener() -> None:
    page = _links(" ".join(f"[l{i}]({href})" for i, href in enumerate(SAFE)) + " <https://auto.example/p>")
    anchors = page.select(".nba-final a")
    assert [a["href"] for a in anchors] == [*SAFE, "https://auto.example/p"]
    assert len(page.select("a")) == 2 * len(anchors)  # the task shows them too
    assert {a["rel"] and " ".join(a["rel"]) for a in anchors} == {"noopener noreferrer"}
    assert {a["target"] for a in anchors} == {"_blank"}


def test_link_text_markup_survives_when_the_link_goes() -> None:
    page = _links("[**bold** text](/api/kernels)")
    assert page.select("a") == [] and page.select_one("strong").text == "bold"


def test_the_rule_is_the_widgets() -> None:
    source = (ROOT / "js" / "markdown.js").read_text()
    js_pattern = re.search(r"const SAFE_URL = /(.+)/i;", source)
    assert js_pattern, "js/markdown.js defines SAFE_URL"
    js_rule = re.compile(js_pattern.group(1), re.IGNORECASE)
    for href in SAFE + UNSAFE:
        assert bool(js_rule.match(href)) == is_safe_url(href) == (href in SAFE), href
    assert SAFE_URL.flags & re.IGNORECASE


SECRET_LINK = "[Open the full report](https://attacker.example/r?k=s3cr3t-t0ken)"


def test_a_link_shows_where_it_goes_next_to_its_text() -> None:
    """A model (or an injection in its data) hides a secret in a link's query behind friendly text (issue 29 item 6):
    the page says the host, path and query next to the text."""
    page = _links(f"Done. {SECRET_LINK}, or **[mail us](mailto:x@evil.example?body=s3cr3t)**. [top](#top)")
    final = page.select_one(".nba-final")
    assert [span.text for span in final.select(".nba-link-dest")] == [
        " (attacker.example/r?k=s3cr3t-t0ken)",
        " (x@evil.example?body=s3cr3t)",
    ]
    assert "Open the full report (attacker.example/r?k=s3cr3t-t0ken), or mail us (x@evil.example?body=s3cr3t)." in (
        final.text
    )
    assert final.select_one("a").find_next_sibling().text == " (attacker.example/r?k=s3cr3t-t0ken)"


@pytest.mark.parametrize(
    ("href", "shown"),
    [
        ("https://Attacker.Example:8443/a%20b?q=1#f", "attacker.example:8443/a%20b?q=1#f"),
        ("https://user:pw@evil.example/", "user:pw@evil.example"),
        ("https://bücher.example/x y", "xn--bcher-kva.example/x%20y"),  # no look-alike host, no hidden space
        ("https://e.example/\u202eexe.pdf", "e.example/%E2%80%AEexe.pdf"),
        ("#top", ""),
    ],
)
def test_the_destination_is_said_as_it_will_be_opened(href: str, shown: str) -> None:
    assert link_destination(href) == shown


def test_a_link_that_says_its_url_is_not_said_twice() -> None:
    page = _links("<https://a.example/x> and [https://a.example/y](https://a.example/y)")
    assert page.select(".nba-link-dest") == []


def test_the_console_shows_a_links_destination() -> None:
    from rich.console import Console, Group

    from nbagent.record import ActionStep
    from nbagent.views.console import LogLevel, render_action_step

    step = ActionStep(step_number=1, model_output=f"Thought: see {SECRET_LINK}\n")
    console = Console(record=True, width=200)
    console.print(Group(*render_action_step(step, LogLevel.INFO)))
    assert "Open the full report (https://attacker.example/r?k=s3cr3t-t0ken)" in console.export_text()
