"""The tool-calling step: the model calls tools by name with JSON arguments (`ToolCallingLoop`)."""

from __future__ import annotations

import contextvars
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from nbagent.errors import AgentError, AgentParsingError, AgentToolCallError, AgentToolExecutionError
from nbagent.media import is_image
from nbagent.record import ActionOutput, ActionStep, ToolCall, ToolOutput
from nbagent.tools.calls import limited

from .engine import AgentLoop

__all__ = ["ToolCallingLoop"]

STOP_SEQUENCES = ["Observation:", "Calling tools:"]


class ToolCallingLoop(AgentLoop):
    """The loop of an agent whose actions are tool calls (native tool calling, or JSON in the text).

    Args (beyond the loop's):
        max_tool_threads: how many tool calls of one step may run at once (default: one per call, up to 4).
    """

    prompt_kind = "toolcalling_agent"

    def __init__(
        self,
        tools: list[Any] | None = None,
        model: Any = None,
        prompt_templates: dict[str, Any] | None = None,
        planning_interval: int | None = None,
        max_tool_threads: int | None = None,
        **kwargs: Any,
    ) -> None:
        if max_tool_threads is not None and max_tool_threads < 1:
            raise ValueError(f"max_tool_threads must be at least 1, got {max_tool_threads}")
        self.max_tool_threads = max_tool_threads
        super().__init__(
            tools=tools, model=model, prompt_templates=prompt_templates, planning_interval=planning_interval, **kwargs
        )

    @property
    def tools_and_managed_agents(self) -> list[Any]:
        return [*self.tools.values(), *self.managed_agents.values()]

    def _step_stream(self, memory_step: ActionStep) -> Iterator[Any]:
        messages = self.write_memory_to_messages()
        memory_step.model_input_messages = messages
        message = yield from self._generate(
            messages, stop_sequences=STOP_SEQUENCES, tools_to_call_from=self.tools_and_managed_agents
        )
        memory_step.model_output_message = message
        memory_step.model_output = message.text
        memory_step.token_usage = message.token_usage
        outputs = []
        for event in self.process_tool_calls(self._with_tool_calls(message), memory_step):
            if isinstance(event, ToolOutput):
                outputs.append(event)
            yield event
        final = [output for output in outputs if output.is_final_answer]
        if final and len(outputs) > 1:
            raise AgentToolCallError(
                "final_answer must be called alone: if you want to return an answer, please do not perform any other "
                "tool calls than the final answer tool call!"
            )
        yield ActionOutput(output=final[0].output if final else None, is_final_answer=bool(final))

    def process_tool_calls(self, chat_message: Any, memory_step: ActionStep) -> Iterator[ToolCall | ToolOutput]:
        """Run the tool calls of `chat_message` (in parallel when several), yielding each `ToolCall`, then
        each `ToolOutput` in call order; records the calls and observations on `memory_step` (smolagents' method)."""
        calls = [
            ToolCall(name=tc.function.name, arguments=tc.function.arguments, id=tc.id)
            for tc in chat_message.tool_calls or []
        ]
        memory_step.tool_calls = calls
        yield from calls
        outputs = self._run_tool_calls(calls)
        memory_step.observations = "\n".join(output.observation for output in outputs)
        memory_step.observations_images = [img for output in outputs for img in output.images] or None
        yield from outputs

    def _with_tool_calls(self, message: Any) -> Any:
        """`message` with its tool calls read (from the text when the model has no native tool calling)."""
        if not message.tool_calls:
            try:
                message = self.model.parse_tool_calls(message) if hasattr(self.model, "parse_tool_calls") else message
            except ValueError as failure:
                raise AgentParsingError(
                    f"Error while parsing tool call from model output: {failure}\n"
                    'Call a tool with a JSON object such as {"name": "final_answer", "arguments": {"answer": "..."}}.'
                ) from None
        if not message.tool_calls:
            raise AgentParsingError("Your answer called no tool. Call a tool, or final_answer to finish.")
        return message

    def _run_tool_calls(self, calls: list[ToolCall]) -> list[ToolOutput]:
        if len(calls) <= 1:
            return [self._run_tool_call(call) for call in calls]
        workers = max(1, self.max_tool_threads or min(len(calls), 4))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            # each call in a copy of this context: context variables (e.g. the event loop async tools use) go along
            futures = [pool.submit(contextvars.copy_context().run, self._run_tool_call, call) for call in calls]
            return [future.result() for future in futures]

    def _run_tool_call(self, call: ToolCall) -> ToolOutput:
        result = self.execute_tool_call(call.name, call.arguments)
        images = [result] if is_image(result) else []
        if images:
            name = f"image_{call.id}.png"
            self.state[name] = self.state["image.png"] = result  # "image.png": the latest, smolagents' name
            observation = f"Stored '{name}' in memory."
        else:
            observation = str(result).strip()
        return ToolOutput(
            id=call.id,
            output=result,
            is_final_answer=call.name == "final_answer",
            observation=f"Observation of {call.name}:\n{observation}" if call.name != "final_answer" else observation,
            tool_call=call,
            images=images,
        )

    def execute_tool_call(self, tool_name: str, arguments: dict[str, Any] | str | None) -> Any:
        """Run one tool (or managed agent) with arguments; errors name the tool and what to fix."""
        available = {**self.tools, **self.managed_agents}
        if tool_name not in available:  # smolagents raises this kind here
            raise AgentToolExecutionError(
                f"Unknown tool {tool_name!r}; available tools: {', '.join(sorted(available))}"
            )
        tool = available[tool_name]
        arguments = self._substitute_state_variables(_decode_arguments(arguments))
        one_scalar = isinstance(arguments, (int, float)) and len(getattr(tool, "inputs", {}) or {}) == 1
        if arguments is not None and not isinstance(arguments, (dict, str)) and not one_scalar:
            raise AgentToolCallError(
                f"Invalid arguments for tool {tool_name!r}: give a JSON object of its inputs, not a "
                f"{type(arguments).__name__}. It takes: {json.dumps(getattr(tool, 'inputs', {}), default=str)}"
            )
        try:
            with limited(stopped=lambda: self.gates.stopping):  # a tool that waits (an MCP call) ends on Stop
                if isinstance(arguments, dict):
                    return tool(**arguments)
                return tool(arguments) if arguments is not None else tool()
        except AgentError:
            raise
        except TypeError as failure:
            raise AgentToolCallError(
                f"Invalid arguments for tool {tool_name!r}: {failure}. "
                f"It takes: {json.dumps(getattr(tool, 'inputs', {}), default=str)}"
            ) from None
        except Exception as failure:
            raise AgentToolExecutionError(
                f"Error executing tool {tool_name!r} with arguments {arguments!r}: {type(failure).__name__}: {failure}\n"
                "Please try again or use another tool."
            ) from None

    def _substitute_state_variables(self, arguments: Any) -> Any:
        if isinstance(arguments, dict):
            return {
                key: self.state.get(value, value) if isinstance(value, str) else value
                for key, value in arguments.items()
            }
        if isinstance(arguments, str):
            return self.state.get(arguments, arguments)
        return arguments


def _decode_arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return arguments
