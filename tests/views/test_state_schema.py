"""The widget's state has one schema: the keys Python builds are exactly the `@property` names of js/types.js.

Python side: `memory_to_state` and `RunStateBuilder` (nbagent/views/state.py), `RunDriver.snapshot()`
(the `controls` trait), `AgentWidget`'s synced traits and its custom messages. JS side: the JSDoc
`@typedef`s of js/types.js, which `npm run typecheck` checks the front-end against. A key added on one
side only fails here (`test_a_key_on_one_side_only_is_reported` shows the comparison catching it).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from PIL import Image

from nbagent import ActionStep, AgentMemory, CodeAgent, PlanningStep, ScriptedModel, TaskStep, Timing, ToolCallingAgent
from nbagent.errors import AgentExecutionError
from nbagent.loop.aids.data_card import describe_variables
from nbagent.loop.program import RunProgram
from nbagent.models.base import ChatMessage, TokenUsage
from nbagent.record import FinalAnswerStep, RunStart, StepStart, ToolCall, ToolOutput
from nbagent.sandbox.wire.capabilities import RefusedCapability
from nbagent.views.state import RunStateBuilder, memory_to_state

ROOT = Path(__file__).resolve().parents[2]
TYPES_JS = ROOT / "js" / "types.js"

# The typedef of each step kind (the `Step` union of js/types.js lists exactly these).
STEP_TYPES = {"task": "TaskStep", "action": "ActionStep", "planning": "PlanningStep", "final": "FinalStep"}
# Typedefs of what JS sends and Python reads with .get(): no Python dict to compare them with.
SENT_BY_JS = {"ControlCommand", "RequestImagesMessage"}
MESSAGE_TYPES = {
    "step_start": "StepStartMessage",
    "delta": "DeltaMessage",
    "logs": "LogsMessage",
    "images": "ImagesMessage",
}
FENCE = "`" * 3


# ---------------------------------------------------------------------------- reading js/types.js


@dataclass
class Typedef:
    name: str
    type: str  # the expression in `@typedef {…}`: "object", or e.g. `StepFields & {kind: "action"}`
    properties: dict[str, tuple[str, bool]] = field(default_factory=dict)  # name -> (type, optional)


def _braced(text: str, start: int) -> tuple[str, int]:
    """The text inside the balanced `{…}` opening at `text[start]`, and the index after its `}`."""
    assert text[start] == "{", text[start:]
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1 : i].strip(), i + 1
    raise ValueError(f"unbalanced braces in {text[start:]!r}")


def _split_top(expression: str, separator: str) -> list[str]:
    """`expression` split at `separator`s outside braces, brackets and parentheses."""
    parts, depth, current = [], 0, ""
    for char in expression:
        depth += 1 if char in "{[(<" else -1 if char in "}])>" else 0
        if char == separator and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()]


def parse_typedefs(source: str) -> dict[str, Typedef]:
    """Every `@typedef` of a JS source, with its `@property` tags (one typedef per JSDoc block)."""
    typedefs: dict[str, Typedef] = {}
    for block in re.findall(r"/\*\*(.*?)\*/", source, re.S):
        text = " ".join(re.sub(r"^\s*\*\s?", "", line) for line in block.splitlines())
        current: Typedef | None = None
        for tag in re.finditer(r"@(typedef|property)\s*(?=\{)", text):
            expression, end = _braced(text, tag.end())
            name = re.match(r"\s*(\[?)([A-Za-z_$][\w$]*)", text[end:])
            assert name, f"no name after @{tag.group(1)} {{{expression}}}"
            if tag.group(1) == "typedef":
                current = typedefs[name.group(2)] = Typedef(name.group(2), expression)
            else:
                assert current is not None, f"@property {name.group(2)} before any @typedef"
                assert name.group(2) not in current.properties, f"{current.name}.{name.group(2)} twice"
                current.properties[name.group(2)] = (expression, name.group(1) == "[")
    return typedefs


def properties(typedefs: dict[str, Typedef], name: str) -> dict[str, tuple[str, bool]]:
    """The properties of an object typedef, or of an intersection `A & {key: T}` of such (later parts win)."""
    typedef = typedefs[name]
    if typedef.type in ("object", "Object"):
        return typedef.properties
    merged: dict[str, tuple[str, bool]] = {}
    for part in _split_top(typedef.type, "&"):
        if part in typedefs:
            merged.update(properties(typedefs, part))
        elif part.startswith("{"):
            for entry in _split_top(_braced(part, 0)[0], ","):
                key, _, value = entry.partition(":")
                merged[key.strip().rstrip("?")] = (value.strip(), key.strip().endswith("?"))
        else:
            raise ValueError(f"{name}: {typedef.type!r} is not an object type")
    return merged


def literals(expression: str) -> set[str]:
    """The string literals of a union type such as `"run" | "pause"`."""
    parts = _split_top(expression, "|")
    assert all(re.fullmatch(r'"[^"]*"', p) for p in parts), f"not a union of string literals: {expression}"
    return {p.strip('"') for p in parts}


def key_problems(typedefs: dict[str, Typedef], name: str, data: dict[str, Any], where: str) -> list[str]:
    """How the keys of `data` differ from the properties of typedef `name` ([] when they agree)."""
    props = properties(typedefs, name)
    required = {key for key, (_, optional) in props.items() if not optional}
    problems = []
    if missing := sorted(required - data.keys()):
        problems.append(f"{where}: js/types.js {name} has {missing}, the Python dict has not")
    if extra := sorted(data.keys() - props.keys()):
        problems.append(f"{where}: the Python dict has {extra}, js/types.js {name} has not")
    return problems


class SchemaCheck:
    """Walks the state Python built, comparing every dict with its typedef; remembers which typedefs it used."""

    def __init__(self, typedefs: dict[str, Typedef]) -> None:
        self.typedefs = typedefs
        self.problems: list[str] = []
        self.seen: set[str] = set()

    def check(self, name: str, data: Any, where: str) -> None:
        assert isinstance(data, dict), f"{where}: {name} should be a dict, got {type(data).__name__}"
        self.seen.add(name)
        self.problems += key_problems(self.typedefs, name, data, where)

    def run(self, run: dict[str, Any], where: str = "run") -> None:
        self.check("Run", run, where)
        self._optional("Answer", run.get("final_answer"), f"{where}.final_answer")
        self._optional("TokenUsage", run.get("token_usage"), f"{where}.token_usage")
        self._optional("Program", run.get("program"), f"{where}.program")
        for i, step in enumerate(run.get("steps", [])):
            self.step(step, f"{where}.steps[{i}]")

    def step(self, step: dict[str, Any], where: str) -> None:
        kind = step.get("kind")
        assert kind in STEP_TYPES, f"{where}: a step of kind {kind!r}, which js/types.js has no typedef for"
        self.check(STEP_TYPES[kind], step, f"{where} ({kind})")
        self._optional("Answer", step.get("final_answer"), f"{where}.final_answer")
        self._optional("TokenUsage", step.get("token_usage"), f"{where}.token_usage")
        for j, call in enumerate(step.get("tool_calls") or []):
            self.check("ToolCall", call, f"{where}.tool_calls[{j}]")
        for j, change in enumerate(step.get("changes") or []):
            self.check("NamespaceChange", change, f"{where}.changes[{j}]")
        for j, entry in enumerate(step.get("permissions") or []):
            self.check("Permission", entry, f"{where}.permissions[{j}]")
        for j, change in enumerate(step.get("code_changes") or []):
            self.check("CodeChange", change, f"{where}.code_changes[{j}]")
        for j, part in enumerate(step.get("parts") or []):
            self.check("TaskPart", part, f"{where}.parts[{j}]")
            self._optional("PreviewTable", part.get("table"), f"{where}.parts[{j}].table")
        for j, child in enumerate(step.get("children") or []):
            self.run(child, f"{where}.children[{j}]")

    def controls(self, snapshot: dict[str, Any], where: str = "controls") -> None:
        self.check("ControlsSnapshot", snapshot, where)
        self.check("ControlsCan", snapshot.get("can"), f"{where}.can")
        self._optional("PendingAsk", snapshot.get("pending_ask"), f"{where}.pending_ask")

    def message(self, content: dict[str, Any], where: str) -> None:
        kind = content.get("type")
        assert kind in MESSAGE_TYPES, f"{where}: a message of type {kind!r}, which js/types.js has no typedef for"
        self.check(MESSAGE_TYPES[kind], content, where)

    def _optional(self, name: str, data: Any, where: str) -> None:
        if data is not None:
            self.check(name, data, where)


@pytest.fixture(scope="module")
def typedefs() -> dict[str, Typedef]:
    return parse_typedefs(TYPES_JS.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------- what Python builds


def code(body: str, thought: str = "I will run code.") -> str:
    return f"Thought: {thought}\n{FENCE}python\n{body}\n{FENCE}"


FRAME = pd.DataFrame({"n": [1, 2], "square": [1, 4]})  # described in the task: its first rows show as a table


def every_step_kind(image: Image.Image) -> AgentMemory:
    """Task with an image, a plan, an error step with the CodeAgent's own call, an edited step with
    images, a tool-calling step, the final answer (an action step, then smolagents' FinalAnswerStep)."""
    memory = AgentMemory("system")
    memory.steps = [
        TaskStep(task="Plot the squares of `frame`" + describe_variables({"frame": FRAME}), task_images=[image]),
        PlanningStep(
            model_output_message=ChatMessage(role="assistant", content="1. compute\n2. plot"),
            plan="1. compute\n2. plot",
            timing=Timing(10.0, 11.0),
            token_usage=TokenUsage(10, 5),
        ),
        ActionStep(
            step_number=1,
            timing=Timing(11.0, 12.0),
            model_output=code("x = 1/0"),
            code_action="x = 1/0",
            tool_calls=[ToolCall("python_interpreter", "x = 1/0", "call_1")],
            error=AgentExecutionError("ZeroDivisionError: division by zero"),
            token_usage=TokenUsage(100, 20),
        ),
        ActionStep(
            step_number=2,
            timing=Timing(12.0, 13.0),
            model_output=code("img = plot()"),
            code_action="img = plot(color='red')",
            model_code_action="img = plot()",
            rewritten_code_action="img = plot(dpi=100)",
            edited_code_action="img = plot(color='red')",
            observations="Execution logs:\nplotted\n",
            warnings=["UserWarning: no artists (line 1)"],
            observations_images=[Image.new("RGB", (8, 8), (0, 0, 255))],
            token_usage=TokenUsage(120, 25),
            namespace_changes=[{"name": "img", "change": "created", "type": "Image", "detail": "", "kept": True}],
            permissions=[{"kind": "write", "target": "/w/a.png", "answer": "once", "scope": "once", "by": "person"}],
        ),
        ActionStep(
            step_number=3,
            timing=Timing(13.0, 14.0),
            model_output="I will look it up",
            tool_calls=[ToolCall("search", {"query": "squares", "limit": 3}, "call_3")],
            observations="1, 4, 9",
            action_output="1, 4, 9",
        ),
        ActionStep(step_number=4, timing=Timing(14.0, 14.5), action_output="1, 4, 9", is_final_answer=True),
        FinalAnswerStep(output="1, 4, 9"),
    ]
    return memory


def scripted_code_agent() -> CodeAgent:
    """A CodeAgent that plans, fails once, then answers (the model's text streams)."""
    model = ScriptedModel(["1. divide\n2. answer", code("x = 1/0"), code("print('ok')\nfinal_answer(42)")])
    return CodeAgent(model=model, verbosity_level=-1, show_widget=False, planning_interval=5)


def scripted_manager() -> ToolCallingAgent:
    """A ToolCallingAgent that calls a managed agent (whose run becomes a step's child) and then a tool."""

    def call(name: str, **arguments: Any) -> dict[str, Any]:
        return {"content": f"calling {name}", "tool_calls": [{"function": {"name": name, "arguments": arguments}}]}

    helper = ToolCallingAgent(
        tools=[],
        model=ScriptedModel([call("final_answer", answer="4")]),
        name="helper",
        description="Adds numbers.",
        verbosity_level=-1,
        show_widget=False,
    )
    return ToolCallingAgent(
        tools=[],
        model=ScriptedModel([call("helper", task="2+2?"), call("final_answer", answer="4")]),
        managed_agents=[helper],
        verbosity_level=-1,
        show_widget=False,
    )


def built_from_events(check: SchemaCheck) -> list[dict[str, Any]]:
    """Feed two scripted runs to RunStateBuilder, checking the run after every event; the final runs."""
    runs = []
    for agent in (scripted_code_agent(), scripted_manager()):
        builder = RunStateBuilder(agent.name, agent.model.model_id)
        for n, event in enumerate(agent.event_stream("Go")):
            builder.apply(event)
            check.run(builder.run, f"after event {n} ({type(event).__name__}): run")
        runs.append(builder.run)
    return runs


def widget_messages(check: SchemaCheck) -> None:
    """The custom messages an AgentWidget sends during a streamed run and when images arrive."""
    widget_module = pytest.importorskip("nbagent.notebook.widget")
    widget = widget_module.AgentWidget()
    sent: list[dict[str, Any]] = []
    widget.comm.send = lambda data=None, metadata=None, buffers=None: sent.append(data)
    agent = scripted_code_agent()
    agent._views_for_run = lambda: [widget]  # the widget as the run's view: it also hears the code's live prints
    for _ in agent.event_stream("Go"):
        pass
    image = Image.new("RGB", (4, 4), (0, 128, 0))
    tool_call = ToolCall("python_interpreter", "img", "c1")
    for event in (RunStart(task="draw", agent_name="a"), StepStart(1), tool_call):
        widget.consume(event)
    widget.consume(ToolOutput(tool_call.id, image, False, "", tool_call, images=[image]))
    customs = [m["content"] for m in sent if m and m.get("method") == "custom"]
    for i, content in enumerate(customs):
        check.message(content, f"message {i}")
    assert {m["type"] for m in customs} == set(MESSAGE_TYPES), "the runs should send every kind of message"
    check.check("WidgetModel", {name: None for name in widget_module.AgentWidget.class_own_traits(sync=True)}, "traits")


# ---------------------------------------------------------------------------- tests


def test_types_js_holds_the_state_typedefs(typedefs: dict[str, Typedef]) -> None:
    expected = {"Run", "TaskStep", "StepFields", "ActionStep", "PlanningStep", "FinalStep", "Step", "Answer"}
    expected |= {"TokenUsage", "ToolCall", "ControlsSnapshot", "ControlsCan", "ControlsState", "WidgetModel"}
    assert expected <= typedefs.keys()
    assert set(_split_top(typedefs["Step"].type, "|")) == set(STEP_TYPES.values())
    for kind, name in STEP_TYPES.items():  # each step typedef is the one for its kind
        assert literals(properties(typedefs, name)["kind"][0]) == {kind}
    assert set(properties(typedefs, "ActionStep")) == set(properties(typedefs, "PlanningStep"))


def test_memory_to_state_matches(typedefs: dict[str, Typedef], red_image: Image.Image) -> None:
    check = SchemaCheck(typedefs)
    run, pngs = memory_to_state(every_step_kind(red_image), agent_name="analyst", model_id="scripted")
    check.run(run)
    assert check.problems == []
    assert [s["kind"] for s in run["steps"]] == ["task", "planning", "action", "action", "action", "action", "final"]
    assert len(pngs) == 2 and run["steps"][4]["tool_calls"] and run["steps"][2]["error"]
    assert check.seen == {
        "Run",
        "Answer",
        "TokenUsage",
        "ToolCall",
        "NamespaceChange",
        "CodeChange",
        "TaskPart",
        "PreviewTable",
        "Permission",
        *STEP_TYPES.values(),
    }


def test_run_state_builder_matches(typedefs: dict[str, Typedef]) -> None:
    check = SchemaCheck(typedefs)
    code_run, manager_run = built_from_events(check)
    assert check.problems == []
    assert [s["kind"] for s in code_run["steps"]] == ["task", "planning", "action", "action", "final"]
    assert code_run["steps"][2]["error"] and code_run["status"] == "done"
    [child] = manager_run["steps"][1]["children"]
    assert child["agent_name"] == "helper" and manager_run["steps"][1]["tool_calls"]
    assert check.seen == {"Run", "Answer", "TokenUsage", "ToolCall", *STEP_TYPES.values()}


def test_driver_snapshot_matches(typedefs: dict[str, Typedef]) -> None:
    agent = scripted_code_agent()
    check = SchemaCheck(typedefs)
    check.controls(agent.driver.snapshot(), "before the run")
    agent.run("Go")
    check.controls(agent.driver.snapshot(), "after the run")
    assert check.problems == []
    driver_module = pytest.importorskip("nbagent.notebook.driver")
    assert literals(typedefs["ControlAction"].type) == set(driver_module.ACTIONS)
    assert literals(properties(typedefs, "ControlsSnapshot")["mode"][0]) == {"run", "pause", "step"}


def test_widget_traits_and_messages_match(typedefs: dict[str, Typedef]) -> None:
    check = SchemaCheck(typedefs)
    widget_messages(check)
    assert check.problems == []


def test_every_typedef_is_compared_with_what_python_builds(typedefs: dict[str, Typedef], red_image) -> None:
    check = SchemaCheck(typedefs)
    check.run(memory_to_state(every_step_kind(red_image))[0])
    program = RunProgram("answer = 1\n", checked=True, reason="reproduces the answer", inputs=["x"]).state()
    check.run({**memory_to_state(every_step_kind(red_image))[0], "program": program})  # the run as code (issue 31)
    built_from_events(check)
    asking = scripted_code_agent()
    with asking.gates.waiting_for_person(2, RefusedCapability("write", "/w/a.png")):  # a permission ask pending
        check.controls(asking.driver.snapshot())
    widget_messages(check)
    objects = {name for name in typedefs if _is_object(typedefs, name)}
    # StepFields is compared through ActionStep and PlanningStep, which add nothing but their `kind`.
    assert objects - check.seen - SENT_BY_JS == {"StepFields"}


def test_a_key_on_one_side_only_is_reported(typedefs: dict[str, Typedef], red_image: Image.Image) -> None:
    run, _ = memory_to_state(every_step_kind(red_image))

    def problems(data: dict[str, Any], types: dict[str, Typedef] = typedefs) -> list[str]:
        check = SchemaCheck(types)
        check.run(data)
        return check.problems

    assert problems(run) == []
    added = copy.deepcopy(run)
    added["steps"][2]["thought"] = "a key Python added"
    assert problems(added) == ["run.steps[2] (action): the Python dict has ['thought'], js/types.js ActionStep has not"]
    removed = copy.deepcopy(run)
    del removed["steps"][6]["final_answer"]["type"]
    assert problems(removed) == [
        "run.final_answer: js/types.js Answer has ['type'], the Python dict has not",  # the same dict as the step's
        "run.steps[6].final_answer: js/types.js Answer has ['type'], the Python dict has not",
    ]
    nested = copy.deepcopy(run)
    child = memory_to_state(every_step_kind(red_image))[0]
    child["token_usage"]["cached_tokens"] = 0
    nested["steps"][3]["children"] = [child]
    assert problems(nested) == [
        "run.steps[3].children[0].token_usage: the Python dict has ['cached_tokens'], js/types.js TokenUsage has not"
    ]
    # and a property added to js/types.js alone
    source = TYPES_JS.read_text(encoding="utf-8")
    answer = " * @property {string} text\n * @property {string} type\n"
    assert source.count(answer) == 1
    grown = source.replace(answer, answer + " * @property {string} mime\n")
    assert problems(run, parse_typedefs(grown)) == [
        "run.final_answer: js/types.js Answer has ['mime'], the Python dict has not",
        "run.steps[6].final_answer: js/types.js Answer has ['mime'], the Python dict has not",
    ]
    controls = SchemaCheck(typedefs)
    snapshot = scripted_code_agent().driver.snapshot()
    snapshot["can"]["fork"] = True
    controls.controls(snapshot)
    assert controls.problems == ["controls.can: the Python dict has ['fork'], js/types.js ControlsCan has not"]


def _is_object(typedefs: dict[str, Typedef], name: str) -> bool:
    try:
        return bool(properties(typedefs, name))
    except ValueError:
        return False
