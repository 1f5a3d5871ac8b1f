"""RunDriver with real CodeAgents on ScriptedModels: both situations, approve/edit/reject, re-run, stop."""

from __future__ import annotations

import threading
import time

import pytest
from control_helpers import code, kernel_interrupt, long_sleep, wait_until

from nbagent import ActionStep, PlanningStep, ScriptedModel
from nbagent.loop import ControlError
from nbagent.record import AgentMemory


def actions(agent) -> list[ActionStep]:
    return [s for s in agent.memory.steps if isinstance(s, ActionStep)]


def later(delay: float, fn, *args) -> threading.Timer:
    timer = threading.Timer(delay, fn, args)
    timer.start()
    return timer


# ---------------------------------------------------------------- (b) prepared run, idle caller


def test_start_prepares_a_paused_run_and_step_adds_exactly_one_step(make_agent):
    agent = make_agent([code("a = 1"), code("b = a + 1"), code("final_answer(b * 10)")])
    controller = agent.start("compute")
    try:
        wait_until(lambda: agent.gates.status == "paused")
        assert actions(agent) == [] and controller.in_background
        step = controller.step()
        assert [s.step_number for s in actions(agent)] == [1] and step is actions(agent)[0]
        assert agent.gates.status == "paused"
        time.sleep(0.2)
        assert len(actions(agent)) == 1  # stays paused
        controller.step()
        assert [s.step_number for s in actions(agent)] == [1, 2]
        assert controller.run() == 20
        assert agent.gates.status == "done" and not controller.active
    finally:
        agent.stop()
        controller.join(5)


def test_widget_commands_drive_a_prepared_run(make_agent):
    agent = make_agent([code("a = 1"), code("final_answer(a + 1)")])
    controller = agent.start("compute")
    wait_until(lambda: agent.gates.status == "paused")
    snap = controller.snapshot()
    assert snap["can"]["step"] and snap["can"]["run"] and snap["can"]["stop"] and not snap["can"]["pause"]
    controller.handle_command({"action": "step"})
    wait_until(lambda: len(actions(agent)) == 1 and agent.gates.status == "paused")
    controller.handle_command({"action": "run"})
    assert controller.join(5)
    assert agent.last_result.output == 2 and agent.gates.status == "done"
    snap = controller.snapshot()
    assert snap["status"] == "done" and not any(snap["can"][k] for k in ("run", "step", "pause", "stop"))
    assert snap["rerunnable"] == [1, 2] and snap["can"]["rerun"]


def test_pause_command_pauses_after_the_current_step(make_agent):
    model = ScriptedModel([code("a = 1"), code("b = 2"), code("final_answer(3)")], token_delay=0.02)
    agent = make_agent(model)
    controller = agent.start("slow")
    wait_until(lambda: agent.gates.status == "paused")
    controller.handle_command({"action": "run"})
    wait_until(lambda: agent.gates.status == "running")
    controller.handle_command({"action": "pause"})
    wait_until(lambda: agent.gates.status == "paused")
    assert len(actions(agent)) == 1
    controller.handle_command({"action": "stop"})
    assert controller.join(5) and agent.gates.status == "stopped"
    assert len(actions(agent)) == 1  # stopped while paused: no step was running, none added


def test_stop_cancels_a_long_step_of_a_prepared_run(make_agent):
    agent = make_agent([long_sleep(30), code("final_answer(1)")])
    controller = agent.start("sleepy")
    wait_until(lambda: agent.gates.status == "paused")
    controller.handle_command({"action": "run"})
    time.sleep(0.5)
    began = time.monotonic()
    controller.handle_command({"action": "stop"})
    assert controller.join(15)
    assert time.monotonic() - began < 10  # not the sleep's 30 s; the latency target is benchmarks/stop_latency.py
    step = actions(agent)[-1]
    assert step.stopped and "Stop" in str(step.error)
    assert agent.last_result.state == "stopped" and agent.gates.status == "stopped"


def test_a_second_run_while_one_is_prepared_is_refused(make_agent):
    agent = make_agent([code("final_answer(1)")])
    controller = agent.start("one")
    try:
        with pytest.raises(RuntimeError, match="already has a run under way"):
            agent.run("two")
        with pytest.raises(RuntimeError, match="already has a run under way"):
            agent.start("three")
    finally:
        controller.stop()
        controller.join(5)
    assert not controller.active and agent.gates.status == "stopped"
    assert agent.run("four") == 1  # the agent is usable again


def test_commands_without_a_run_are_clear_errors(make_agent):
    agent = make_agent([code("final_answer(1)")])
    controller = agent.driver
    with pytest.raises(ControlError, match="no run to step"):
        controller.handle_command({"action": "step"})
    with pytest.raises(ControlError, match="Unknown control action"):
        controller.handle_command({"action": "jump"})
    with pytest.raises(ControlError, match="dict"):
        controller.handle_command("run")  # type: ignore[arg-type]
    with pytest.raises(ControlError, match="Nothing awaits approval"):
        controller.handle_command({"action": "approve", "code": "x"})
    with pytest.raises(ControlError, match="no finished step 3"):
        controller.handle_command({"action": "rerun", "step": 3})
    with pytest.raises(ControlError, match="step number"):
        controller.handle_command({"action": "rerun", "step": "three"})
    with pytest.raises(ValueError, match="non-empty"):
        agent.start("  ")
    with pytest.raises(TypeError, match="unexpected"):
        agent.start("task", stream=True)
    assert not controller.active  # nothing half-started


# ---------------------------------------------------------------- (a) blocking run, commands from another thread


def test_blocking_run_paused_by_a_callback_is_stepped_from_another_thread(make_agent):
    def pause_after_first(step, agent):
        if step.step_number == 1:
            agent.pause()

    agent = make_agent([code("a = 1"), code("b = 2"), code("final_answer(a + b)")], step_callbacks=[pause_after_first])
    counts: list[int] = []

    def drive():
        wait_until(lambda: agent.gates.status == "paused")
        counts.append(len(actions(agent)))
        agent.driver.handle_command({"action": "step"})
        wait_until(lambda: agent.gates.status == "paused" and len(actions(agent)) == 2)
        time.sleep(0.1)
        counts.append(len(actions(agent)))
        agent.resume()

    driver = threading.Thread(target=drive)
    driver.start()
    assert agent.run("add") == 3  # returns once the run ends
    driver.join(30)
    assert counts == [1, 2]


def test_stop_during_a_blocking_run_returns_long_before_the_step_ends_with_memory_intact(make_agent):
    agent = make_agent([code("x = 5"), long_sleep(30), code("final_answer(x)")])
    stopped_at: list[float] = []

    def stop_in_the_second_step() -> None:  # once the first step is recorded (its worker start may be slow)
        wait_until(lambda: len(actions(agent)) == 1, timeout=30)
        time.sleep(0.5)
        stopped_at.append(time.monotonic())
        agent.driver.handle_command({"action": "stop"})

    threading.Thread(target=stop_in_the_second_step, daemon=True).start()
    result = agent.run("sleep", return_full_result=True)
    assert stopped_at and time.monotonic() - stopped_at[0] < 10  # not the sleep's 30 s
    assert result.state == "stopped" and agent.gates.status == "stopped"
    first, second = actions(agent)
    assert not first.stopped and second.stopped and second.code_action.endswith("(30)")


def test_kernel_interrupt_while_a_blocking_run_is_paused_stops_it(make_agent):
    agent = make_agent([code("a = 1"), code("final_answer(a)")], step_callbacks=[lambda step, agent: agent.pause()])
    later(0.5, kernel_interrupt)
    result = agent.run("wait", return_full_result=True)
    assert result.state == "stopped" and agent.gates.status == "stopped"
    assert len(actions(agent)) == 1 and agent.memory.steps[0].task == "wait"


def test_kernel_interrupt_during_a_long_step_of_a_blocking_run_records_the_stopped_step(make_agent):
    agent = make_agent([long_sleep(30), code("final_answer(1)")])
    later(0.5, kernel_interrupt)
    began = time.monotonic()
    result = agent.run("sleep", return_full_result=True)
    assert time.monotonic() - began < 10  # not the sleep's 30 s
    assert result.state == "stopped" and agent.gates.status == "stopped"
    assert actions(agent)[-1].stopped


# ---------------------------------------------------------------- approve, edit, reject


def test_approve_mode_with_an_edit_runs_the_edited_code_and_keeps_both(make_agent):
    model = ScriptedModel([code("print('model wrote this')"), code("final_answer('ok')")])
    agent = make_agent(model)
    agent.gates.approve_code = True
    seen: dict = {}

    def approve():
        wait_until(lambda: agent.gates.status == "awaiting_approval")
        seen["pending"] = agent.driver.snapshot()["pending_code"]
        agent.driver.handle_command({"action": "approve", "code": "print('a person wrote this')"})
        wait_until(lambda: agent.gates.status == "awaiting_approval" and agent.gates.snapshot()["pending_step"] == 2)
        agent.driver.handle_command({"action": "run"})  # Run approves the pending code as it is

    helper = threading.Thread(target=approve)
    helper.start()
    assert agent.run("print something") == "ok"
    helper.join(5)
    first = actions(agent)[0]
    assert seen["pending"] == "print('model wrote this')"
    assert first.model_code_action == "print('model wrote this')"
    assert first.code_action == "print('a person wrote this')"
    assert "a person wrote this" in first.observations and "model wrote this" not in first.observations
    second_call = "\n".join(m.text for m in model.calls[1])
    assert "This code was edited before it ran" in second_call and "print('a person wrote this')" in second_call


def test_reject_sends_the_note_back_as_the_observation(make_agent):
    model = ScriptedModel([code("import shutil; shutil.rmtree('/')"), code("final_answer('fine')")])
    agent = make_agent(model)
    agent.gates.approve_code = True

    def review():
        wait_until(lambda: agent.gates.status == "awaiting_approval")
        agent.driver.handle_command({"action": "reject", "note": "Never delete files."})
        wait_until(lambda: agent.gates.status == "awaiting_approval" and agent.gates.snapshot()["pending_step"] == 2)
        agent.gates.approve()

    helper = threading.Thread(target=review)
    helper.start()
    assert agent.run("clean up") == "fine"
    helper.join(5)
    first = actions(agent)[0]
    assert "Never delete files." in first.observations and first.error is None
    assert first.code_action == first.model_code_action  # nothing ran; what the model wrote is kept
    assert "Never delete files." in "\n".join(m.text for m in model.calls[1])


def test_step_in_approve_mode_runs_the_edited_code_then_pauses(make_agent):
    agent = make_agent([code("v = 1"), code("final_answer(v)")])
    agent.gates.approve_code = True
    controller = agent.start("edit and step")
    wait_until(lambda: agent.gates.status == "paused")
    controller.handle_command({"action": "step"})
    wait_until(lambda: agent.gates.status == "awaiting_approval")
    snap = controller.snapshot()
    assert snap["can"]["approve"] and snap["can"]["reject"] and snap["can"]["step"] and snap["can"]["run"]
    controller.handle_command({"action": "step", "code": "v = 41"})
    wait_until(lambda: agent.gates.status == "paused")
    assert actions(agent)[0].code_action == "v = 41" and len(actions(agent)) == 1
    controller.handle_command({"action": "approve_mode", "on": False})
    assert controller.run() == 41


def test_a_step_callback_can_request_approval_of_the_next_code(make_agent):
    def careful(step, agent):
        if step.step_number == 1:
            agent.gates.request_approval()

    agent = make_agent([code("a = 1"), code("final_answer(a)")], step_callbacks=[careful])
    later(
        0.1,
        lambda: (
            wait_until(lambda: agent.gates.status == "awaiting_approval"),
            agent.gates.approve("final_answer(a * 7)"),
        ),
    )
    assert agent.run("careful") == 7


# ---------------------------------------------------------------- re-run from step k


def numbered_model():
    """Answers by call number, so a re-run gets new answers."""

    def respond(messages, **_):
        respond.calls += 1
        n = respond.calls
        if n in (1, 4):
            return code(f"value = {n}")
        return code(f"final_answer(value * 100 + {n})") if n in (3, 5) else code(f"value = value + {n}")

    respond.calls = 0
    return ScriptedModel(respond)


def test_rerun_from_step_1_of_a_finished_run_forks_and_continues(make_agent):
    agent = make_agent(numbered_model())
    assert agent.run("go") == 303  # value = 1; value = 3; final 3*100+3
    before = list(agent.memory.steps)
    agent.driver.handle_command({"action": "rerun", "step": 1})
    assert agent.driver.join(30)
    assert len(agent.forks) == 1 and isinstance(agent.forks[0], AgentMemory)
    assert agent.forks[0].steps == before  # the earlier run is kept whole
    assert [s.step_number for s in actions(agent)] == [1, 2]
    assert actions(agent)[0].code_action == "value = 4" and agent.last_result.output == 405
    assert (
        agent.memory.steps[0] is before[0]
        and sum(1 for s in agent.memory.steps if s.__class__.__name__ == "TaskStep") == 1
    )
    assert "as they were before step 1 (removed value)" in agent.driver.message and agent.gates.status == "done"


def test_rerun_while_a_blocking_run_is_paused_continues_in_the_same_call(make_agent):
    agent = make_agent(
        numbered_model(), step_callbacks=[lambda step, agent: agent.pause() if step.step_number == 2 else None]
    )

    def rerun():
        wait_until(lambda: agent.gates.status == "paused" and len(actions(agent)) == 2)
        agent.driver.handle_command({"action": "rerun", "step": 2})

    helper = threading.Thread(target=rerun)
    helper.start()
    result = agent.run("go", return_full_result=True)
    helper.join(5)
    assert len(agent.forks) == 1 and [s.step_number for s in agent.forks[0].action_steps()] == [1, 2]
    assert [s.step_number for s in actions(agent)] == [1, 2]
    assert actions(agent)[1].code_action == "final_answer(value * 100 + 3)"
    # value was 3 after the first step 2; the re-run starts from the namespace as it was before step 2 (value = 1)
    assert result.output == 103 and result.state == "success" and agent.last_result is result


def test_rerun_cuts_the_plan_of_that_step_too(make_agent):
    model = ScriptedModel(["plan A", code("a = 1"), code("final_answer(a)"), "plan B", code("final_answer(2)")])
    agent = make_agent(model, planning_interval=5)
    assert agent.run("plan it") == 1
    agent.driver.rerun(1)
    assert agent.driver.join(30)
    kinds = [type(s).__name__ for s in agent.memory.steps]
    assert kinds == ["TaskStep", "PlanningStep", "ActionStep"]
    assert "plan B" in agent.memory.steps[1].plan and agent.last_result.output == 2


def test_planning_is_a_step_of_its_own_for_step(make_agent):
    agent = make_agent(ScriptedModel(["the plan", code("final_answer(1)")]), planning_interval=3)
    controller = agent.start("plan first")
    wait_until(lambda: agent.gates.status == "paused")
    controller.step()
    assert [type(s) for s in agent.memory.steps[1:]] == [PlanningStep]
    controller.step()
    assert controller.join(5) and agent.last_result.output == 1


# ---------------------------------------------------------------- stop during a model call


def test_stop_during_a_model_call_of_a_prepared_run_shows_stopping_then_stopped(make_agent):
    model = ScriptedModel([code("final_answer(1)")], latency=60)
    agent = make_agent(model)
    controller = agent.start("think")
    seen: list[tuple[str, bool, bool]] = []
    controller.add_listener(lambda snap: seen.append((snap["status"], snap["stopping"], snap["can"]["stop"])))
    controller.handle_command({"action": "run"})
    wait_until(lambda: len(model.calls) == 1)
    assert controller.snapshot()["can"]["stop"]  # pressable while the model computes
    began = time.monotonic()
    controller.handle_command({"action": "stop"})
    assert controller.join(15) and time.monotonic() - began < 10  # not the model's 60 s
    stopping = seen.index(("running", True, True))  # "stopping…", with Stop still pressable
    assert any(status == "stopped" and not flag for status, flag, _ in seen[stopping:])
    assert actions(agent)[-1].stopped and agent.last_result.state == "stopped"


def test_stop_through_the_widget_during_a_model_call_of_a_blocking_run(make_agent):
    model = ScriptedModel([code("final_answer(1)")], latency=60)
    agent = make_agent(model)
    stopped_at: list[float] = []

    def press_stop() -> None:
        wait_until(lambda: len(model.calls) == 1, timeout=30)
        assert agent.driver.snapshot()["can"]["stop"]
        stopped_at.append(time.monotonic())
        agent.driver.handle_command({"action": "stop"})

    threading.Thread(target=press_stop, daemon=True).start()
    result = agent.run("think", return_full_result=True)
    assert stopped_at and time.monotonic() - stopped_at[0] < 10  # not the model's 60 s
    assert result.state == "stopped" and actions(agent)[-1].stopped
