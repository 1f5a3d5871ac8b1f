"""A refused capability pauses the step and asks (issue 23): the policy, the gates, the re-run, the record.

The thing under test is the loop's logic, so the executor is a small double: a real `LocalPythonExecutor`
(its own checkpoint and rewind included) whose `save(path)` and `peek(path)` functions are refused until granted,
listing the refusals in `last_refusals` as the isolated executor does (tests/sandbox/test_refusals.py tests the
real boundary).
"""

from __future__ import annotations

import io
import sys
import threading
import time

import pytest
from control_helpers import code, wait_until
from rich.console import Console

from nbagent import AgentMemory, CodeAgent, ScriptedModel
from nbagent.loop import ControlError, RunGates
from nbagent.loop.permissions import MAX_ASKS_PER_STEP, PermissionAsk
from nbagent.record import ActionStep
from nbagent.sandbox import LocalPythonExecutor
from nbagent.sandbox.wire.capabilities import Grant, RefusedCapability
from nbagent.views.console import replay_memory
from nbagent.views.html import memory_to_html
from nbagent.views.permissions import permission_text
from nbagent.views.state import memory_to_state

OUT = "/data/out/report.csv"
SECRET = "/home/me/.ssh/id_rsa"


class RefusingExecutor(LocalPythonExecutor):
    """`save(path)` writes (into `written`) only where granted; `peek(path)` of a secret is never granted."""

    def __init__(self) -> None:
        self.granted: list[Grant] = []
        self.revoked: list[Grant] = []
        self.rewinds: list[int] = []
        self.written: list[str] = []
        self.calls = 0
        self.last_refusals: list[RefusedCapability] = []
        self._refused: list[RefusedCapability] = []
        super().__init__(additional_functions={"save": self._save, "peek": self._peek})

    def _save(self, path: str) -> str:
        if not any(g.kind == "write" and g.target == path for g in self.granted):
            self._refused.append(RefusedCapability("write", path, "outside the allowed places"))
            raise PermissionError(13, "Permission denied", path)
        self.written.append(path)
        return path

    def _peek(self, path: str) -> str:
        self._refused.append(RefusedCapability("read", path, "a secret of the kernel", grantable=False))
        raise PermissionError(13, "Permission denied", path)

    def __call__(self, code_action: str):
        self.calls += 1
        self._refused = []
        try:
            return super().__call__(code_action)
        finally:
            self.last_refusals = list(dict.fromkeys(self._refused))

    def grant(self, refused: RefusedCapability, scope: str = "run") -> Grant:
        if not refused.grantable:
            raise ValueError(f"{refused.describe()} is never granted")
        grant = Grant(refused.kind, refused.target, scope)
        self.granted.append(grant)
        return grant

    def revoke(self, grant: Grant) -> None:
        self.granted.remove(grant)
        self.revoked.append(grant)

    def rewind(self, step_number: int, keep: bool = True):
        self.rewinds.append(step_number)
        return super().rewind(step_number, keep=keep)  # the executor's own time travel (issue 23 item 1)

    @property
    def grants(self) -> list[Grant]:
        return list(self.granted)


def make_agent(*bodies: str, **options) -> tuple[CodeAgent, ScriptedModel, RefusingExecutor]:
    model = ScriptedModel([code(body) for body in bodies])
    agent = CodeAgent(
        tools=[],
        model=model,
        executor_type="local",
        verbosity_level=-1,
        show_widget=False,
        max_steps=len(bodies),
        **options,
    )
    agent.python_executor = executor = RefusingExecutor()
    return agent, model, executor


def answering(*answers: str):
    """A policy answering `answers` in turn, and the asks it saw."""
    seen: list[PermissionAsk] = []

    def policy(ask: PermissionAsk) -> str:
        seen.append(ask)
        return answers[len(seen) - 1]

    return policy, seen


WRITE = f"try:\n    tries += 1\nexcept NameError:\n    tries = 1\nsave({OUT!r})\nprint('saved', tries)"


def test_allow_once_runs_the_same_code_again_in_the_step_and_revokes_the_grant_when_the_step_ends():
    policy, seen = answering("once")
    agent, model, executor = make_agent(WRITE, "final_answer('done')", on_permission=policy)
    assert agent.run("Save the report.") == "done"
    step = agent.memory.action_steps()[0]
    assert step.error is None and "saved 1" in step.observations  # the refused attempt's `tries` was undone
    assert executor.written == [OUT] and executor.calls == 3  # refused, the same code again, the answer step
    assert len(model.calls) == 2  # no model call for the re-run
    assert executor.rewinds == [1]  # the failed attempt was undone before the code ran again
    assert executor.timeline.branches == []  # and dropped: no line to go back to, no snapshot held for it
    assert [(a.step, a.kind, a.target, a.text) for a in seen] == [(1, "write", OUT, f"Step 1 wants to write `{OUT}`")]
    assert executor.granted == [] and executor.revoked == [Grant("write", OUT, "once")]
    (entry,) = step.permissions
    assert (
        entry["kind"] == "write" and entry["target"] == OUT and entry["answer"] == "once" and entry["scope"] == "once"
    )
    assert entry["by"] == "policy" and entry["rewound"].startswith("Variables are as they were before step 1")
    assert agent.grants == [Grant("write", OUT, "once")]


def test_allow_for_the_run_holds_for_later_steps_and_ends_with_the_run():
    policy, seen = answering("run")
    agent, _, executor = make_agent(WRITE, WRITE, "final_answer('done')", on_permission=policy)
    revoked_during_run: list[list[Grant]] = []
    agent.step_callbacks.register(ActionStep, lambda step, agent: revoked_during_run.append(list(executor.revoked)))
    agent.run("Save the report twice.")
    first, second = agent.memory.action_steps()[:2]
    assert len(seen) == 1 and second.permissions is None  # the second write was not refused: nobody asked
    assert executor.written == [OUT, OUT] and first.permissions[0]["scope"] == "run"
    assert revoked_during_run[:3] == [[], [], []]  # held through the run's steps
    assert executor.revoked == [Grant("write", OUT, "run")] and executor.granted == []  # released at its end


@pytest.mark.parametrize(
    ("policy", "said", "reason"),
    [
        ("deny", 'on_permission="deny"', 'the run\'s policy is on_permission="deny"'),
        (lambda ask: "deny", "The run's permission policy (on_permission) denied permission to write", None),
        (lambda ask: 1 / 0, "on_permission raised ZeroDivisionError: division by zero", "on_permission raised"),
        (lambda ask: "maybe", "on_permission answered 'maybe', not one of once, run, deny", "answered 'maybe'"),
    ],
    ids=["deny", "callable-deny", "callable-raises", "callable-junk"],
)
def test_a_denial_is_the_steps_error_with_what_to_do_instead(policy, said, reason):
    agent, model, executor = make_agent(WRITE, "final_answer('done')", on_permission=policy)
    agent.run("Save the report.")
    step = agent.memory.action_steps()[0]
    error = str(step.error)
    assert "Permission denied" in error and said in error
    assert (
        f"write `{OUT}`" in error
        and "Do without it: keep the result in a variable, or write into the scratch directory" in error
    )
    assert executor.calls == 2 and executor.written == [] and executor.rewinds == []  # not run again
    (entry,) = step.permissions
    assert entry["answer"] == "deny" and entry["scope"] is None and entry["by"] == "policy"
    assert (reason is None and "reason" not in entry) or reason in entry["reason"]
    assert said in "\n".join(message.text for message in model.calls[1])  # the model reads it
    assert agent.grants == []


def test_ask_without_a_widget_or_a_terminal_denies_at_once_and_says_nobody_could_be_asked(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("a\n"))  # not a TTY (as in scripts, evaluate(), CI)
    agent, _, executor = make_agent(WRITE, "final_answer('done')")
    assert agent.on_permission == "ask"
    started = time.monotonic()
    agent.run("Save the report.")
    assert time.monotonic() - started < 5  # never a hang
    step = agent.memory.action_steps()[0]
    assert "nobody could be asked (no widget shows this run and stdin is no terminal)" in str(step.error)
    assert step.permissions[0]["by"] == "nobody" and executor.written == []


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_ask_on_a_terminal_takes_a_r_d(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", Terminal("x\nr\n"))  # a wrong key asks again
    agent, _, executor = make_agent(WRITE, "final_answer('done')")
    agent.run("Save the report.")
    prompt = capsys.readouterr().out
    assert prompt.count(f"Step 1 wants to write `{OUT}`. Allow once [a], allow for this run [r], or deny [d]?") == 2
    step = agent.memory.action_steps()[0]
    assert step.error is None and step.permissions[0]["answer"] == "run" and step.permissions[0]["by"] == "person"
    assert executor.written == [OUT]


def test_a_terminal_is_never_asked_from_another_thread(monkeypatch):
    monkeypatch.setattr(sys, "stdin", Terminal("a\n"))
    agent, _, executor = make_agent(WRITE, "final_answer('done')")
    thread = threading.Thread(target=agent.run, args=("Save the report.",), daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    assert agent.memory.action_steps()[0].permissions[0]["by"] == "nobody" and executor.written == []


def test_a_person_answers_through_the_gates_while_the_run_waits():
    agent, _, executor = make_agent(WRITE, "final_answer('done')")
    agent.gates.answerer = lambda: True  # what the notebook's driver says while its widget shows the run
    thread = threading.Thread(target=agent.run, args=("Save the report.",), daemon=True)
    thread.start()
    wait_until(lambda: agent.gates.status == "awaiting_permission")
    ask = agent.gates.snapshot()["pending_ask"]
    assert ask == {
        "step": 1,
        "kind": "write",
        "target": OUT,
        "text": f"Step 1 wants to write `{OUT}`",
        "parts": [["words", "Step 1 wants to "], ["words", "write "], ["target", OUT]],
    }
    with pytest.raises(ControlError, match="takes one of once, run, deny"):
        agent.gates.answer_permission("always")
    agent.gates.answer_permission("once")
    thread.join(10)
    assert agent.last_result.state == "success" and executor.written == [OUT]
    assert agent.memory.action_steps()[0].permissions[0]["by"] == "person"
    assert agent.gates.snapshot()["pending_ask"] is None


def test_a_person_who_denied_is_not_asked_again_in_the_run():
    agent, model, executor = make_agent(WRITE, WRITE, "final_answer('done')")
    agent.gates.answerer = lambda: True
    thread = threading.Thread(target=agent.run, args=("Save the report.",), daemon=True)
    thread.start()
    wait_until(lambda: agent.gates.status == "awaiting_permission")
    agent.gates.answer_permission("deny")
    thread.join(10)
    first, second = agent.memory.action_steps()[:2]
    assert "A person denied permission to write" in str(first.error)
    assert "denied permission to write" in str(second.error) and "earlier in this run" in str(second.error)
    assert first.permissions[0]["answer"] == "deny" and second.permissions is None


def test_stop_while_asked_ends_the_run_as_stopped():
    agent, _, executor = make_agent(WRITE, "final_answer('done')")
    agent.gates.answerer = lambda: True
    thread = threading.Thread(target=agent.run, args=("Save the report.",), daemon=True)
    thread.start()
    wait_until(lambda: agent.gates.status == "awaiting_permission")
    agent.stop()
    thread.join(10)
    step = agent.memory.action_steps()[0]
    assert agent.last_result.state == "stopped" and step.stopped and executor.written == []
    assert agent.gates.status == "stopped" and agent.gates.snapshot()["pending_ask"] is None


def test_the_gates_say_when_nothing_is_asked_and_count_the_ask_as_a_halt():
    gates = RunGates()
    gates.reset()
    with pytest.raises(ControlError, match="Nothing awaits permission"):
        gates.answer_permission("once")
    halts = gates.halts
    box: dict = {}
    refused = RefusedCapability("connect", "api.example.com:443")
    thread = threading.Thread(target=lambda: box.setdefault("answer", gates.ask_permission(4, refused)))
    thread.start()
    wait_until(lambda: gates.status == "awaiting_permission")
    assert gates.halts == halts + 1
    assert gates.pending_ask["text"] == "Step 4 wants to connect to `api.example.com:443`"
    gates.answer_permission("run")
    thread.join(5)
    assert box["answer"] == "run" and gates.status == "running"


def test_a_refusal_never_granted_is_never_asked():
    policy, seen = answering("run")
    agent, _, executor = make_agent(f"peek({SECRET!r})", "final_answer('done')", on_permission=policy)
    agent.run("Read the key.")
    step = agent.memory.action_steps()[0]
    assert seen == [] and executor.granted == []
    assert f"The sandbox never grants permission to read `{SECRET}`" in str(step.error)
    assert step.permissions == [
        {
            "kind": "read",
            "target": SECRET,
            "answer": "never",
            "scope": None,
            "by": "sandbox",
            "reason": "a secret of the kernel",
        }
    ]


def test_at_most_three_asks_per_step():
    targets = [f"/data/out/{k}.csv" for k in range(MAX_ASKS_PER_STEP + 1)]
    body = "\n".join(f"try:\n    save({t!r})\nexcept PermissionError:\n    pass" for t in targets) + "\nsave('/data/x')"
    agent, _, executor = make_agent(body, "final_answer('done')", on_permission=lambda ask: "once")
    agent.run("Save them all.")
    step = agent.memory.action_steps()[0]
    assert len(step.permissions) == MAX_ASKS_PER_STEP
    assert f"The step asked {MAX_ASKS_PER_STEP} times already" in str(step.error)
    assert executor.granted == []  # the once grants ended with the step


def test_on_permission_is_checked_and_settable():
    with pytest.raises(ValueError, match='on_permission takes "ask", "deny" or a callable'):
        CodeAgent(tools=[], model=ScriptedModel([]), on_permission="allow", verbosity_level=-1, show_widget=False)
    agent, _, _ = make_agent("final_answer(1)", on_permission="deny")
    agent.on_permission = "ask"
    assert agent.on_permission == "ask"
    with pytest.raises(ValueError, match="on_permission takes"):
        agent.on_permission = 3


def test_the_asks_are_saved_loaded_and_shown(tmp_path):
    agent, _, _ = make_agent(WRITE, WRITE, "final_answer('done')", on_permission=answering("once", "deny")[0])
    agent.run("Save the report.")
    loaded = AgentMemory.load(agent.memory.save(tmp_path / "run.json"))
    assert loaded == agent.memory
    saved = [step.permissions for step in loaded.action_steps()]
    assert [[e["answer"] for e in entries or []] for entries in saved] == [["once"], ["deny"], []]
    reloaded, _, _ = make_agent("final_answer(1)")
    reloaded.memory = loaded
    assert reloaded.grants == agent.grants == [Grant("write", OUT, "once")]
    console = Console(record=True, width=160)
    replay_memory(loaded, console=console)
    text = console.export_text()
    assert f"Permission: Allowed once: write `{OUT}` (by on_permission)" in text
    assert f"Permission: Denied: write `{OUT}` (by on_permission)" in text
    html = memory_to_html(loaded)
    once = (
        f'<li class="nba-permission" data-answer="once">Allowed once: write <code class="nba-ask-target">{OUT}</code> '
        "(by on_permission)</li>"
    )
    assert once in html
    run, _ = memory_to_state(loaded)
    assert [s["permissions"][0]["answer"] for s in run["steps"] if s["kind"] == "action" and s["permissions"]] == [
        "once",
        "deny",
    ]


def test_the_widgets_driver_answers_and_says_when_it_can():
    agent, _, executor = make_agent(WRITE, "final_answer('done')")
    driver = agent.driver
    assert (
        agent.gates.answerer == driver.person_can_answer and not driver.person_can_answer()
    )  # no widget shows the run
    agent.gates.answerer = lambda: True  # as while its widget shows the run
    thread = threading.Thread(target=agent.run, args=("Save the report.",), daemon=True)
    thread.start()
    wait_until(lambda: driver.snapshot()["status"] == "awaiting_permission")
    snapshot = driver.snapshot()
    assert snapshot["can"]["permission"] and snapshot["can"]["stop"] and not snapshot["can"]["approve"]
    assert snapshot["pending_ask"]["text"] == f"Step 1 wants to write `{OUT}`"
    with pytest.raises(ControlError, match="takes one of once, run, deny"):
        driver.handle_command({"action": "permission", "answer": None})
    driver.handle_command({"action": "permission", "answer": "deny"})
    thread.join(10)
    assert not driver.snapshot()["can"]["permission"] and executor.written == []
    assert agent.memory.action_steps()[0].permissions[0]["by"] == "person"


def test_what_the_executor_granted_in_the_questions_place_is_recorded():
    agent, _, executor = make_agent(WRITE, "final_answer('done')", on_permission=lambda ask: "run")
    folder = Grant("write", "/data/out/", "run")  # e.g. the folder of a file that does not exist yet

    def grant_folder(refused: RefusedCapability, scope: str = "run") -> Grant:
        executor.granted.append(Grant(refused.kind, refused.target, scope))  # the double's own bookkeeping
        return folder

    executor.grant = grant_folder
    executor.revoke = lambda grant: executor.revoked.append(grant)
    agent.run("Save the report.")
    (entry,) = agent.memory.action_steps()[0].permissions
    assert entry["target"] == OUT and entry["granted"] == "/data/out/"
    assert agent.grants == [folder] and executor.revoked == [folder]  # what is revoked is what was granted
    assert "(by on_permission; granted as `/data/out/`)" in permission_text(entry)
