"""The widget side in Python: controls state on the AgentWidget, commands through its ControlChannel."""

from __future__ import annotations

import time

from control_helpers import code, wait_until

from nbagent.notebook.channel import ControlChannel
from nbagent.notebook.widget import AgentWidget


def front_end_sends(channel: ControlChannel, **command) -> None:
    """What a click does: a custom comm message on the channel, as ipywidgets receives it."""
    channel._handle_msg(
        {"content": {"data": {"method": "custom", "content": {"type": "control", **command}}}, "buffers": []}
    )


def widget_agent(make_agent, responses, **kwargs):
    agent = make_agent(responses, show_widget=True, verbosity_level=1, **kwargs)
    return agent


def test_a_live_widget_gets_controls_state_and_a_channel(make_agent, capsys):
    agent = widget_agent(make_agent, [code("a = 1"), code("final_answer(a)")])
    agent.run("one")
    widget = agent._widget
    assert isinstance(widget, AgentWidget) and isinstance(widget.control_channel, ControlChannel)
    state = widget.controls
    assert state["status"] == "done" and state["rerunnable"] == [1, 2] and not state["active"]
    assert state["can"]["rerun"] and not state["can"]["stop"]


def test_buttons_drive_a_prepared_run_through_the_channel(make_agent, capsys):
    agent = widget_agent(make_agent, [code("a = 2"), code("final_answer(a * 3)")])
    agent.start("steps")
    widget = agent._widget
    wait_until(lambda: widget.controls.get("status") == "paused")
    assert widget.controls["can"]["step"] and widget.run["status"] == "running"
    front_end_sends(widget.control_channel, action="step")
    wait_until(lambda: widget.controls["status"] == "paused" and len(agent.memory.action_steps()) == 1)
    assert [s["step_number"] for s in widget.run["steps"] if s["kind"] == "action"] == [1]
    front_end_sends(widget.control_channel, action="run")
    assert agent.driver.join(30)
    assert widget.controls["status"] == "done" and widget.run["status"] == "done"
    assert widget.run["final_answer"]["text"] == "6"


def test_a_command_that_cannot_act_shows_its_reason(make_agent, capsys):
    agent = widget_agent(make_agent, [code("final_answer(1)")])
    agent.run("one")
    widget = agent._widget
    front_end_sends(widget.control_channel, action="approve", code="x = 1")
    assert "Nothing awaits approval" in widget.controls["message"]
    front_end_sends(widget.control_channel, action="explode")
    assert "Unknown control action" in widget.controls["message"]


def test_approve_mode_shows_the_pending_code_and_runs_the_edit(make_agent, capsys):
    agent = widget_agent(make_agent, [code("print('model')"), code("final_answer('ok')")])
    agent.gates.approve_code = True
    agent.start("review")
    widget = agent._widget
    front_end_sends(widget.control_channel, action="run")
    wait_until(lambda: widget.controls.get("status") == "awaiting_approval")
    assert widget.controls["pending_code"] == "print('model')" and widget.controls["pending_step"] == 1
    front_end_sends(widget.control_channel, action="approve", code="print('person')")
    wait_until(lambda: widget.controls["status"] == "awaiting_approval" and widget.controls["pending_step"] == 2)
    step = next(s for s in widget.run["steps"] if s["kind"] == "action")
    assert step["code"] == "print('person')" and step["model_code"] == "print('model')"
    assert "person" in step["observations"]
    front_end_sends(widget.control_channel, action="approve_mode", on=False)
    front_end_sends(widget.control_channel, action="approve")
    assert agent.driver.join(30) and widget.controls["status"] == "done"


def test_rerun_from_a_step_rebuilds_the_widget_from_the_forked_memory(make_agent, capsys):
    answers = iter([code("x = 1"), code("final_answer(x)"), code("final_answer(x + 10)")])
    agent = widget_agent(make_agent, lambda messages, **kw: next(answers))
    assert agent.run("count") == 1
    widget = agent._widget
    front_end_sends(widget.control_channel, action="rerun", step=2)
    assert agent.driver.join(30)  # a fresh worker under a loaded CI machine may take seconds
    steps = widget.run["steps"]
    assert [s["kind"] for s in steps] == ["task", "action", "action", "final"]
    assert steps[2]["code"] == "final_answer(x + 10)" and widget.run["final_answer"]["text"] == "11"
    assert widget.controls["forks"] == 1 and "as they were before step 2" in widget.controls["message"]
    assert len(agent.forks[0].action_steps()) == 2


def test_a_new_run_takes_the_buttons_from_the_previous_runs_widget(make_agent, capsys):
    agent = widget_agent(make_agent, [code("final_answer(1)"), code("final_answer(2)")])
    agent.run("first")
    old = agent._widget
    channel = old.control_channel
    agent.run("second")
    new = agent._widget
    assert new is not old and isinstance(new.control_channel, ControlChannel)
    assert old.controls == {} and old.control_channel is None and channel.comm is None
    assert new.controls["status"] == "done" and new.controls["rerunnable"] == [1]


def test_an_ask_waits_for_a_person_only_in_a_widget_a_front_end_shows(make_agent, capsys, monkeypatch):
    """nbclient, nbconvert and papermill never render the widget: the ask is denied after a short wait, not a hang;
    once the front end says "shown" (js/controls.js), the same kind of ask waits for the person's answer."""
    from nbagent.notebook import driver as driver_module

    monkeypatch.setattr(driver_module, "SHOWN_GRACE_SECONDS", 0.3)
    notebook = {"salary": 5200}
    responses = [code("final_answer(salary)"), code("final_answer('without it')")]
    agent = widget_agent(make_agent, responses, namespace=notebook)
    started = time.monotonic()
    assert agent.run("What is the answer?") == "without it"
    asked = agent.memory.action_steps()[0].permissions[0]
    assert asked["answer"] == "deny" and asked["by"] == "nobody" and time.monotonic() - started < 60  # not a hang
    assert not agent.driver.person_can_answer()  # the unseen widget is not waited for twice

    shown = widget_agent(make_agent, [code("final_answer(salary)")], namespace=notebook)
    shown.start("What is the answer?")
    front_end_sends(shown._widget.control_channel, action="shown")
    front_end_sends(shown._widget.control_channel, action="run")
    wait_until(lambda: shown._widget.controls.get("status") == "awaiting_permission")
    time.sleep(0.5)  # longer than the grace: a shown widget's ask keeps waiting
    assert shown._widget.controls["status"] == "awaiting_permission"
    front_end_sends(shown._widget.control_channel, action="permission", answer="once")
    assert shown.driver.join(30) and shown.last_result.output == 5200  # the run's end tidies up: slow at load 7
