"""`%%agent` and `%agent`: ask an agent from a cell; its code runs in this notebook's namespace.

    %load_ext nbagent
    %%agent --imports pandas -o best
    Which region in {table_name} has the highest revenue?

The cell body is the task. The model is told about the notebook variables the task
points at, and only those: names in backticks (`` `sales` ``), `{name}` placeholders of
data values, and `--vars a,b` (`--vars '*'`: every data variable). The agent's code sees
those variables, what it creates and modules; reading another is asked (Allow once / for
this run / Deny), and `--vars '*'` shares every name but credentials, the old way. `{name}` of a string
or number is replaced by its value (write `{{` and `}}` for literal braces); `{name}` of
anything else becomes `` `name` `` and is described (a DataFrame by its schema, never
its whole data). A backticked or `{}` name that is not defined is a `UsageError` with
"did you mean", before any widget opens or model loads. The final answer is the cell's
value. Defaults come from traits: `%config AgentMagics.default_model = "model.gguf"`.
"""

from __future__ import annotations

import re
import shlex
import sys
import types
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from traitlets import Bool, Int, List, Unicode

from nbagent.loop.aids.data_card import NOTEBOOK_VARIABLES_HEADING, describe_variables

__all__ = ["AgentMagics", "AgentRunFailed", "interpolate_task", "pointed_variables", "data_variables"]

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BACKTICKED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
_SCALARS = (str, int, float, complex, bool)


class AgentRunFailed(Exception):
    """A run that ended in an error, shown as one clear message instead of a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m{type(self).__name__}: {self}\x1b[0m"]


def interpolate_task(text: str, namespace: dict[str, Any]) -> str:
    """Replace `{name}`: by the value of a string or number, by `` `name` `` for anything else; `{{`/`}}` are braces."""

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        name = match.group(1)
        if name not in namespace:
            from nbagent.notebook.magic_input import did_you_mean_variable

            raise UsageError(
                f"The task refers to {{{name}}} but no variable {name!r} is defined"
                f"{did_you_mean_variable(name, namespace)} (write {{{{{name}}}}} for literal braces)"
            )
        value = namespace[name]
        return str(value) if isinstance(value, _SCALARS) else f"`{name}`"

    return _PLACEHOLDER.sub(replace, text)


def pointed_variables(task: str, namespace: dict[str, Any], names: list[str] | None = None) -> dict[str, Any]:
    """The notebook variables the task points at: `` `name` `` in the (interpolated) task, plus `names`.

    `names == ["*"]` means every data variable. A word that merely matches a variable's name
    is not a pointer: a task about "revenue by region" is not told about a `region` variable.
    """
    if names == ["*"]:
        return data_variables(namespace)
    found: dict[str, Any] = {}
    for name in [*_BACKTICKED.findall(task), *(names or [])]:
        value = namespace.get(name, _MISSING)
        if value is not _MISSING and _is_data(name, value):
            found.setdefault(name, value)
    return found


def data_variables(namespace: dict[str, Any]) -> dict[str, Any]:
    """The notebook's data variables: not modules, functions, classes, IPython's own or private names."""
    hidden = {"In", "Out"} if "_ih" in namespace else set()  # IPython's input/output history
    return {k: v for k, v in namespace.items() if k not in hidden and _is_data(k, v)}


def _is_data(name: str, value: Any) -> bool:
    return not (name.startswith("_") or callable(value) or isinstance(value, types.ModuleType))


_MISSING = object()


def _split_names(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


@magics_class
class AgentMagics(Magics):
    """Options' defaults, settable with `%config AgentMagics.<trait> = value`."""

    default_model = Unicode("default", help="model spec or the name of a variable holding a model").tag(config=True)
    default_max_steps = Int(10, help="steps per run when --max-steps is not given").tag(config=True)
    default_imports = List(Unicode(), default_value=[], help="modules the agent may always import").tag(config=True)
    show_widget = Bool(True, help="show the live widget (False: console output)").tag(config=True)
    default_executor = Unicode(
        "", help="where the agent's code runs: 'isolated' (a confined worker process) or 'local'; '' chooses"
    ).tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        from nbagent.notebook.magic_input import install_question_transformer

        super().__init__(shell, **kwargs)
        self._models: dict[tuple[str, int | None], Any] = {}
        self._loading_widget: Any = None  # shown while the model loaded; the run then shows in it
        self.last_agent: Any = None
        self.agent.parser.allow_abbrev = False  # --max-step is a typo, not --max-steps
        if shell is not None:
            install_question_transformer(shell)  # `%agent … Paris?` runs the magic, not IPython's help

    @magic_arguments()
    @argument(
        "-m",
        "--model",
        default=None,
        help="a variable holding a model, or a model spec ('default', a .gguf path, openai:<id>, …)",
    )
    @argument("--tools", default=None, help="comma-separated names of variables holding tools")
    @argument(
        "--vars",
        default=None,
        help="comma-separated notebook variables to give the agent besides the task's ('*': every one but credentials)",
    )
    @argument("--imports", default=None, help="comma-separated modules the agent's code may import, e.g. pandas,numpy")
    @argument("--max-steps", type=int, default=None, help="maximum number of steps")
    @argument(
        "--max-time",
        default=None,
        help="stop the run after this long: seconds, or 90s, 10m, 1h (0: no limit; "
        "default: 10m with the offline model, none with others)",
    )
    @argument(
        "--max-tokens", type=int, default=None, help="cap on the tokens the model writes per step (0: the model's own)"
    )
    @argument(
        "--n-ctx",
        type=int,
        default=None,
        help="context window in tokens of a model nbagent loads with llama.cpp (the default model, a .gguf)",
    )
    @argument(
        "--executor",
        default=None,
        choices=["isolated", "local"],
        help="where the code runs: isolated (a confined worker process, the default) or local (this process)",
    )
    @argument(
        "--copy",
        action="store_true",
        help="the agent's code works on copies of your variables, which stay untouched; what it creates comes back "
        "(default: it may change the ones the task gives it, each change to yours is a warning, --undo takes it back)",
    )
    @argument("--agent", default=None, help="the name of an existing agent variable to use")
    @argument(
        "--continue", dest="continue_run", action="store_true", help="continue the last conversation (reset=False)"
    )
    @argument("-o", "--out", default=None, help="store the final answer in this variable (None when it did not answer)")
    @argument("--quiet", action="store_true", help="no widget and no output: the cell's value is the answer")
    @argument(
        "--undo",
        action="store_true",
        help="no task: put every variable the last run created, rebound or changed back as it was before it",
    )
    @argument(
        "--code",
        action="store_true",
        help="no task: print the last run's program (agent.to_code(): its code without the model, checked)",
    )
    @argument(
        "--keep",
        nargs="?",
        const="*",
        default=None,
        help="with a task: the names its code makes stay in your namespace; alone: bring the last agent's names "
        "(agent.scratch) in, all or a,b",
    )
    @argument(
        "--step",
        action="store_true",
        help="prepare the run paused and return: the widget's Step/Run (or agent.controller) drive it",
    )
    @cell_magic
    def agent(self, line: str, cell: str) -> Any:
        """Run an agent on the task written in the cell body.

        Its code sees the variables the task names (`name`, {name}, --vars) and asks before reading others. It may
        change the ones it was given: a change to yours is a warning saying what changed, --undo (or the widget's
        "Undo this run") puts the run's changes back, and --copy keeps your variables untouched."""
        return self._run("%%agent", line, cell)

    @line_magic("agent")
    def agent_line(self, line: str) -> Any:
        """`%agent [options] task`: the one-line form of `%%agent`."""
        try:
            words = shlex.split(line)
        except ValueError as error:
            raise UsageError(f"%agent: {error}") from None
        options, task = _split_options(words, self.agent.parser)
        return self._run("%agent", shlex.join(options), " ".join(task))

    # ---------------------------------------------------------------- helpers

    def _parse(self, magic: str, line: str) -> Any:
        from nbagent.notebook.magic_input import check_options, usage_line

        parser = self.agent.parser
        try:
            words = shlex.split(line)
        except ValueError as error:  # unbalanced quotes
            raise UsageError(f"{magic}: {error}\n{usage_line(parser, magic)}") from None
        check_options(words, parser, magic)
        try:
            return parser.parse_args(words)
        except UsageError as error:  # argparse's own message ("argument --max-steps: invalid int value")
            raise UsageError(f"{magic}: {error}\n{usage_line(parser, magic)}") from None

    def _run(self, magic: str, line: str, cell: str) -> Any:
        from nbagent.loop.deadline import MAX_TIME_HELP, parse_max_time
        from nbagent.notebook.magic_input import check_names, check_pointed_names, help_text, usage_line, wants_help

        if wants_help(line):  # %agent --help, %%agent -h
            print(help_text(self.agent.parser, magic))
            return None
        args = self._parse(magic, line)
        check_names(args.out, args.agent, _split_names(args.imports))
        namespace = self.shell.user_ns
        if args.code:
            if cell.strip():
                raise UsageError(f"{magic} --code takes no task: it prints the last run's program")
            return self._print_code(args, magic)
        if args.undo or (args.keep and not cell.strip()):  # no task: about the last run
            if cell.strip():
                raise UsageError(f"{magic} --undo takes no task: it undoes the last run")
            return self._undo_or_keep(args, magic)
        task = interpolate_task(cell.strip(), namespace)
        if not task:
            where = "after the options" if magic == "%agent" else "in the cell body"
            raise UsageError(f"{magic} needs a task: write it {where}")
        check_pointed_names(task, namespace, magic)
        try:
            args.max_time = None if args.max_time is None else parse_max_time(args.max_time) or 0
        except ValueError:
            raise UsageError(f"--max-time takes {MAX_TIME_HELP}, got {args.max_time!r}") from None
        vars_named = _split_names(args.vars)
        missing = [name for name in vars_named if name != "*" and name not in namespace]
        if missing:
            raise UsageError(f"--vars {','.join(missing)}: no such variable in the notebook")
        variables = pointed_variables(task, namespace, vars_named)
        if variables:
            task += describe_variables(variables, NOTEBOOK_VARIABLES_HEADING)
        for option, value, least in (
            ("max-steps", args.max_steps, "at least 1"),
            ("max-tokens", args.max_tokens, "0 or more"),
        ):
            if value is not None and value < (1 if option == "max-steps" else 0):
                raise UsageError(f"--{option} must be {least}, got {value}\n{usage_line(self.agent.parser, magic)}")
        if args.n_ctx is not None and args.n_ctx < 256:
            raise UsageError(f"--n-ctx must be at least 256 tokens, got {args.n_ctx}")
        agent = self._agent_for(args, namespace)
        if hasattr(agent, "keep_scratch"):
            agent.keep_scratch = args.keep is not None
        if vars_named and hasattr(agent, "share_variables"):  # the task's names are the agent's anyway
            agent.share_variables = "*" if vars_named == ["*"] else [n for n in vars_named if n != "*"]
        if args.copy:  # h14-widget: copy_inputs of the executor (nbagent/sandbox/copies.py), kept for the agent
            if not hasattr(getattr(agent, "python_executor", None), "copy_inputs"):
                raise UsageError("--copy needs a CodeAgent (an agent whose code runs in nbagent's executor)")
            agent.python_executor.copy_inputs = True
        if hasattr(agent, "max_tokens_per_step") and (args.max_tokens is not None or not agent.max_tokens_per_step):
            # the model's own cap made explicit (0 or unset): a step cut at it then says so to the model
            own = getattr(agent.model, "max_new_tokens", None)
            agent.max_tokens_per_step = args.max_tokens or (own if isinstance(own, int) else None)
        return self._run_agent(agent, task, args, magic)

    def _agent_for(self, args: Any, namespace: dict[str, Any]) -> Any:
        from nbagent.agents import MultiStepAgent

        if args.agent:
            agent = namespace.get(args.agent)
            if not isinstance(agent, MultiStepAgent):
                raise UsageError(f"--agent {args.agent}: no agent variable with that name (got {type(agent).__name__})")
            if args.model or args.tools or args.imports or args.executor or args.n_ctx:
                raise UsageError(
                    "--agent uses an existing agent: --model, --tools, --imports, --executor and --n-ctx cannot be "
                    "combined with it"
                )
            return agent
        if args.continue_run:
            if self.last_agent is None:
                raise UsageError("--continue: no earlier %%agent run in this session to continue")
            if args.n_ctx:
                raise UsageError("--n-ctx needs a new run (its model is loaded again): drop --continue")
            return self.last_agent
        return self._new_agent(args, namespace)

    def _new_agent(self, args: Any, namespace: dict[str, Any]) -> Any:
        from nbagent.agents import CodeAgent
        from nbagent.loop.executors import NoForkError, resolve_executor_type

        try:  # before the model loads: where there is no fork, the local executor only by name
            executor = resolve_executor_type(args.executor or self.default_executor or None, "--executor")
        except (NoForkError, ValueError) as error:
            raise UsageError(f"%%agent: {error}") from None
        spec = args.model or self.default_model
        tools = self._tools(args.tools, namespace)
        self._check_model(spec, args.n_ctx, namespace)
        imports = [*self.default_imports, *_split_names(args.imports)]
        self._tell_imports(_split_names(args.imports), executor, args.quiet)
        model = self._model(spec, namespace, args.n_ctx, show=not args.quiet and self.show_widget)
        agent = CodeAgent(
            executor_type=executor,
            tools=tools,
            model=model,
            additional_authorized_imports=imports,
            max_steps=args.max_steps or self.default_max_steps,
            namespace=namespace,
        )
        agent._pending_widget, self._loading_widget = self._loading_widget, None
        return agent

    def _check_model(self, spec: str, n_ctx: int | None, namespace: dict[str, Any]) -> None:
        """An unknown spec is a UsageError with suggestions, before any widget opens or model loads."""
        from nbagent.models.spec import MODEL_SPEC_HELP, check_spec

        if _is_model(namespace.get(spec)):
            if n_ctx:
                raise UsageError(
                    f"--n-ctx sets the context of a model nbagent loads; {spec} is already loaded "
                    "(make it with LlamaCppModel(..., n_ctx=...))"
                )
            return
        models = [name for name, value in namespace.items() if not name.startswith("_") and _is_model(value)]
        try:
            check_spec(spec, models)
        except ValueError as error:
            raise UsageError(f"--model {spec}: {error}. Use a variable holding a model, or {MODEL_SPEC_HELP}") from None

    def _model(self, spec: str, namespace: dict[str, Any], n_ctx: int | None, show: bool) -> Any:
        from nbagent.models.default import DefaultModelUnavailable
        from nbagent.models.spec import model_from_spec, needs_loading

        value = namespace.get(spec)
        if _is_model(value):
            return value
        key = (spec, n_ctx)
        if key not in self._models:
            loading = _show_loading(spec) if show and needs_loading(spec) else None
            try:
                self._models[key] = model_from_spec(spec, n_ctx=n_ctx)
            except Exception as error:
                if loading is not None:
                    loading.run = {**loading.run, "status": "error", "error": str(error), "message": None}
                if isinstance(error, ValueError):
                    raise UsageError(f"--model {spec}: {error}") from None
                if isinstance(error, DefaultModelUnavailable):  # its message names `nbagent setup`
                    raise AgentRunFailed(str(error)) from None
                raise AgentRunFailed(f"--model {spec}: {error}") from None
            self._loading_widget = loading
        return self._models[key]

    def _tell_imports(self, modules: list[str], executor: str, quiet: bool) -> None:
        from nbagent.notebook.magic_input import imports_notice

        notice = None if quiet else imports_notice(modules, executor)
        if notice:
            print(notice)

    def _tools(self, names: str | None, namespace: dict[str, Any]) -> list[Any]:
        from nbagent.tools import Tool

        tools = []
        for name in _split_names(names):
            value = namespace.get(name)
            if not isinstance(value, Tool):
                found = "is not defined" if value is None else f"is a {type(value).__name__}, not a tool"
                raise UsageError(f"--tools {name}: the variable {found}; define it with @tool or Tool first")
            tools.append(value)
        return tools

    def _run_agent(self, agent: Any, task: str, args: Any, magic: str) -> Any:
        """Run; the cell's value is the answer only with --quiet (a widget or the console already shows it)."""
        from nbagent.errors import AgentGenerationError
        from nbagent.loop import LogLevel

        saved = agent.show_widget, agent.verbosity_level
        if args.quiet:
            agent.show_widget, agent.verbosity_level = False, LogLevel.OFF
        elif agent.show_widget is None:
            agent.show_widget = self.show_widget
        self.last_agent = agent
        limit = {} if args.max_time is None else {"max_time": args.max_time}  # 0: no limit; unset: the agent's
        try:
            if args.step:
                controller = agent.start(task, reset=not args.continue_run, **limit)
                if args.out:
                    controller.when_finished(lambda result: self._store(args.out, _answer_of(result)))
                return None
            result = agent.run(task, reset=not args.continue_run, return_full_result=True, **limit)
        except AgentGenerationError as error:
            if args.out:
                self._store(args.out, None)
            if args.quiet:
                return None
            raise AgentRunFailed(_failure_line(str(error), args.out)) from None
        finally:
            agent.show_widget, agent.verbosity_level = saved
            agent._pending_widget = None
        answer = _answer_of(result)
        if args.out:
            ns = self.shell.user_ns
            self._out = (agent, args.out, args.out in ns, ns.get(args.out), answer)  # for --undo
            self._store(args.out, answer)
        if not args.quiet and answer is None:
            _say_outcome(magic, result, args.out)
        if args.quiet:
            from nbagent.notebook.answer_display import show_plainly

            show_plainly(self.shell, answer)  # shown as 25124.05; the cell's value stays the numpy scalar
        return answer if args.quiet else None

    def _store(self, name: str, value: Any) -> None:
        self.shell.user_ns[name] = value

    def _print_code(self, args: Any, magic: str) -> None:
        """`%agent --code`: the last run's program, checked (what the widget's "Copy as cell" inserts)."""
        agent = self.shell.user_ns.get(args.agent) if args.agent else self.last_agent
        if agent is None or not hasattr(agent, "to_code"):
            raise UsageError(f"{magic} --code: no agent run in this session yet")
        print(str(agent.to_code()), end="")

    def _undo_or_keep(self, args: Any, magic: str) -> None:
        """`%agent --undo`: undo the last run (its `-o` variable too); `%agent --keep [a,b]`: bring names in."""
        from nbagent.notebook.scratch import undo_or_keep

        agent = self.shell.user_ns.get(args.agent) if args.agent else self.last_agent
        if agent is None or not hasattr(agent, "undo"):
            raise UsageError(f"{magic} --{'undo' if args.undo else 'keep'}: no agent run in this session yet")
        out = getattr(self, "_out", None)
        print(undo_or_keep(agent, self.shell.user_ns, args.undo, args.keep, out if out and out[0] is agent else None))


def _is_model(value: Any) -> bool:
    return value is not None and not isinstance(value, str) and (hasattr(value, "generate") or callable(value))


def _show_loading(spec: str) -> Any:
    from nbagent.notebook.display import show_loading_widget

    name = spec.partition(":")[2] if ":" in spec and not spec.lower().endswith(".gguf") else spec
    what = "the offline model" if spec in ("", "default") else Path(name).expanduser().name or spec
    return show_loading_widget(f"loading {what}…")


def _answer_of(result: Any) -> Any:
    """The run's answer when it answered; None for max steps, a stop, a failure, or an answer that reads as an error."""
    from nbagent.record.status import answered, run_outcome

    return result.output if answered(run_outcome(result.state, result.output, result.error)) else None


def _say_outcome(magic: str, result: Any, out: str | None) -> None:
    """One line under the widget naming how the run ended when it did not answer."""
    from nbagent.record.status import outcome_message, run_outcome

    outcome = run_outcome(result.state, result.output, result.error)
    stored = f" ({out} = None)" if out else ""
    print(f"{magic}: {outcome_message(outcome)}{stored}", file=sys.stderr)


def _failure_line(error: str, out: str | None) -> str:
    """The one line a failed run ends with; --continue is suggested only where it can help."""
    stored = f" ({out} = None)" if out else ""
    if "context window" in error:  # continuing would overflow again: the message says what helps
        return error + stored
    return f"{error}{stored} (the memory so far is kept: `%%agent --continue` goes on from it)"


def _split_options(words: list[str], parser: Any) -> tuple[list[str], list[str]]:
    """Split `%agent` words into leading options (with their values) and the task."""
    takes_value = {
        opt
        for action in parser._actions
        if action.nargs is None and action.option_strings
        for opt in action.option_strings
    }
    options: list[str] = []
    index = 0
    while index < len(words) and words[index].startswith("-"):
        options.append(words[index])
        if words[index] in takes_value and index + 1 < len(words):
            options.append(words[index + 1])
            index += 1
        index += 1
    return options, words[index:]
