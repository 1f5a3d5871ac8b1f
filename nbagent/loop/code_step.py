"""The code step: the model writes Python, the sandbox runs it (in the notebook's namespace if given).

`CodeLoop` is the loop of `CodeAgent`: one step is generate → parse the code →
review it at the approval gate → run it in the executor → observe.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from nbagent.errors import AgentExecutionError, RunStopped
from nbagent.media import collect_images, is_image
from nbagent.record import CODE_TOOL_NAME, ActionOutput, ActionStep, ToolCall, ToolOutput
from nbagent.sandbox import ExecutionError, ExecutionStopped, LocalPythonExecutor
from nbagent.text import OBSERVATION, truncate

from .engine import AgentLoop
from .gates import CodeRejected
from .parsing import parse_code_blobs

__all__ = ["CodeLoop", "close_code_fence", "STOP_SEQUENCES"]

# The closing fence of the code block ends the answer: what a model writes after its code is never
# run, and small local models otherwise go on for ~100 tokens. The fence is put back afterwards.
CODE_END = "\n```\n"
STOP_SEQUENCES = ["Observation:", "Calling tools:", CODE_END]


class CodeLoop(AgentLoop):
    """The loop of an agent whose actions are Python code blocks, run natively in nbagent's sandbox.

    Args (beyond the loop's):
        additional_authorized_imports: modules the code may import (`"pandas"`, `"numpy.*"`, `"*"`).
        max_print_outputs_length: cap on the printed output kept per step.
        executor_kwargs: passed to `LocalPythonExecutor` (e.g. `timeout_seconds`).
        namespace: the dict the code runs in, e.g. a notebook's `get_ipython().user_ns`;
            what the code defines stays there. Default: a private dict.
        executor_type: only "local" (nbagent's sandbox); other values are refused.
    """

    prompt_kind = "code_agent"

    def __init__(
        self,
        tools: list[Any] | None = None,
        model: Any = None,
        prompt_templates: dict[str, Any] | None = None,
        additional_authorized_imports: list[str] | None = None,
        planning_interval: int | None = None,
        executor_type: str = "local",
        executor_kwargs: dict[str, Any] | None = None,
        max_print_outputs_length: int | None = None,
        namespace: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if executor_type != "local":
            raise ValueError(
                f"executor_type={executor_type!r} is not supported: nbagent runs the agent's code in its own "
                "local sandbox (executor_type='local')"
            )
        self.additional_authorized_imports = list(additional_authorized_imports or [])
        self.max_print_outputs_length = max_print_outputs_length
        self.executor_type = executor_type
        self.executor_kwargs = dict(executor_kwargs or {})
        self.python_executor = LocalPythonExecutor(
            additional_authorized_imports=self.additional_authorized_imports,
            max_print_outputs_length=max_print_outputs_length,
            namespace=namespace,
            **self.executor_kwargs,
        )
        super().__init__(
            tools=tools, model=model, prompt_templates=prompt_templates, planning_interval=planning_interval, **kwargs
        )
        self.gates.on_stop(self.python_executor.request_stop)

    @property
    def authorized_imports(self) -> list[str]:
        return list(self.python_executor.authorized_imports)

    def authorized_imports_text(self) -> str:
        return ", ".join(sorted(self.authorized_imports))

    def _prepare_executor(self) -> None:
        self.python_executor.send_variables(self.state)
        self.python_executor.send_tools({**self.tools, **self.managed_agents})

    def _step_stream(self, memory_step: ActionStep) -> Iterator[Any]:
        messages = self.write_memory_to_messages()
        memory_step.model_input_messages = messages
        message = yield from self._generate(messages, stop_sequences=STOP_SEQUENCES)
        memory_step.model_output_message = message
        memory_step.model_output = close_code_fence(message.text)
        memory_step.token_usage = message.token_usage
        code = parse_code_blobs(message.text)
        memory_step.model_code_action = code
        try:
            memory_step.code_action = self.gates.review_code(memory_step, code)
        except CodeRejected as rejected:  # approve mode: the person's note is what the model observes
            memory_step.code_action, memory_step.observations = code, rejected.observation
            yield ActionOutput(output=None, is_final_answer=False)
            return
        call = ToolCall(name=CODE_TOOL_NAME, arguments=memory_step.code_action, id=f"call_{memory_step.step_number}")
        memory_step.tool_calls = [call]
        yield call
        output = self._execute(memory_step)
        yield ToolOutput(
            id=call.id,
            output=output.output,
            is_final_answer=output.is_final_answer,
            observation=memory_step.observations or "",
            tool_call=call,
            logs=output.logs,
            images=list(memory_step.observations_images or []),
        )
        yield ActionOutput(output=output.output, is_final_answer=output.is_final_answer)

    def _execute(self, memory_step: ActionStep) -> Any:
        code = memory_step.code_action
        try:
            with collect_images(
                load_matplotlib="matplotlib" in code and _authorized("matplotlib", self.authorized_imports)
            ) as images:
                output = self.python_executor(code)
        except ExecutionStopped as stopped:
            memory_step.observations = _logs_observation(stopped.logs)
            raise RunStopped(self.gates.stop_reason or str(stopped)) from None
        except ExecutionError as failure:
            memory_step.observations = _logs_observation(failure.logs)
            raise AgentExecutionError(str(failure)) from None
        if is_image(output.output) and all(output.output is not image for image in images):
            images.append(output.output)
        memory_step.observations_images = images or memory_step.observations_images
        memory_step.observations = _observation(output.logs, output.output)
        return output


def _authorized(module: str, authorized: list[str]) -> bool:
    return any(entry in ("*", module, f"{module}.*") for entry in authorized)


def close_code_fence(text: str) -> str:
    """Put back the closing fence that the `CODE_END` stop sequence cut off."""
    return text + CODE_END.rstrip("\n") if text.count("```") % 2 == 1 else text


def _observation(logs: str | None, output: Any) -> str:
    # "Last output: None" after printed logs reads to small models as "the code failed"; leave it out then.
    if output is None and logs:
        return _logs_observation(logs)
    return _logs_observation(logs) + "Last output from code snippet:\n" + truncate(str(output), OBSERVATION)


def _logs_observation(logs: str | None) -> str:
    return f"Execution logs:\n{logs or ''}\n" if logs else ""
