"""`%%agent` and `%agent`: ask an agent from a cell; its code runs in this notebook's namespace.

    %load_ext nbagent
    %%agent --imports pandas -o best
    Which region in {table_name} has the highest revenue?

The cell body is the task. The model is told about the notebook variables the task
points at, and only those: names in backticks (`` `sales` ``), `{name}` placeholders of
data values, and `--vars a,b` (`--vars '*'`: every data variable). `{name}` of a string
or number is replaced by its value (write `{{` and `}}` for literal braces); `{name}` of
anything else becomes `` `name` `` and is described (a DataFrame by its schema, never
its whole data). The final answer is the cell's value. Defaults come from traits:
`%config AgentMagics.default_model = "model.gguf"`.
"""

from __future__ import annotations

import re
import shlex
import types
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from traitlets import Bool, Int, List, Unicode

from nbagent.loop.variables import NOTEBOOK_VARIABLES_HEADING, describe_variables

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
            raise UsageError(
                f"The task refers to {{{name}}} but no variable {name!r} is defined "
                f"(write {{{{{name}}}}} for literal braces)"
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
        super().__init__(shell, **kwargs)
        self._models: dict[str, Any] = {}
        self.last_agent: Any = None

    @magic_arguments()
    @argument(
        "-m",
        "--model",
        default=None,
        help="a variable holding a model, or a model spec ('default', a .gguf path, openai:<id>, …)",
    )
    @argument("--tools", default=None, help="comma-separated names of variables holding tools")
    @argument(
        "--vars", default=None, help="comma-separated notebook variables to describe to the model ('*': all data)"
    )
    @argument("--imports", default=None, help="comma-separated modules the agent's code may import, e.g. pandas,numpy")
    @argument("--max-steps", type=int, default=None, help="maximum number of steps")
    @argument(
        "--max-tokens", type=int, default=None, help="cap on the tokens the model writes per step (0: the model's own)"
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
        help="the agent's code works on copies of your variables (they stay untouched); what it creates comes back",
    )
    @argument("--agent", default=None, help="the name of an existing agent variable to use")
    @argument(
        "--continue", dest="continue_run", action="store_true", help="continue the last conversation (reset=False)"
    )
    @argument("-o", "--out", default=None, help="store the final answer in this variable")
    @argument("--quiet", action="store_true", help="no widget and no console output")
    @argument(
        "--step",
        action="store_true",
        help="prepare the run paused and return: the widget's Step/Run (or agent.controller) drive it",
    )
    @cell_magic
    def agent(self, line: str, cell: str) -> Any:
        """Run an agent on the task written in the cell body."""
        return self._run(self.agent, line, cell)

    @line_magic("agent")
    def agent_line(self, line: str) -> Any:
        """`%agent [options] task`: the one-line form of `%%agent`."""
        try:
            words = shlex.split(line)
        except ValueError as error:
            raise UsageError(f"%agent: {error}") from None
        options, task = _split_options(words, self.agent.parser)
        return self._run(self.agent, shlex.join(options), " ".join(task))

    # ---------------------------------------------------------------- helpers

    def _run(self, magic: Any, line: str, cell: str) -> Any:
        try:
            args = magic.parser.parse_args(shlex.split(line))
        except ValueError as error:  # unbalanced quotes
            raise UsageError(f"%%agent: {error}\n{magic.parser.format_usage()}") from None
        namespace = self.shell.user_ns
        task = interpolate_task(cell.strip(), namespace)
        if not task:
            raise UsageError("%%agent needs a task: write it in the cell body (or after %agent)")
        vars_named = _split_names(args.vars)
        missing = [name for name in vars_named if name != "*" and name not in namespace]
        if missing:
            raise UsageError(f"--vars {','.join(missing)}: no such variable in the notebook")
        variables = pointed_variables(task, namespace, vars_named)
        if variables:
            task += describe_variables(variables, NOTEBOOK_VARIABLES_HEADING)
        if args.max_steps is not None and args.max_steps < 1:
            raise UsageError(f"--max-steps must be at least 1, got {args.max_steps}\n{magic.parser.format_usage()}")
        if args.max_tokens is not None and args.max_tokens < 0:
            raise UsageError(f"--max-tokens must be 0 or more, got {args.max_tokens}\n{magic.parser.format_usage()}")
        agent = self._agent_for(args, namespace)
        if args.copy:  # h14-widget: copy_inputs of the executor (nbagent/sandbox/copies.py), kept for the agent
            if not hasattr(getattr(agent, "python_executor", None), "copy_inputs"):
                raise UsageError("--copy needs a CodeAgent (an agent whose code runs in nbagent's executor)")
            agent.python_executor.copy_inputs = True
        if args.max_tokens is not None and hasattr(agent, "max_tokens_per_step"):
            agent.max_tokens_per_step = args.max_tokens or None
        return self._run_agent(agent, task, args)

    def _agent_for(self, args: Any, namespace: dict[str, Any]) -> Any:
        from nbagent.agents import MultiStepAgent

        if args.agent:
            agent = namespace.get(args.agent)
            if not isinstance(agent, MultiStepAgent):
                raise UsageError(f"--agent {args.agent}: no agent variable with that name (got {type(agent).__name__})")
            if args.model or args.tools or args.imports or args.executor:
                raise UsageError(
                    "--agent uses an existing agent: --model, --tools, --imports and --executor cannot be combined "
                    "with it"
                )
            return agent
        if args.continue_run:
            if self.last_agent is None:
                raise UsageError("--continue: no earlier %%agent run in this session to continue")
            return self.last_agent
        return self._new_agent(args, namespace)

    def _new_agent(self, args: Any, namespace: dict[str, Any]) -> Any:
        from nbagent.agents import CodeAgent

        imports = [*self.default_imports, *_split_names(args.imports)]
        return CodeAgent(
            executor_type=args.executor or self.default_executor or None,
            tools=self._tools(args.tools, namespace),
            model=self._model(args.model or self.default_model, namespace),
            additional_authorized_imports=imports,
            max_steps=args.max_steps or self.default_max_steps,
            namespace=namespace,
        )

    def _model(self, spec: str, namespace: dict[str, Any]) -> Any:
        from nbagent.models.spec import MODEL_SPEC_HELP, model_from_spec

        value = namespace.get(spec)
        if value is not None and (hasattr(value, "generate") or callable(value)) and not isinstance(value, str):
            return value
        if spec not in self._models:
            try:
                self._models[spec] = model_from_spec(spec)
            except ValueError as error:
                raise UsageError(
                    f"--model {spec}: {error}. Use a variable holding a model, or {MODEL_SPEC_HELP}"
                ) from None
        return self._models[spec]

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

    def _run_agent(self, agent: Any, task: str, args: Any) -> Any:
        from nbagent.errors import AgentGenerationError
        from nbagent.loop import LogLevel

        saved = agent.show_widget, agent.verbosity_level
        if args.quiet:
            agent.show_widget, agent.verbosity_level = False, LogLevel.OFF
        elif agent.show_widget is None:
            agent.show_widget = self.show_widget
        self.last_agent = agent
        try:
            if args.step:
                controller = agent.start(task, reset=not args.continue_run)
                if args.out:
                    controller.when_finished(lambda result: self.shell.user_ns.__setitem__(args.out, result.output))
                return None
            result = agent.run(task, reset=not args.continue_run, return_full_result=True)
        except AgentGenerationError as error:
            raise AgentRunFailed(f"{error} (the memory so far is kept: `%%agent --continue` goes on from it)") from None
        finally:
            agent.show_widget, agent.verbosity_level = saved
        if args.out:
            self.shell.user_ns[args.out] = result.output
        return result.output


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
