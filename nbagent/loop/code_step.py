"""The code step: the model writes Python, the sandbox runs it (in the notebook's namespace if given).

`CodeLoop` is the loop of `CodeAgent`: one step is generate → parse the code →
review it at the approval gate → run it in the executor → observe.

For a small local model (`prompting.prompt_profile`), a step is also capped at
`max_tokens_per_step` tokens (a cut step is reported to the model: "write shorter
code"); a product of totals in its code runs as the total of the products, said in
the step; and a final answer the checks doubt (no value, a row number for an id, a
value the question names never selected, …) is refused with the reason, each doubt
twice and three answers per task at most; an answer the data proves wrong (labels counted apart, repeated
rows counted again) never stands: after that, the run ends without an answer. Every model gets a hint after a failed step (the
columns of a frame after a `KeyError`, the task's variables after a `NameError`); code the
same as the code that just failed twice in a row, or as any earlier failing attempt of the
task, is not run; and the same failure in other code, step after step, is named a loop and
then ends the run. A small model that failed twice in a row reads a clean slate (the task,
what still holds, one line on what failed) instead of its failed attempts. All of these
are the small-model aids of `loop/aids`, called through its one seam, `Coach`.
Warnings the code raised (a library's deprecation) are kept on the step for a
person, never in the observation the model reads.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from nbagent.errors import AgentExecutionError, AgentParsingError, AgentRepeatedCodeError, RunStopped, RunStuck
from nbagent.media import collect_images, is_image
from nbagent.models.base import ChatMessage, MessageRole, TokenUsage
from nbagent.record import (
    CODE_TOOL_NAME,
    ActionOutput,
    ActionStep,
    CodeOutputDelta,
    TaskStep,
    ToolCall,
    ToolOutput,
)
from nbagent.sandbox import ExecutionError, ExecutionStopped, LocalPythonExecutor, is_import_authorized
from nbagent.text import OBSERVATION, Truncation, truncate

from .aids import Coach
from .aids.code_checks import CodeFix
from .aids.data_card import value_kind
from .engine import AgentLoop, _default_model
from .executors import adopt_executor, default_executor_type, make_executor
from .gates import CodeRejected
from .parsing import ECHOED_TASK, echoes_task, parse_code_blobs
from .permissions import StepAsks
from .program.slicing import answer_code, code_with_sources
from .prompting import SMALL, SMALL_MODEL_STEP_TOKENS, prompt_profile, small_model_templates
from .scope import AgentScope, answer_parts, names_made
from .tool_uses import ToolUses

__all__ = ["CodeLoop", "close_code_fence", "STOP_SEQUENCES", "AnswerRefused", "RETRY_TEMPERATURE"]

# The closing fence of the code block ends the answer: what a model writes after its code is never
# run, and small local models otherwise go on for ~100 tokens. The fence is put back afterwards.
CODE_END = "\n```\n"
STOP_SEQUENCES = ["Observation:", "Calling tools:", CODE_END]
_ANSWER_ECHO = Truncation(160)
_CUT_SLACK = 3  # streamed token counts are re-tokenized: a cut step may count a token or two less
_MAX_REFUSALS = 3  # final answers refused per task: then the model's answer stands
# Each doubt is said at most twice: said once, the small model fixed one of two problems and answered with the other
# still in (a label fixed, its repeated rows still counted; a second table still unused) in 3 of 7 wrong answers
# of the messy benchmark's run; a third time rarely helps where a second did not.
_SAYS_PER_DOUBT = 2
_MAX_PROBLEMS_SAID = 2
RETRY_TEMPERATURE = 0.9  # a small model retrying greedily after an error tends to write the same code again
_NAMED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`|\{([A-Za-z_][A-Za-z0-9_]*)\}")  # `name` or {name} in a task


class AnswerRefused(AgentExecutionError):
    """A final answer a check doubts (see `aids.answers`), or a chart that does not draw the groups asked for
    (`aids.chart_checks`, answered or not), refused once per problem so the model can fix it."""


def _echo(answer: Any) -> str:
    """The refused answer, short: a pandas object by its kind and length, anything else by a clipped repr."""
    kind = value_kind(answer)
    if kind in ("Series", "DataFrame"):
        return f"<a pandas {kind} of {len(answer)} rows>"
    return truncate(repr(answer), _ANSWER_ECHO)


class CodeLoop(AgentLoop):
    """The loop of an agent whose actions are Python code blocks, run natively in nbagent's sandbox.

    Args (beyond the loop's):
        additional_authorized_imports: modules the code may import (`"pandas"`, `"numpy.*"`, `"*"`).
        max_print_outputs_length: cap on the printed output kept per step.
        executor_kwargs: passed to the executor (e.g. `timeout_seconds`, `memory_limit_bytes`, `allow_read`).
        namespace: the dict the code runs in, e.g. a notebook's `get_ipython().user_ns`;
            what the code defines stays there. Default: a private dict.
        share_variables: which of `namespace`'s names the code sees besides what it creates and modules: "task"
            (the default: the names the task writes as `name` or {name}, and `additional_args`), "*" (every name
            but credentials: the old way), or a list of names (those and the task's). Another name is asked for
            (`on_permission`) when the code reaches for it; a credential only when the task names it. Without
            `namespace` the code sees all of its own namespace.
        executor_type: "isolated" (a confined worker process; the default where the platform can fork) or
            "local" (this process, for trusted code: it guards against a mistaken model, not a hostile
            one). See nbagent/loop/executors.py.
        executor: a `PythonExecutor` of one's own (smolagents' option), used instead of making one; then
            `executor_kwargs` and `namespace` are the executor's business.
        approve_tools: names of tools with side effects (an MCP server's `write_file`): code that calls one waits
            for a person's approval, as with `approve_code=True`; a call in code nobody approved is refused.

    A small local model (see `nbagent.loop.prompting.prompt_profile`) gets the templates of
    `nbagent/prompts/code_agent_small.yaml` (with `prompt_templates` laid over them) and
    `max_tokens_per_step`; set that attribute to change the cap (`None`: the model's own).
    """

    prompt_kind = "code_agent"

    def __init__(
        self,
        tools: list[Any] | None = None,
        model: Any = None,
        prompt_templates: dict[str, Any] | None = None,
        additional_authorized_imports: list[str] | None = None,
        planning_interval: int | None = None,
        executor_type: str | None = None,
        executor_kwargs: dict[str, Any] | None = None,
        max_print_outputs_length: int | None = None,
        namespace: dict[str, Any] | None = None,
        share_variables: str | Iterable[str] = "task",
        executor: Any = None,
        approve_tools: Iterable[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self.tool_uses = ToolUses(approve_tools or ())  # each call the code makes: recorded, limited, approved
        self._code_approved = False
        self._answer_code = ""  # the statements the last checked answer depends on
        self.share_variables = _checked_share(share_variables)
        self._namespace_given = namespace is not None
        self.scope = AgentScope()  # the names its code made that stay out of the notebook between runs (scope.py)
        self.keep_scratch = False  # True: they stay in the notebook (`%%agent --keep`)
        self.additional_authorized_imports = list(additional_authorized_imports or [])
        self.max_print_outputs_length = max_print_outputs_length
        if executor is not None:
            executor, executor_type = adopt_executor(executor, executor_type, self.additional_authorized_imports)
        self.executor_type = default_executor_type() if executor_type is None else executor_type
        self.executor_kwargs = dict(executor_kwargs or {})
        model = model if model is not None else _default_model()
        self.prompt_profile = prompt_profile(model)
        self.max_tokens_per_step: int | None = None
        if self.prompt_profile == SMALL:
            prompt_templates = small_model_templates(prompt_templates)
            self.max_tokens_per_step = SMALL_MODEL_STEP_TOKENS
        if executor is None:  # executor_kwargs may repeat max_print_outputs_length: it wins
            executor = make_executor(
                self.executor_type,
                additional_authorized_imports=self.additional_authorized_imports,
                namespace=namespace,
                **{"max_print_outputs_length": max_print_outputs_length, **self.executor_kwargs},
            )
        self.python_executor = executor
        super().__init__(
            tools=tools, model=model, prompt_templates=prompt_templates, planning_interval=planning_interval, **kwargs
        )
        self.gates.on_stop(self.python_executor.request_stop)
        _check_approve_tools(self.tool_uses.approve_tools, self.tools)
        self.coach = Coach(small=self.prompt_profile == SMALL, failed=_failed)

    def shared_names(self) -> list[str] | None:
        """The notebook names this run's code sees (besides what it creates, modules and what a person allows);
        None: every name but credentials (`share_variables="*"`, or no notebook namespace)."""
        choice = _checked_share(self.share_variables)
        if not self._namespace_given or choice == "*":
            return None
        named = {a or b for a, b in _NAMED.findall(self.task or "")} | set(self.state)  # the task's, additional_args
        return sorted(named | (set() if choice == "task" else set(choice)))

    @property
    def authorized_imports(self) -> list[str]:
        return list(self.python_executor.authorized_imports)

    def authorized_imports_text(self) -> str:
        return ", ".join(sorted(self.authorized_imports))

    def _enter_scope(self) -> None:
        """The names the agent made in earlier runs are back in the namespace (its code goes on using them)."""
        if self._namespace_given:
            self.scope.enter(self.python_executor.state)

    def _end_of_run(self, answer: Any) -> list[str]:
        """The names the run's code made move to the agent's scope, unless the task names them or they hold the
        answer's parts (or `keep_scratch`); the names held."""
        if not self._namespace_given:
            return []
        namespace = self.python_executor.state
        steps = self.memory.action_steps()
        touched = {c.get("name") for s in steps for c in s.namespace_changes or [] if isinstance(c, dict)}
        keep = {a or b for a, b in _NAMED.findall(self.task or "")}
        if self.keep_scratch:
            keep |= set(namespace)
        parts = answer_parts(answer) if answer is not None else []
        return self.scope.leave(namespace, names_made(steps), keep, touched, parts)

    def _prepare_executor(self, resume: bool = False) -> None:
        self._enter_scope()
        if not resume:  # a re-run goes on from the namespace as it was before the step, not the run's first values
            self.python_executor.send_variables(self.state)
            share = getattr(self.python_executor, "share", None)
            if share is not None:
                share(self.shared_names())
        self.python_executor.send_tools(self.tool_uses.wrap({**self.tools, **self.managed_agents}))

    def _step_stream(self, memory_step: ActionStep) -> Iterator[Any]:
        small = self.prompt_profile == SMALL
        messages = self.coach.messages(self.memory) or self.write_memory_to_messages()
        memory_step.model_input_messages = messages
        cap = self.max_tokens_per_step
        limit: dict[str, Any] = {"max_new_tokens": cap} if cap else {}
        if small and self._last_step_failed():
            limit["temperature"] = RETRY_TEMPERATURE
        in_place = self.coach.reply_in_place(self._task_actions(), self._imports_allowed)  # the last step's offer
        if in_place:
            message = yield from self._reply_without_model(in_place)
        else:
            message = yield from self._generate(messages, stop_sequences=STOP_SEQUENCES, **limit)
        memory_step.model_output_message = message
        memory_step.model_output = close_code_fence(message.text)
        memory_step.token_usage = message.token_usage
        cap = cap or getattr(self.model, "max_new_tokens", None)  # a local model's own cap cuts steps too
        cut = bool(cap) and message.token_usage is not None and message.token_usage.output_tokens >= cap - _CUT_SLACK
        try:
            code = _parse_code(message.text, cut_at=cap if cut else None, task=self.task or "")
        except AgentParsingError:
            if not (small and not message.text.strip() and self._last_step_offered()):
                raise
            code = ""  # an empty reply to an offer on cleaned frames: the coach runs the offer (`offer_taken`)
        memory_step.model_code_action = code
        namespace = self._seen_namespace()
        if not self._task_actions():
            self.coach.task_begins(self.task or "", namespace)
        fix = self.coach.prepared_code(
            code, namespace, self._task_actions(), self._kept_names(namespace) if small else ()
        )
        self._refuse_repeated(memory_step, fix.code)
        self._check_code(memory_step, fix)
        if self.tool_uses.needs_approval(fix.code):  # it calls a tool of approve_tools: a person sees it first
            self.gates.request_approval()
        halts = self.gates.halts
        try:
            memory_step.code_action = self.gates.review_code(memory_step, fix.code)
            self._code_approved = self.gates.halts > halts  # it waited for a person, who approved it
        except CodeRejected as rejected:  # approve mode: the person's note is what the model observes
            memory_step.code_action, memory_step.observations = code, rejected.observation
            yield ActionOutput(output=None, is_final_answer=False)
            return
        if memory_step.code_action != fix.code:  # the person changed what they were shown
            memory_step.edited_code_action = memory_step.code_action
        call = ToolCall(name=CODE_TOOL_NAME, arguments=memory_step.code_action, id=f"call_{memory_step.step_number}")
        memory_step.tool_calls = [call]
        yield call
        try:
            output = self._execute(memory_step)
        finally:  # what the code created, rebound or changed in the namespace (also when it failed)
            memory_step.namespace_changes = list(getattr(self.python_executor, "last_changes", None) or [])
        if cut:
            memory_step.observations = (memory_step.observations or "") + _cut_notice(cap, ran=True)
        if fix.notes and memory_step.code_action == fix.code:
            memory_step.observations = fix.observation() + (memory_step.observations or "")
        answered = small and output.is_final_answer
        problems = self._new_answer_problems(output.output, memory_step.code_action) if answered else []
        handle = self.coach.handle_problem(output.output) if output.is_final_answer else ""
        if handle:  # never kept as the answer, however often sent: a handle is no value to store or show
            problems = [handle]
        doubted = self._chart_doubts(memory_step.figures) if small else []
        if doubted:  # a chart that does not draw the groups asked for, answered or not
            problems = (self._new_chart_problems(doubted) + problems)[:_MAX_PROBLEMS_SAID]
        # a chart taken only because its doubts were said twice is never told it draws what the question asks for
        if small and memory_step.figures and not doubted and not problems and not output.is_final_answer:
            namespace = self._seen_namespace()
            output = self._chart_as_answer(memory_step, output, namespace)
            if not output.is_final_answer:
                taken = self.coach.chart_taken(memory_step.code_action, namespace, memory_step.figures)
                memory_step.observations = (memory_step.observations or "") + taken
        is_final = output.is_final_answer and not problems  # a doubted answer is observed, then refused
        yield ToolOutput(
            id=call.id,
            output=output.output,
            is_final_answer=is_final,
            observation=memory_step.observations or "",
            tool_call=call,
            logs=output.logs,
            images=list(memory_step.observations_images or []),
        )
        if problems:
            # a refused answer's offer is made from the code it depends on, a refused chart's from the step's code
            source = self._answer_code if output.is_final_answer else memory_step.code_action
            program = self.coach.cleaned_program(problems, self.task or "", source, self._seen_namespace())
            offer = f"Fix it: run your code with the data cleaned first:\n```python\n{program}\n```" if program else ""
            if not output.is_final_answer:
                raise AnswerRefused(f"The chart was refused: {'; and '.join(problems)}. {offer or 'Draw it again.'}")
            raise AnswerRefused(
                f"final_answer({_echo(output.output)}) was refused: {'; and '.join(problems)}. "
                + (offer or "Fix it (print the values you need), then call final_answer with the answer itself.")
            )
        yield ActionOutput(output=output.output, is_final_answer=is_final)

    def _chart_as_answer(self, memory_step: ActionStep, output: Any, namespace: dict[str, Any]) -> Any:
        """A chart the question asks for alone, drawn and taken by the checks: the run ends with the values it plots,
        checked as any answer is (else the model is told to end it, `chart_taken`)."""
        name = self.coach.chart_answer(memory_step.code_action, namespace, memory_step.figures)
        if not name or name not in namespace:
            return output
        value = namespace[name]
        answering = f"{memory_step.code_action}\nfinal_answer({name})"  # the answer as the model would have sent it
        if self.coach.handle_problem(value) or self._new_answer_problems(value, answering):
            return output
        ended = f"The chart draws what the question asks for: nbagent ended the run with final_answer({name}).\n"
        memory_step.observations = (memory_step.observations or "") + ended
        return dataclasses.replace(output, output=value, is_final_answer=True)

    def _imports_allowed(self, code: str) -> bool:
        """Whether each module `code` imports is one the agent may import (else it would fail at its first line)."""
        try:
            tree = ast.parse(code)
        except SyntaxError:
            return False
        modules = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
        modules += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
        return all(is_import_authorized(module, self.authorized_imports) for module in modules)

    def _reply_without_model(self, text: str) -> Generator[Any, None, ChatMessage]:
        """A step's reply that nbagent writes in the model's place, shown to the views as a model's reply is (no
        tokens: the run's count stays a count of the model's)."""
        message = ChatMessage(role=MessageRole.ASSISTANT, content=text, token_usage=TokenUsage(0, 0))
        return (yield from self._whole_reply(message))

    def _refuse_repeated(self, memory_step: ActionStep, code: str) -> None:
        """Code the same as the code that just failed twice, or as an earlier failing attempt, is not run; sent
        again after that, the run ends."""
        try:
            self.coach.repeated(code, self._task_actions(), self._seen_namespace())
        except Exception:
            memory_step.code_action = code  # shown in the step, never run
            raise

    def _check_code(self, memory_step: ActionStep, fix: CodeFix) -> None:
        """A small model's code (its products of totals fixed) is an error if one cannot be fixed surely."""
        if fix.code != memory_step.model_code_action:
            memory_step.rewritten_code_action = fix.code
        warning = self.coach.code_problem(fix.code, self._seen_namespace())
        if warning:
            memory_step.code_action = fix.code
            raise AgentExecutionError(warning)

    def _seen_namespace(self) -> dict[str, Any]:
        """The namespace as the code sees it: the hints, notes and answer checks never tell the model about a
        variable it was not given (its name, its columns)."""
        state = getattr(self.python_executor, "state", {})
        visibility = getattr(self.python_executor, "visibility", None)
        hidden = visibility.hidden(state) if visibility is not None else {}
        return {name: value for name, value in state.items() if name not in hidden} if hidden else state

    def _kept_names(self, seen: dict[str, Any]) -> set[str]:
        """The names of the notebook's variables agent code may not see or bind (not given to the task): those of
        the namespace that `seen`, the namespace as the code sees it (`_seen_namespace`), leaves out."""
        return set(getattr(self.python_executor, "state", {})) - set(seen)

    def _task_actions(self) -> list[ActionStep]:
        """The action steps of the current task so far (small models repeat themselves within a task)."""
        actions: list[ActionStep] = []
        for step in reversed(self.memory.steps):
            if isinstance(step, TaskStep):
                break
            if isinstance(step, ActionStep):
                actions.append(step)
        return actions[::-1]

    def _with_sources(self, code: str) -> str:
        """`code` after the statements of the task's earlier code that ran and made what it reads (an offer on
        cleaned frames rebuilds a `merged` an earlier step made from the raw frame); "" for models offered none."""
        if not self.coach.small:
            return ""
        ran = [_without_final_answer(part) for step in self._task_actions() if (part := _part_that_ran(step))]
        return code_with_sources(ran, code) if ran else code

    def _last_step_offered(self) -> bool:
        """Whether the last step ended with code on the data cleaned first, offered to send as the next step."""
        actions = self._task_actions()
        return bool(actions) and self.coach.offered(actions[-1])

    def _last_step_failed(self) -> bool:
        actions = self._task_actions()
        return bool(actions) and actions[-1].error is not None

    def _new_answer_problems(self, answer: Any, code: str) -> list[str]:
        """What the answer checks doubt in `answer` that was not said twice before in this task (once, when the
        model sends an answer it was refused before: it is sure). An answer the data proves wrong never stands:
        with nothing new to say about it, the run ends without an answer (`RunStuck`)."""
        actions = self._task_actions()
        said = " ".join(str(step.error) for step in actions if isinstance(step.error, AnswerRefused))
        refusals = sum(isinstance(step.error, AnswerRefused) for step in actions)
        parts = [(step, part) for step in actions if (part := _part_that_ran(step))]
        ran = [_without_final_answer(part) for _, part in parts]
        printed = [_printed(step.observations) for step, _ in parts]
        namespace = self._seen_namespace()
        sliced = answer_code(ran, code, namespace, printed)  # the statements the answer depends on, not every line
        ran = [sliced] if sliced is not None else [*ran, code]
        self._answer_code = "\n".join(ran)  # what a refusal's cleaned program is made from
        problems = self.coach.answer_doubts(answer, self.task or "", "\n".join(ran), namespace)
        sure = f"final_answer({_echo(answer)}) was refused" in said and _one_value(answer)  # sent again: it is sure
        says = {
            problem: 1 if sure and not self.coach.proves_wrong(problem) else _SAYS_PER_DOUBT for problem in problems
        }
        # the refusal budget bounds guesses; a proved doubt not yet said twice is said whatever the budget, since the
        # answer it finds cannot stand anyway (the messy run fixed labels, then lost the fix while dropping repeats)
        new = [
            problem
            for problem in problems
            if (refusals < _MAX_REFUSALS or self.coach.proves_wrong(problem)) and said.count(problem) < says[problem]
        ]
        new = new[:_MAX_PROBLEMS_SAID]
        proved = [problem for problem in problems if self.coach.proves_wrong(problem)]
        if proved and not new:
            raise RunStuck(
                f"The run ended without an answer: final_answer({_echo(answer)}) cannot be right, and the model was "
                f"told why without fixing it: {proved[0]}. Nothing is kept as the answer. Ask again with more "
                "detail, or try another model."
            )
        return new

    def _chart_doubts(self, figures: list[dict[str, Any]] | None) -> list[str]:
        """What the chart checks doubt in the step's figures ([] for a step that drew none)."""
        return self.coach.chart_doubts(figures, self.task or "", self._seen_namespace()) if figures else []

    def _new_chart_problems(self, doubts: list[str]) -> list[str]:
        """The chart's doubts not said twice before in this task (a chart refused counts as an answer refused)."""
        actions = self._task_actions()
        said = " ".join(str(step.error) for step in actions if isinstance(step.error, AnswerRefused))
        if sum(isinstance(step.error, AnswerRefused) for step in actions) >= _MAX_REFUSALS:
            return []
        return [problem for problem in doubts if said.count(problem) < _SAYS_PER_DOUBT]

    @contextmanager
    def _live_prints(self, step_number: int) -> Iterator[None]:
        """Tell the views what the code prints while it runs (`CodeOutputDelta`)."""
        executor = self.python_executor
        if not hasattr(executor, "on_output"):
            yield
            return
        saved = executor.on_output
        executor.on_output = lambda text: self._notify(CodeOutputDelta(step_number, text))
        try:
            yield
        finally:
            executor.on_output = saved

    def _run_asking(self, memory_step: ActionStep, asks: StepAsks) -> tuple[Any, list[Any]]:
        """Run the step's code; when the sandbox refused it something a person (or the policy) then allows,
        undo the failed attempt (`executor.rewind`) and run the same code again, in the same step."""
        while True:
            try:
                return self._run_code(memory_step)
            except ExecutionStopped:
                raise
            except ExecutionError:
                if self.gates.stopping or not asks.grant_refused(self.python_executor):
                    raise
            asks.rewound(self._rewind(memory_step.step_number))

    def _rewind(self, step_number: int) -> str:
        """Undo what the failed attempt did to the namespace (a fresh worker too, where the grant takes effect); an
        executor without `rewind` is skipped quietly. A rewind that fails is said, never raised: the code runs again
        over what the failed attempt left."""
        rewind = getattr(self.python_executor, "rewind", None)
        if rewind is None:
            return ""
        try:  # keep=False: the failed attempt is no line anyone goes back to (no branch, no snapshot held)
            return str(getattr(rewind(step_number, keep=False), "note", "") or "")
        except Exception as failure:
            return f"The failed attempt could not be undone ({type(failure).__name__}: {failure})."

    def _run_code(self, memory_step: ActionStep) -> tuple[Any, list[Any]]:
        """One call of the executor on the step's code: its output and the images it drew or its tools made."""
        # tools run here and report their images; figures are drawn where the code runs: an isolated
        # worker sends them back (output.images), the local executor draws them in this process
        local = isinstance(self.python_executor, LocalPythonExecutor)
        checkpoint = getattr(self.python_executor, "checkpoint", None)
        if checkpoint is not None:  # the namespace before this step's code, for "re-run from here" (and again
            checkpoint(memory_step.step_number)  # after a rewound, refused attempt: the same state)
        figures: list[dict[str, Any]] = []  # a summary of each figure drawn: the marks of its largest series
        with (
            collect_images(
                load_matplotlib=local and is_import_authorized("matplotlib", self.authorized_imports), figures=figures
            ) as images,
            self._live_prints(memory_step.step_number),
        ):
            timeout = getattr(self.python_executor, "timeout_seconds", None)
            self.tool_uses.begin(timeout, lambda: self.gates.stopping, self._code_approved)
            try:
                output = self.python_executor(memory_step.code_action)
            finally:  # each tool the code called, for a person (a re-run after a grant adds its calls)
                memory_step.code_tool_calls = (memory_step.code_tool_calls or []) + self.tool_uses.calls or None
        for image in getattr(output, "images", ()):
            _add_image(images, image)
        memory_step.figures = [*figures, *getattr(output, "figures", ())] or None  # the worker's were checked
        return output, images

    def _execute(self, memory_step: ActionStep) -> Any:
        code = memory_step.code_action
        asks = StepAsks(self.permissions, self.gates, memory_step.step_number)
        try:
            output, images = self._run_asking(memory_step, asks)
        except ExecutionStopped as stopped:
            memory_step.observations = _logs_observation(stopped.logs)
            memory_step.warnings = _warnings(stopped)
            raise RunStopped(self.gates.stop_reason or str(stopped)) from None
        except ExecutionError as failure:
            memory_step.observations = _logs_observation(failure.logs)
            memory_step.warnings = _warnings(failure)
            if self.gates.stopping:  # whatever ended the code after Stop was asked, the step was stopped
                raise RunStopped(self.gates.stop_reason or str(failure)) from None
            self.coach.stuck(failure, self._task_actions())  # the same failure once more after it was named a loop
            hint = self.coach.hint(
                failure, code, self._seen_namespace(), self.task or "", self._task_actions(), self._with_sources(code)
            )
            said = "\n".join(part for part in (str(failure), asks.error_note(), hint) if part)
            raise AgentExecutionError(said) from None
        finally:  # "Allow once" ends with the step; what was asked and answered stays on it
            memory_step.permissions = asks.finish(self.python_executor)
        memory_step.warnings = _warnings(output)  # for a person, out of the observations the model reads
        if is_image(output.output):
            _add_image(images, output.output)
        memory_step.observations_images = images or memory_step.observations_images
        observed = _observation(output.logs, output.output)
        if output.output is None and not output.logs and not output.is_final_answer:
            # "Last output: None" after an assignment read as "no rows" to a 1.5B model
            observed = self.coach.silent_observation(code, self._seen_namespace()) or observed
        if not output.is_final_answer:
            observed += self.coach.step_notes(code, self._seen_namespace(), self._with_sources(code))
        figures = _figures_note(images)
        memory_step.observations = (
            f"{observed.rstrip(chr(10))}\n{figures}" if figures and observed else observed + figures
        )
        return output


def _checked_share(choice: Any) -> str | tuple[str, ...]:
    """ "task", "*", or a tuple of names; else a ValueError of one line."""
    if choice in ("task", "*"):
        return choice
    if not isinstance(choice, str) and isinstance(choice, Iterable):
        names = tuple(choice)
        if all(isinstance(name, str) and name.isidentifier() for name in names):
            return names
    raise ValueError(f'share_variables takes "task", "*" or a list of variable names, got {choice!r}')


def _check_approve_tools(names: frozenset[str], tools: dict[str, Any]) -> None:
    unknown = sorted(names - set(tools))
    if unknown:
        raise ValueError(
            f"approve_tools names {', '.join(unknown)}, which this agent has no tool of (its tools: "
            f"{', '.join(sorted(tools))})"
        )


def _failed(step: ActionStep) -> bool:
    """True if the step's code failed: it raised, or a check refused it (not an answer refused, not a stop)."""
    refused = isinstance(step.error, (AnswerRefused, AgentRepeatedCodeError))
    return step.error is not None and not step.stopped and not refused


def _warnings(outcome: Any) -> list[str] | None:
    """The warnings the code raised (a library's DeprecationWarning, …), or None: the sandbox keeps them apart."""
    return list(getattr(outcome, "warnings", None) or []) or None


def _ran(step: ActionStep) -> bool:
    """True if the step's code ran to its end (a refused answer's code did)."""
    return step.error is None or isinstance(step.error, AnswerRefused)


_FAILED_AT = re.compile(r"^Error on line (\d+) of the code:")


def _part_that_ran(step: ActionStep) -> str:
    """The step's code that ran: all of it, or, for code that failed on line N, its statements before that line
    (the messy run's `once = orders.drop_duplicates()` ran before the next line failed, and the answer a later step
    made from `once` was doubted for never reading `orders`)."""
    code = step.code_action or ""
    if _ran(step):
        return code
    failed_at = _FAILED_AT.match(str(step.error or ""))
    if failed_at is None:  # refused before it ran (a repeat, a check), or stopped
        return ""
    try:
        statements = ast.parse(code).body
    except SyntaxError:
        return ""
    line = int(failed_at.group(1))
    return "\n".join(ast.unparse(s) for s in statements if (s.end_lineno or s.lineno) < line)


def _one_value(answer: Any) -> bool:
    """A value a model can be sure of against a doubt (a number, a label); None or a whole Series (one value per row
    of the data, sent twice in the clean benchmark) never answers a question however often it is sent."""
    return answer is not None and value_kind(answer) not in ("Series", "DataFrame")


def _without_final_answer(code: str) -> str:
    """An earlier step's code less its top-level `final_answer(...)` lines: that answer was refused, so what it
    computed inside the call does not make the answer now checked (its assignments still do)."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return code
    dropped = {
        line
        for node in body
        if isinstance(node, ast.Expr) and _calls_final_answer(node.value)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    return "\n".join(text for number, text in enumerate(code.splitlines(), 1) if number not in dropped)


def _calls_final_answer(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "final_answer"


def _add_image(images: list[Any], image: Any) -> None:
    """Add `image` unless it is already there: the same object, or (back from a worker) the same pixels."""
    if all(image is not seen and not _same_pixels(image, seen) for seen in images):
        images.append(image)


def _same_pixels(first: Any, second: Any) -> bool:
    raw = [image.to_raw() if hasattr(image, "to_raw") else image for image in (first, second)]
    same_shape = all(hasattr(r, "tobytes") for r in raw) and raw[0].size == raw[1].size and raw[0].mode == raw[1].mode
    return same_shape and raw[0].tobytes() == raw[1].tobytes()


def _figures_note(images: list[Any]) -> str:
    """Tell the model what it drew: "[figure captured: 791×516 PNG]" per image (else it re-plots, unseen)."""
    sizes = [getattr(image, "size", None) for image in images]
    return "".join(f"[figure captured: {size[0]}×{size[1]} PNG]\n" for size in sizes if size)


def _parse_code(text: str, cut_at: int | None, task: str = "") -> str:
    """The step's code; a step cut at `cut_at` tokens whose code is incomplete is an error that says so, and a reply
    that writes the task out again says that instead."""
    try:
        code = parse_code_blobs(text)
    except AgentParsingError as error:
        if task and echoes_task(text, task):
            raise AgentParsingError(ECHOED_TASK) from None
        if cut_at:
            raise AgentParsingError(f"{_cut_notice(cut_at, ran=False).strip()}\n{error}") from None
        raise
    if cut_at:
        try:
            compile(code, "<step>", "exec")
        except SyntaxError:
            raise AgentParsingError(_cut_notice(cut_at, ran=False).strip()) from None
    return code


def _cut_notice(cap: int, ran: bool) -> str:
    what = "Its code ran as far as it was written." if ran else "Its code was incomplete, so it did not run."
    return (
        f"\nYour last step was cut off after {cap} tokens. {what} Write shorter code: a few lines per step, "
        "using the variables by name (never type out their data).\n"
    )


def close_code_fence(text: str) -> str:
    """Put back the closing fence that the `CODE_END` stop sequence cut off."""
    return text + CODE_END.rstrip("\n") if text.count("```") % 2 == 1 else text


def _observation(logs: str | None, output: Any) -> str:
    # "Last output: None" after printed logs reads to small models as "the code failed"; leave it out then.
    if output is None and logs:
        return _logs_observation(logs)
    return _logs_observation(logs) + "Last output from code snippet:\n" + truncate(str(output), OBSERVATION)


def _printed(observations: str | None) -> str:
    """What a step's code printed, out of its observation (not the value of its last line, nor an answer's)."""
    _, logs, rest = (observations or "").partition("Execution logs:\n")
    return rest.partition("Last output from code snippet:")[0] if logs else ""


def _logs_observation(logs: str | None) -> str:
    return f"Execution logs:\n{logs or ''}\n" if logs else ""
