"""Reading actions out of model text."""

from __future__ import annotations

import ast
import re

from nbagent.errors import AgentParsingError
from nbagent.text import MODEL_ECHO, truncate

__all__ = ["extract_code_from_text", "parse_code_blobs", "echoes_task", "ECHOED_TASK"]

_FENCED = re.compile(r"```(?:py|python|python3)?[ \t]*\n(.*?)\n?```", re.DOTALL)
_TAGGED = re.compile(r"<code>\s*(.*?)\s*</code>", re.DOTALL)
_UNCLOSED = re.compile(r"```(?:py|python|python3)[ \t]*\n(.*)$", re.DOTALL)

# The form only, with placeholders: a model that pastes an example with a value (`final_answer(1024)`) answers with it.
FORMAT_HINT = (
    "Write your reasoning after 'Thought:', then your code in a ```python fenced block; when the code has the "
    "answer, it ends with final_answer. The form, where each <...> stands for your own words and code:\n"
    "Thought: <your reasoning>\n"
    "```python\n<your code>\nfinal_answer(<the variable that holds the answer>)\n```"
)

# Shown the form above after an empty reply, the 1.5B default model sent the form itself back as its next step (the
# messy chart run): an empty reply gets words only, and the task goes on from where it is.
EMPTY_REPLY = (
    "Your reply was empty, so there is nothing to run. Go on with the task from where it is: your reasoning after "
    "'Thought:', then the next few lines of code in a ```python fenced block, using the variables the earlier "
    "steps made."
)

# After a clean slate, the default model once wrote the task and its data card back four times, each cut off at
# its token cap and told to "write shorter code": an echo is said as what it is.
ECHOED_TASK = (
    "Your reply wrote the task out again instead of working on it, so there is nothing to run. Write only your "
    "reasoning after 'Thought:', then the code for the next step in a ```python fenced block."
)
_TASK_HEADING = re.compile(r"\s*(?:New task|Task)\s*:", re.IGNORECASE)
_ECHO_LENGTH = 40  # characters of the task's first line that, found in a reply, make it an echo


def echoes_task(text: str, task: str) -> bool:
    """Whether a reply without code is the task written out again (its heading, or its first line)."""
    if _TASK_HEADING.match(text):
        return True
    first = next((line.strip() for line in task.splitlines() if line.strip()), "")
    return len(first) >= _ECHO_LENGTH and first[:_ECHO_LENGTH] in text


def extract_code_from_text(text: str, code_block_tags: tuple[str, str]) -> str | None:
    """The code between `code_block_tags` (opening, closing; taken literally), every block joined; None if none."""
    opening, closing = (re.escape(tag) for tag in code_block_tags)
    blocks = re.findall(f"{opening}(.*?){closing}", text, re.DOTALL)
    return "\n\n".join(block.strip() for block in blocks) if blocks else None


def parse_code_blobs(text: str, code_block_tags: tuple[str, str] | None = None) -> str:
    """The Python code of a model's answer: every fenced (or <code>) block, joined.

    With `code_block_tags` (smolagents' second argument, e.g. `("<code>", "</code>")`), blocks between those
    tags come first. A model stopped at a stop sequence may leave the last fence unclosed; that
    block is still taken. Raises `AgentParsingError` (shown to the model) when
    there is no code.
    """
    tagged = extract_code_from_text(text, code_block_tags) if code_block_tags else None
    if tagged:
        return tagged
    blocks = _FENCED.findall(text) or _TAGGED.findall(text)
    if not blocks:
        unclosed = _UNCLOSED.search(text)
        blocks = [unclosed.group(1)] if unclosed else []
    if blocks:
        return "\n\n".join(block.strip("\n") for block in blocks)
    if _is_plain_python(text):
        return text.strip()
    if not text.strip():
        raise AgentParsingError(EMPTY_REPLY)
    raise AgentParsingError(
        f"Your answer has no code block, so there is nothing to run.\n{FORMAT_HINT}\nYour answer was:\n{truncate(text, MODEL_ECHO)}"
    )


def _is_plain_python(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped.lower().startswith("thought"):
        return False
    try:
        tree = ast.parse(stripped)
    except SyntaxError:
        return False
    # a single bare name or constant is prose that happens to parse, not an action
    return any(not isinstance(node, ast.Expr) or isinstance(node.value, ast.Call) for node in tree.body)
