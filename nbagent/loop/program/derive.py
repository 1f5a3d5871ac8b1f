"""Which statements of a run make its program: the path to the answer, sliced (see slicing.py).

The path is the live memory (a re-run from a step already cut the abandoned line off; a `--continue`d run keeps
the earlier task's steps, whose names the later code may use; a person's edit at approval is the code that ran).
Its last answering step must come after the last task: a run that did not answer has no program. A step whose
code ran to its end gives all its statements; a step that failed or was stopped gives only the statements that
bound the names its record says it made (those ran before the failure); a step whose code never ran (rejected
at approval, refused as a repeat) gives none. In the answering step, `final_answer(x)` becomes `answer = x` and
what follows it is dropped (it never ran); in earlier steps a `final_answer` call (a refused answer, an earlier
task's) is dropped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nbagent.record import CODE_TOOL_NAME, ActionStep, TaskStep

from .analysis import is_answer_call
from .slicing import Statement, backward_slice, strip_shows

__all__ = ["Derivation", "derive", "task_names", "NO_ANSWER"]

NO_ANSWER = "the last run has no final answer"

_NAMED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_MADE = ("created", "rebound", "modified")


@dataclass
class Derivation:
    """The kept statements, the names they read before binding them (`free`, in order), the names the task asked
    for that they bind (`outputs`), the steps they come from, the answer the run gave; or `reason` why none."""

    statements: list[Statement] = field(default_factory=list)
    free: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    answer: Any = None
    reason: str = ""


def task_names(task: str) -> set[str]:
    """The names a task writes as `name` or {name}."""
    return {a or b for a, b in _NAMED.findall(task or "")}


def derive(memory_steps: Sequence[Any]) -> Derivation:
    """The program's statements from a memory's steps (the live line)."""
    answering = _answering_step(memory_steps)
    if isinstance(answering, str):
        return Derivation(reason=answering)
    task = next((s.task for s in reversed(memory_steps) if isinstance(s, TaskStep)), "")
    actions = [s for s in memory_steps if isinstance(s, ActionStep)]
    statements: list[Statement] = []
    for step in actions[: actions.index(answering) + 1]:
        statements += _statements_of(step, answer=step is answering)
    if not any(s.step == answering.step_number and "answer" in s.facts.defines for s in statements):
        return Derivation(reason="its answering step's code could not be read as Python")
    outputs = task_names(task) & set().union(*(s.facts.kills for s in statements))
    kept = backward_slice(statements, outputs)
    return Derivation(
        statements=kept,
        free=_free_in_order(kept),
        outputs=sorted(outputs),
        steps=sorted({s.step for s in kept}),
        answer=answering.action_output,
    )


def _answering_step(memory_steps: Sequence[Any]) -> ActionStep | str:
    """The step whose code gave the last run's answer, or why there is none."""
    last_task = max((i for i, s in enumerate(memory_steps) if isinstance(s, TaskStep)), default=-1)
    for step in reversed(memory_steps[last_task + 1 :]):
        if isinstance(step, ActionStep) and step.is_final_answer:
            if type(step.error).__name__ == "AgentMaxStepsError":  # the closing reply after max steps
                break
            if step.code_action is None:
                return "its answer was not given by code (a tool-calling agent's steps are tool calls)"
            return step
    if not any(isinstance(s, ActionStep) for s in memory_steps[last_task + 1 :]):
        return "there is no run with steps to turn into code"
    return NO_ANSWER


def _statements_of(step: ActionStep, answer: bool) -> list[Statement]:
    ran = _ran(step)
    if ran == "no":
        return []
    code = step.code_action or ""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    made = {c.get("name") for c in step.namespace_changes or [] if isinstance(c, dict) and c.get("change") in _MADE}
    statements = []
    for node in tree.body:
        gives_answer = answer and any(is_answer_call(n) for n in ast.walk(node))
        shown, changed = strip_shows(node, answer=answer)
        if isinstance(shown, ast.Pass):
            continue
        text = ast.unparse(shown) if changed or _decorated(node) else ast.get_source_segment(code, node) or ""
        statement = Statement(shown, text, step.step_number)
        if ran == "all" or isinstance(node, (ast.Import, ast.ImportFrom)) or statement.facts.defines <= made:
            statements.append(statement)
        if gives_answer and isinstance(node, ast.Expr):
            break  # the code after final_answer(...) never ran
    return statements


def _ran(step: ActionStep) -> str:
    """ "all": the code ran to its end; "part": it failed or was stopped on the way; "no": it never ran."""
    if step.code_action is None:
        return "no"
    executed = step.namespace_changes is not None or any(c.name == CODE_TOOL_NAME for c in step.tool_calls or [])
    if not executed:
        return "no"
    if step.stopped:
        return "part"
    return "all" if step.error is None or _refused_answer(step.error) else "part"


def _refused_answer(error: Any) -> bool:
    """A final answer (or chart) the checks refused: the code itself ran to its end."""
    if type(error).__name__ == "AnswerRefused":
        return True
    text = str(error)
    return text.startswith(("final_answer(", "The chart was refused")) and " refused" in text


def _decorated(node: ast.stmt) -> bool:
    return bool(getattr(node, "decorator_list", None))  # its source segment would start at `def`, not at `@`


def _free_in_order(statements: list[Statement]) -> list[str]:
    """The names the statements read before any of them binds them, in the order they are first read."""
    bound: set[str] = set()
    free: list[str] = []
    for statement in statements:
        for name in _reads_in_order(statement.node):
            if name in statement.facts.uses and name not in bound and name not in free:
                free.append(name)
        bound |= statement.facts.defines
    return free


def _reads_in_order(node: ast.AST) -> list[str]:
    names = [n for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    names.sort(key=lambda n: (n.lineno, n.col_offset))
    return list(dict.fromkeys(n.id for n in names))
