"""The one seam the code step calls for the small-model aids: before, while and after a step runs.

Every aid is a general rule with tests of its own, in its own module; `Coach` only decides which apply
(the small profile gets them all, other models the hints and the repeat breaker) and passes them what
they read. The code step never imports an aid directly.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Sequence
from typing import Any

from nbagent.errors import AgentRepeatedCodeError
from nbagent.record import ActionStep
from nbagent.sandbox import handle_advice, is_worker_handle

from .answers import AnswerContext, Contradiction, answer_problems
from .chart_checks import chart_only, chart_problems, chart_taken_note, plotted_name
from .cleaned_program import (
    cleaned_program,
    offer_in_place,
    offer_reply,
    offer_taken,
    offered_program,
    ran_in_place,
)
from .code_checks import CodeFix, code_warning, fix_totals, rewritten
from .coercions import fix_lossy_conversions, numbers_lost
from .data_card import split_task
from .date_reads import fix_date_reads
from .doubts import Mended, Untidy
from .hints import execution_hint, silent_step_observation
from .history import small_model_messages
from .kept_data import frame_losses
from .own_names import rename_kept_names
from .reconversions import fix_reconversions
from .repeats import (
    AGAIN_NOTE,
    Repeat,
    done_refusal,
    ending,
    refusal,
    repeat_of,
    same_failure_ending,
    same_failure_note,
)
from .selections import empty_selections
from .text_masks import fix_text_masks
from .untidy_answers import groups_split_by_spelling, text_totalled

__all__ = ["Coach", "Repeat"]

_TEXT_NUMBERS = "holds numbers written as text"  # the conversion hint's words (hints/conversions.py)
_TEXT_KEY = "Its text holds"  # the merge hint's words for a key written as text on one side (hints/merges.py)


class Coach:
    """The aids for one agent's code steps.

    small: the model is a small local one (`prompting.prompt_profile`): its messages are compacted, its code
        checked and fixed where the meaning is certain, and its final answers checked against the data.
    failed: whether a step's code failed (ran and raised, or was refused by a check) — the loop's own rule.
    """

    def __init__(self, small: bool, failed: Callable[[ActionStep], bool]) -> None:
        self.small = small
        self.failed = failed
        self._given: dict[str, Any] = {}
        self._renamed: dict[str, str] = {}  # a name the notebook keeps -> the code's own name for it, this task
        self._question = ""

    # ------------------------------------------------------------------------------------------ before a step

    def messages(self, memory: Any) -> list[Any] | None:
        """What a small model reads at this step, or None: the memory's own messages."""
        return small_model_messages(memory, self._slate_failure) if self.small else None

    def task_begins(self, task: str, namespace: dict[str, Any]) -> None:
        """Before the first code of `task` runs: the variables it names, as it gives them (the answer checks read the
        things a "which <thing>" question asks for from them, whatever the code rebinds the names to)."""
        self._question, variables = split_task(task)
        self._given = {name: namespace[name] for name in variables if name in namespace}
        self._renamed = {}

    def prepared_code(
        self, code: str, namespace: dict[str, Any], actions: Sequence[ActionStep] = (), kept: Collection[str] = ()
    ) -> CodeFix:
        """The code to run: a small model's products of totals run as totals of products, its text cleaning of
        a column an earlier step made numbers run as the column, a conversion that would read some of a column's
        numbers as missing or fail on them run as the one that reads them, text dates read as dates (`.dt`,
        `pd.to_datetime`) read in every format, and its last step's code sent again after that step was
        offered its code on the data cleaned first run as the offer, and a name the notebook keeps (`kept`, not
        given to the task) that the code binds given a name of its own (each said in `notes`)."""
        if not self.small:
            return CodeFix(code)
        last = actions[-1] if actions else None
        said = _said(last) if last is not None else ""
        return (
            rename_kept_names(code, kept, self._renamed, namespace)
            .then(
                lambda fixed: offer_taken(fixed, (last.code_action or "") if last is not None else "", said, namespace)
            )
            .then(fix_totals)
            .then(lambda fixed: fix_reconversions(fixed, namespace))
            .then(lambda fixed: fix_lossy_conversions(fixed, namespace))
            .then(lambda fixed: fix_date_reads(fixed, namespace))
            .then(lambda fixed: fix_text_masks(fixed, namespace))
        )

    def reply_in_place(self, actions: Sequence[ActionStep], allowed: Callable[[str], bool]) -> str:
        """The reply to record for the next step when it runs the offer the last step made without a model call
        (`offer_in_place`), or "": the model is asked. `allowed(program)`: the agent may run its imports."""
        last = actions[-1] if actions else None
        if not self.small or last is None:
            return ""
        program = offer_in_place(_said(last), ran_in_place(last), [step.code_action or "" for step in actions])
        return offer_reply(program) if program and allowed(program) else ""

    @staticmethod
    def offered(step: ActionStep) -> bool:
        """Whether `step` ended with its code on the data cleaned first, offered as the next step's code."""
        return bool(offered_program(_said(step)))

    def code_problem(self, code: str, namespace: dict[str, Any]) -> str:
        """Why a small model's code must not run as written (a product of totals that cannot be fixed, rows or
        columns taken out of a frame the task gave), or ""."""
        if not self.small:
            return ""
        try:
            return code_warning(code) or frame_losses(code, self._question, namespace, list(self._given))
        except Exception:  # advice over any data a notebook holds: odd data says nothing
            return ""

    def repeated(self, code: str, actions: Sequence[ActionStep], namespace: dict[str, Any]) -> None:
        """Raise when `code` repeats what already failed (twice in a row, or at any earlier step whose failure still
        holds) or the last step, which ran without error: refused (`AgentRepeatedCodeError`), or the run ends
        (`RunStuck`) when refused code is sent again."""
        repeat = repeat_of(code, actions, self.failed)
        if repeat is Repeat.END:
            raise ending(code, actions, self.failed)
        if repeat in (Repeat.REFUSE, Repeat.CYCLE):
            raise refusal(code, actions, namespace, self.failed)
        if repeat is Repeat.DONE:
            raise done_refusal(code, actions, self.failed)

    def _slate_failure(self, step: ActionStep) -> bool:
        """A step that counts towards starting a small model again from a clean slate: its code failed or was
        refused as a repeat (an answer refused ran, and what it printed still holds)."""
        return self.failed(step) or isinstance(step.error, AgentRepeatedCodeError)

    # ------------------------------------------------------------------------------------------ after a step

    def hint(
        self,
        failure: Any,
        code: str,
        namespace: dict[str, Any],
        task: str,
        actions: Sequence[ActionStep],
        sourced: str = "",
    ) -> str:
        """The lines after a failed step's error: what the mistake is, that a third same try will not run, and
        that the same failure a third time in a row is a loop. `sourced`: `code` after the earlier statements that
        made what it reads (`slicing.code_with_sources`), what an offer on cleaned frames is made from."""
        earlier = "\n".join(step.code_action for step in actions if step.code_action)
        hint = execution_hint(failure, code, namespace, task, earlier)
        if (
            self.small
            and (_TEXT_NUMBERS in hint or _TEXT_KEY in hint)
            and (program := _cleaned_sourced(code, sourced, *split_task(task), namespace))
        ):
            hint += f"\nOr send your code with the data cleaned first, as it is:\n```python\n{program}\n```"
        if repeat_of(code, actions, self.failed) is Repeat.AGAIN:
            hint = f"{hint}\n{AGAIN_NOTE}".strip()
        loop = same_failure_note(str(failure), actions, self.failed)
        return f"{hint}\n{loop}".strip() if loop else hint

    def stuck(self, failure: Any, actions: Sequence[ActionStep]) -> None:
        """Raise `RunStuck` when this failure is the same as the failures of the steps just before it, after the
        model was told that one more would end the run (`repeats.same_failure_ending`)."""
        ending = same_failure_ending(str(failure), actions, self.failed)
        if ending is not None:
            raise ending

    def silent_observation(self, code: str, namespace: dict[str, Any]) -> str | None:
        """What a small model reads after code that printed and returned nothing, or None (the usual words)."""
        return silent_step_observation(code, namespace, self._question) if self.small else None

    def step_notes(self, code: str, namespace: dict[str, Any], sourced: str = "") -> str:
        """What a small model reads after code that ran without error, besides its output: a selection no row
        meets (`== "June"` on a column of '2024-06'), a total of numbers written as text (`.sum()` joined the
        texts) or groups of one label written several ways (both with the code on cleaned frames), numbers a
        conversion read as missing (`errors="coerce"` on '$1,891.37' with the ',' left), or "". `sourced` as for
        `hint`."""
        if not self.small:
            return ""
        try:
            tree = ast.parse(code)
            given = list(self._given)
            untidy = text_totalled(tree, namespace) or groups_split_by_spelling(tree, code, namespace, given)
            lines = untidy + numbers_lost(tree, namespace, self._given)
            notes = empty_selections(code, namespace) + "".join(f"Note: {line}.\n" for line in lines)
            program = _cleaned_sourced(code, sourced, self._question, given, namespace) if untidy else ""
            return notes + (
                f"Or send your code with the data cleaned first:\n```python\n{program}\n```\n" if program else ""
            )
        except Exception:  # advice over any data a notebook holds: odd data says nothing
            return ""

    def handle_problem(self, answer: Any) -> str:
        """Why `answer` cannot be a final answer for any model: it is (or holds) a handle on an object that stays in
        the worker — dead after the worker is replaced, no `len()`, nothing to store in `-o` — with the call that
        makes it a value; "" for a value."""
        return handle_advice(answer) if is_worker_handle(answer) else ""

    def answer_doubts(self, answer: Any, task: str, code: str, namespace: dict[str, Any]) -> list[str]:
        """Every reason to doubt a small model's final answer to `task` (most certain first), [] for others.

        `code`: the code of the task's steps that ran, the answering step's last. The checks are advice over
        any data a notebook holds: one that fails is no reason to fail the run.
        """
        if not self.small:
            return []
        question, variables = split_task(task)
        try:
            return answer_problems(answer, AnswerContext(question, variables, code, namespace, self._given))
        except Exception:
            return []

    def cleaned_program(self, doubts: Sequence[str], task: str, code: str, namespace: dict[str, Any]) -> str:
        """The answer's code (`code`) on the task's frames cleaned first, when a doubt said of the answer is about
        untidy data (rows counted twice, numbers or labels read as text); "" otherwise or for other models."""
        if not self.small or not any(isinstance(doubt, Untidy) for doubt in doubts):
            return ""
        mends = dict(doubt.mend for doubt in doubts if isinstance(doubt, Mended))
        return _cleaned((rewritten(code, mends) if mends else "") or code, task, namespace)

    @staticmethod
    def proves_wrong(doubt: str) -> bool:
        """Whether a doubt from `answer_doubts` is proved by the data (the answer cannot be right as it stands)
        rather than a guess about what the question meant."""
        return isinstance(doubt, Contradiction)

    def chart_taken(self, code: str, namespace: dict[str, Any], figures: Sequence[dict[str, Any]]) -> str:
        """What a small model reads after its step drew a chart the checks took and do not doubt, for a chart
        question: end the run with final_answer (and with what); "" for other models and questions, and for figures
        (their summaries) that draw nothing — the messy run's chart of an empty frame was told it drew what was asked."""
        if not self.small or not _drew_marks(figures):
            return ""
        try:
            return chart_taken_note(code, self._question, namespace, list(self._given))
        except Exception:  # advice over any data a notebook holds
            return ""

    def chart_answer(self, code: str, namespace: dict[str, Any], figures: Sequence[dict[str, Any]]) -> str:
        """The name of the values a small model's chart is drawn from, when the question asks for that chart alone and
        the checks took it: the run may end with them, without a model call to write ``final_answer(<name>)`` (the
        messy run's chart questions spent 5-8 s each on it, one on an empty reply first); "" otherwise."""
        if not self.small or not chart_only(self._question) or not _drew_marks(figures):
            return ""
        try:
            return plotted_name(code, namespace, list(self._given))
        except Exception:  # advice over any data a notebook holds
            return ""

    def chart_doubts(self, figures: Sequence[dict[str, Any]], task: str, namespace: dict[str, Any]) -> list[str]:
        """Why a small model's figures (their summaries, `ActionStep.figures`) do not draw what `task` asks for:
        far more marks than the groups asked for (249 bars for a monthly chart); [] for other models."""
        if not self.small or not figures:
            return []
        question, variables = split_task(task)
        try:
            return chart_problems(list(figures), question, variables, namespace)
        except Exception:
            return []


def _cleaned_sourced(code: str, sourced: str, question: str, variables: list[str], namespace: dict[str, Any]) -> str:
    """The offer made from `code` with its sources, else from `code` alone (its sources may rebind a task frame)."""
    with_sources = _cleaned_for(sourced, question, variables, namespace) if sourced and sourced != code else ""
    return with_sources or _cleaned_for(code, question, variables, namespace)


def _cleaned(code: str, task: str, namespace: dict[str, Any]) -> str:
    return _cleaned_for(code, *split_task(task), namespace)


def _cleaned_for(code: str, question: str, variables: list[str], namespace: dict[str, Any]) -> str:
    try:
        return cleaned_program(code, question, namespace, variables)
    except Exception:  # advice over any data a notebook holds: odd data offers nothing
        return ""


def _drew_marks(figures: Sequence[dict[str, Any]]) -> bool:
    """Whether one of the figures (their summaries) draws something."""
    return any(isinstance(figure, dict) and figure.get("marks") for figure in figures)


def _said(step: ActionStep) -> str:
    """What a step said to the model after its code: its error, then its observation (where an offer is made)."""
    return f"{step.error or ''}\n{step.observations or ''}"
