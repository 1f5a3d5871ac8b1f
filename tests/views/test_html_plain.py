"""The static HTML of a run reads well with its styles dropped (an untrusted notebook, GitHub, nbviewer).

The page is reduced to what a reader without CSS sees: `<style>` and every attribute gone, block
elements on their own lines, inline elements run together. Separators must then be in the text:
"Step 1 · 812 in · 31 out tokens · 800 ms", never "Step 1812 in · 31 out tokens800 ms".
"""

from __future__ import annotations

from html.parser import HTMLParser

from nbagent import ActionStep, AgentMemory, TaskStep, Timing
from nbagent.errors import AgentExecutionError
from nbagent.models.base import TokenUsage
from nbagent.views.html import memory_to_html, static_css

BLOCKS = {"div", "p", "pre", "hr", "li", "ul", "ol", "details", "summary", "table", "tr", "h1", "h2", "h3"}


class PlainText(HTMLParser):
    """Text as a browser lays it out without CSS: blocks on their own lines, `<style>` dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.in_style = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.in_style = tag == "style"
        if tag in BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        self.in_style = False
        if tag in BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.in_style:
            self.parts.append(data)

    def lines(self) -> list[str]:
        return [line.strip() for line in "".join(self.parts).split("\n") if line.strip()]


def plain_lines(html: str) -> list[str]:
    parser = PlainText()
    parser.feed(html)
    return parser.lines()


def memory() -> AgentMemory:
    memory = AgentMemory("system")
    memory.steps = [
        TaskStep(task="Divide 1 by 0."),
        ActionStep(
            step_number=1,
            timing=Timing(0.0, 0.8),
            model_output="Thought: try it.",
            code_action="x = 1/0",
            error=AgentExecutionError("ZeroDivisionError: division by zero"),
            token_usage=TokenUsage(812, 31),
        ),
        ActionStep(
            step_number=2,
            timing=Timing(0.8, 3.8),
            model_output="Thought: done.",
            code_action="final_answer('undefined')",
            action_output="undefined",
            is_final_answer=True,
            token_usage=TokenUsage(905, 12),
        ),
    ]
    return memory


def test_without_styles_the_items_of_a_line_are_separated() -> None:
    lines = plain_lines(memory_to_html(memory(), agent_name="calc", model_id="scripted"))
    assert lines[0] == "calc · scripted · done · run 0:03"  # the total, as the widget's clock says it
    assert "Step 1 · error · 812 in · 31 out tokens · 800 ms" in lines  # its badge, as in the widget
    assert "Step 2 · 905 in · 12 out tokens · 3.0 s" in lines
    assert lines[-1] == "2 steps · 1.7k in · 43 out tokens · 3.8 s"
    assert not any("tokens3" in line or "Step 1812" in line for line in lines)


def test_steps_are_divided_by_rules_that_the_styles_hide() -> None:
    html = memory_to_html(memory())
    assert html.count('<hr class="nba-rule">') == 4  # task | step 1 | step 2 | answer | footer
    assert ".nba-sep, .nbagent.nbagent hr.nba-rule { display: none; }" in static_css()
    assert static_css() in html  # styled: the separators and rules are hidden again


def test_code_lines_get_no_band_of_their_own() -> None:
    css = static_css()
    assert ".nbagent.nbagent.nbagent pre code, .nbagent.nbagent.nbagent pre code span { background: transparent;" in css
