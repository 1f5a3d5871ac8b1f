"""The widget's run controls in a real JupyterLab (default settings) with Debian's Chromium.

Each control is exercised in both situations of issue 6: (a) a blocking cell (`agent.run()` or
`%%agent`) that is still executing while the buttons act, and (b) an idle kernel, where `%%agent --step`
prepared the run and the buttons drive it with no cell executing (the kernel answers other cells
meanwhile). ScriptedModels make the runs deterministic; "long" steps sleep 30 s.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from labkit import Lab, cell, open_notebook, picture, write_notebook
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SETUP = '''\
%load_ext nbagent
from nbagent import CodeAgent, ScriptedModel

def code(body):
    return "Thought: here is my code.\\n```python\\n" + body + "\\n```"

def scripted(*bodies):
    """A model answering with these code bodies in turn."""
    return ScriptedModel([code(body) for body in bodies])

def pause_after(n, times=1):
    """A step callback pausing the run after step n (the first `times` times)."""
    left = [times]

    def callback(step, agent):
        if step.step_number == n and left[0] > 0:
            left[0] -= 1
            agent.pause()

    return callback

def report(agent):
    steps = agent.memory.action_steps()
    print("STEPS", [s.step_number for s in steps], "STOPPED", [s.step_number for s in steps if s.stopped],
          "STATUS", agent.gates.status, "FORKS", len(agent.forks), "KINDS",
          [type(s).__name__ for s in agent.memory.steps])
'''
SLEEP = "import time\\nprint('going to sleep')\\ntime.sleep(30)"
WIDGET = ".nbagent-widget[data-rendered='1'] .nbagent"


@pytest.fixture
def notebook(lab: Lab, page):
    """Write a notebook into the served folder, open it; shut its kernel down afterwards."""
    names: list[str] = []

    def make(name: str, *cells: str) -> str:
        write_notebook(Path(lab.notebook_dir) / name, (SETUP, *cells))
        names.append(name)
        open_notebook(page, lab, name)
        run_cell(page, 0)
        wait_done(page, 0)
        return name

    yield make
    lab.shutdown_kernels()


def run_cell(page, index: int) -> None:
    """Start running cell `index` (without waiting: the command's promise settles only when the cell ends)."""
    page.evaluate(
        "i => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = i;"
        " void window.jupyterapp.commands.execute('notebook:run-cell'); }",
        index,
    )


def executing(page, index: int) -> bool:
    return "*" in cell(page, index).locator(".jp-InputPrompt").inner_text()


def wait_done(page, index: int, timeout: float = 60) -> float:
    """Wait until cell `index` has finished executing; return how long that took (seconds)."""
    started = time.monotonic()
    page.wait_for_function(
        "i => { const p = document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')[i]"
        "?.querySelector('.jp-InputPrompt'); return p && /\\[\\d+\\]/.test(p.textContent); }",
        arg=index,
        timeout=timeout * 1000,
    )
    return time.monotonic() - started


def output_of(page, index: int, source: str) -> str:
    """Replace cell `index`'s source, run it, return its output text."""
    page.evaluate(
        "([i, src]) => { const nb = window.jupyterapp.shell.currentWidget.content;"
        " nb.widgets[i].model.sharedModel.setSource(src); }",
        [index, source],
    )
    cell(page, index).locator(".jp-InputPrompt").evaluate("p => p.textContent = ''")
    run_cell(page, index)
    wait_done(page, index)
    return cell(page, index).locator(".jp-OutputArea-output").last.inner_text()


def widget(page, index: int):
    view = cell(page, index).locator(WIDGET)
    expect(view).to_have_count(1, timeout=30_000)
    return view


def button(view, name: str):
    return view.get_by_role("button", name=name, exact=True)


def status(view):
    return view.locator(".nba-header .nba-status")


def action_steps(view):
    return view.locator(".nba-steps > .nba-step-action")


def wait_code_running(view, text: str = "time.sleep(30)") -> None:
    """The step's code is shown (it is about to run or running); give it a moment to be inside the sleep."""
    expect(action_steps(view).last.locator("pre.nba-code")).to_contain_text(text, timeout=30_000)
    time.sleep(0.5)


def interrupt_kernel(page) -> None:
    page.locator(".jp-NotebookPanel-toolbar [data-command='notebook:interrupt-kernel']").click()


# ---------------------------------------------------------------- Step on a paused run


def test_step_during_a_blocking_run_adds_exactly_one_step(page, notebook):
    notebook(
        "step_blocking.ipynb",
        'agent = CodeAgent(tools=[], model=scripted("a = 1", "b = 2", "c = 3", "final_answer(a + b + c)"),'
        " step_callbacks=[pause_after(1)])\nagent.run('Add three numbers.')",
        "report(agent)",
    )
    run_cell(page, 1)
    view = widget(page, 1)
    expect(status(view)).to_have_text("paused", timeout=30_000)
    expect(action_steps(view)).to_have_count(1)
    assert executing(page, 1)  # the cell is still running: (a)
    expect(button(view, "Pause")).to_be_disabled()
    button(view, "Step").click()
    expect(action_steps(view)).to_have_count(2, timeout=15_000)
    expect(status(view)).to_have_text("paused")
    time.sleep(0.7)
    expect(action_steps(view)).to_have_count(2)  # exactly one step, then paused again
    assert executing(page, 1)
    button(view, "Run").click()
    wait_done(page, 1, timeout=30)
    expect(status(view)).to_have_text("done")
    expect(view.locator(".nba-final")).to_contain_text("6")
    assert "STEPS [1, 2, 3, 4] STOPPED [] STATUS done" in output_of(page, 2, "report(agent)")


def test_step_on_a_prepared_run_with_an_idle_kernel(page, notebook):
    notebook(
        "step_idle.ipynb",
        'agent = CodeAgent(tools=[], model=scripted("a = 1", "b = 2", "final_answer(a + b)"))',
        "%%agent --agent agent --step\nAdd two numbers.",
        "report(agent)",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    run_cell(page, 2)
    view = widget(page, 2)
    wait_done(page, 2)  # the magic returned at once: (b)
    expect(status(view)).to_have_text("paused", timeout=15_000)
    expect(action_steps(view)).to_have_count(0)
    button(view, "Step").click()
    expect(action_steps(view)).to_have_count(1, timeout=15_000)
    expect(status(view)).to_have_text("paused")
    time.sleep(0.7)
    expect(action_steps(view)).to_have_count(1)
    # the kernel is free meanwhile, and Python agrees
    assert "STEPS [1] STOPPED [] STATUS paused" in output_of(page, 3, "report(agent)")
    button(view, "Step").click()
    expect(action_steps(view)).to_have_count(2, timeout=15_000)
    button(view, "Run").click()
    expect(status(view)).to_have_text("done", timeout=15_000)
    expect(view.locator(".nba-final")).to_contain_text("3")
    for name in ("Run", "Step", "Pause", "Stop"):
        expect(button(view, name)).to_be_disabled()
    expect(view.locator(".nba-review")).to_be_hidden()  # Approve/Reject show only while code awaits approval


# ---------------------------------------------------------------- Stop during a long run


def test_stop_ends_a_long_blocking_run_within_two_seconds(page, notebook):
    notebook(
        "stop_blocking.ipynb",
        f'sleeper = CodeAgent(tools=[], model=scripted("x = 42", "{SLEEP}", "final_answer(x)"))',
        "%%agent --agent sleeper\nSleep on it.",
        "report(sleeper)",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    run_cell(page, 2)
    view = widget(page, 2)
    wait_code_running(view)
    assert executing(page, 2)
    button(view, "Stop").click()
    assert wait_done(page, 2, timeout=10) < 2.0  # the cell finished
    expect(status(view)).to_have_text("stopped")
    expect(view.locator(".nba-steps > .nba-step-stopped")).to_have_count(1)
    out = output_of(page, 3, "report(sleeper)")
    assert "STEPS [1, 2] STOPPED [2] STATUS stopped" in out


def test_stop_ends_a_long_c_call_in_the_isolated_executor_within_two_seconds(page, notebook):
    # sum() over a huge range is one C call that never checks signals: only a process boundary can stop it
    notebook(
        "stop_c_call.ipynb",
        'adder = CodeAgent(tools=[], model=scripted("total = sum(range(10**11))", "final_answer(1)"),'
        ' executor_type="isolated")',
        "%%agent --agent adder\nAdd them up.",
        "report(adder)",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    run_cell(page, 2)
    view = widget(page, 2)
    wait_code_running(view, "sum(range(10**11))")
    assert executing(page, 2)
    button(view, "Stop").click()
    assert wait_done(page, 2, timeout=10) < 2.0
    expect(status(view)).to_have_text("stopped")
    assert "STEPS [1] STOPPED [1] STATUS stopped" in output_of(page, 3, "report(adder)")  # the kernel lives on


def test_stop_ends_a_long_prepared_run_within_two_seconds(page, notebook):
    notebook(
        "stop_idle.ipynb",
        f'sleeper = CodeAgent(tools=[], model=scripted("{SLEEP}", "final_answer(1)"))',
        "%%agent --agent sleeper --step\nSleep on it.",
        "report(sleeper)",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    run_cell(page, 2)
    view = widget(page, 2)
    wait_done(page, 2)
    expect(status(view)).to_have_text("paused", timeout=15_000)
    button(view, "Run").click()
    wait_code_running(view)
    started = time.monotonic()
    button(view, "Stop").click()
    expect(status(view)).to_have_text("stopped", timeout=10_000)
    assert time.monotonic() - started < 10  # not the sleep; the latency target is benchmarks/stop_latency.py
    expect(view.locator(".nba-steps > .nba-step-stopped")).to_have_count(1)
    assert "STEPS [1] STOPPED [1] STATUS stopped" in output_of(page, 3, "report(sleeper)")


# ---------------------------------------------------------------- approve mode with an edit


def test_approve_an_edited_step_during_a_blocking_run(page, notebook):
    notebook(
        "approve_blocking.ipynb",
        "greeter = CodeAgent(tools=[], model=scripted(\"print('written by the model')\", \"final_answer('greeted')\"))\n"
        "greeter.gates.approve_code = True\n"
        "greeter.run('Greet.')",
        "report(greeter)",
    )
    run_cell(page, 1)
    view = widget(page, 1)
    expect(status(view)).to_have_text("awaiting approval", timeout=30_000)
    box = view.get_by_role("textbox", name="Code to run")
    expect(box).to_have_value("print('written by the model')")
    assert executing(page, 1)
    box.fill("print('edited by a person')")
    button(view, "Approve").click()
    first = action_steps(view).first
    expect(first.locator(".nba-logs")).to_contain_text("edited by a person", timeout=15_000)
    expect(first.locator(".nba-logs")).not_to_contain_text("written by the model")
    expect(first.locator(".nba-code-change")).to_have_text(["edited by you"])  # both are kept, as a diff
    expect(first.locator(".nba-block-diff .nba-diff-del")).to_have_text(["- print('written by the model')"])
    expect(view.get_by_role("textbox", name="Code to run")).to_have_value("final_answer('greeted')", timeout=15_000)
    button(view, "Run").click()  # Run approves the pending code as it is and goes on
    wait_done(page, 1, timeout=30)
    expect(status(view)).to_have_text("done")
    expect(view.locator(".nba-final")).to_contain_text("greeted")


def test_approve_mode_from_the_toggle_with_an_edit_on_a_prepared_run(page, notebook):
    notebook(
        "approve_idle.ipynb",
        "greeter = CodeAgent(tools=[], model=scripted(\"print('written by the model')\", \"final_answer('greeted')\"))",
        "%%agent --agent greeter --step\nGreet.",
        "report(greeter)",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    run_cell(page, 2)
    view = widget(page, 2)
    wait_done(page, 2)
    toggle = view.get_by_role("checkbox", name="approve code before it runs")
    expect(status(view)).to_have_text("paused", timeout=15_000)
    toggle.check()
    expect(toggle).to_be_checked()
    time.sleep(0.3)
    button(view, "Step").click()
    expect(status(view)).to_have_text("awaiting approval", timeout=15_000)
    box = view.get_by_role("textbox", name="Code to run")
    box.fill("print('edited by a person')")
    button(view, "Step").click()  # runs the edited code, then pauses
    expect(status(view)).to_have_text("paused", timeout=15_000)
    first = action_steps(view).first
    expect(first.locator(".nba-logs")).to_contain_text("edited by a person")
    assert "STEPS [1] STOPPED [] STATUS paused" in output_of(page, 3, "report(greeter)")
    assert "edited by a person" in output_of(page, 3, "print(greeter.memory.action_steps()[0].code_action)")
    toggle.uncheck()
    time.sleep(0.3)
    button(view, "Run").click()
    expect(status(view)).to_have_text("done", timeout=15_000)


# ---------------------------------------------------------------- re-run from step 1


RERUN_MODEL = (
    "answers = iter([code(\"x = 1\\nprint('first try')\"), code(\"x = 10\\nprint('second try')\"),"
    " code('final_answer(x)')])\n"
    "model = ScriptedModel(lambda messages, **kw: next(answers))\n"
)


def test_rerun_from_step_1_while_a_blocking_run_is_paused(page, notebook):
    notebook(
        "rerun_blocking.ipynb",
        RERUN_MODEL + "agent = CodeAgent(tools=[], model=model, step_callbacks=[pause_after(1)])\n"
        "agent.run('Pick a number.')",
        "report(agent)",
    )
    run_cell(page, 1)
    view = widget(page, 1)
    expect(status(view)).to_have_text("paused", timeout=30_000)
    expect(action_steps(view).first.locator(".nba-logs")).to_contain_text("first try")
    rerun = button(view, "Re-run from here (step 1)")
    expect(rerun).to_be_enabled()
    rerun.click()
    wait_done(page, 1, timeout=30)  # the same cell went on with the fork and returned
    expect(status(view)).to_have_text("done")
    expect(view.locator(".nba-control-message")).to_contain_text("as they were before step 1")
    expect(action_steps(view).first.locator(".nba-logs")).to_contain_text("second try")
    expect(view.locator(".nba-final")).to_contain_text("10")
    out = output_of(page, 2, "report(agent); print(agent.forks[0].action_steps()[0].observations)")
    assert "STEPS [1, 2] STOPPED [] STATUS done FORKS 1" in out and "first try" in out


def test_rerun_from_step_1_after_the_run_ended_continues_with_an_idle_kernel(page, notebook):
    notebook(
        "rerun_idle.ipynb",
        "answers = iter([code(\"x = 1\\nprint('first try')\"), code('final_answer(x)'),"
        " code(\"x = 10\\nprint('second try')\"), code('final_answer(x)')])\n"
        "model = ScriptedModel(lambda messages, **kw: next(answers))\n"
        "agent = CodeAgent(tools=[], model=model)\n"
        "agent.run('Pick a number.')",
        "report(agent)",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    view = widget(page, 1)
    expect(status(view)).to_have_text("done")
    expect(view.locator(".nba-final")).to_contain_text("1")
    button(view, "Re-run from here (step 1)").click()
    expect(view.locator(".nba-final")).to_contain_text("10", timeout=15_000)
    expect(status(view)).to_have_text("done")
    expect(view.locator(".nba-control-message")).to_contain_text("agent.forks[0]")
    expect(action_steps(view)).to_have_count(2)
    out = output_of(page, 2, "report(agent); print(agent.forks[0].action_steps()[-1].action_output)")
    assert "STEPS [1, 2] STOPPED [] STATUS done FORKS 1" in out and out.strip().endswith("1")
    assert "KINDS ['TaskStep', 'ActionStep', 'ActionStep']" in out


def test_a_rerun_restores_the_variables_and_the_earlier_run_comes_back_live(page, notebook, artifacts):
    notebook(
        "time_travel.ipynb",
        "import pandas as pd\n"
        "df = pd.DataFrame({'a': [1.0, 2.0], 'b': [3.0, 3.0]})\n"
        "model = scripted(\"df['gain'] = df.b - df.a\\nprint('first try')\", \"final_answer(df.gain.max())\",\n"
        "                 \"df['rel'] = df.b / df.a\\nprint('second try')\", \"final_answer(df.rel.max())\")\n"
        "agent = CodeAgent(tools=[], model=model, namespace=globals(), additional_authorized_imports=['pandas'])\n"
        "agent.run('Which row of `df` gained most?')",
        "print(sorted(df.columns))",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    view = widget(page, 1)
    expect(view.locator(".nba-final")).to_contain_text("2")
    button(view, "Re-run from here (step 1)").click()
    expect(view.locator(".nba-final")).to_contain_text("3", timeout=15_000)
    expect(view.locator(".nba-control-message")).to_contain_text("as they were before step 1")
    assert output_of(page, 2, "print(sorted(df.columns))").strip() == "['a', 'b', 'rel']"  # no 'gain': undone
    picture(view, artifacts / "rerun_restored.png")
    view.locator(".nba-forks-toggle").click()
    view.locator(".nba-fork-open").first.click()
    expect(button(view, "Make live")).to_be_visible()
    picture(view.first, artifacts / "earlier_run_make_live.png")
    button(view, "Make live").click()
    expect(view.locator(".nba-control-message")).to_contain_text("agent.forks[0] is the live run again")
    expect(view.locator(".nba-final")).to_contain_text("2")
    expect(action_steps(view).first.locator(".nba-logs")).to_contain_text("first try")
    assert output_of(page, 2, "print(sorted(df.columns))").strip() == "['a', 'b', 'gain']"


# ---------------------------------------------------------------- kernel interrupt


def test_kernel_interrupt_during_a_blocking_run_stops_it_with_memory_intact(page, notebook):
    notebook(
        "interrupt_blocking.ipynb",
        f'sleeper = CodeAgent(tools=[], model=scripted("x = 42", "{SLEEP}", "final_answer(x)"))',
        "%%agent --agent sleeper\nSleep on it.",
        "report(sleeper)",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    run_cell(page, 2)
    view = widget(page, 2)
    wait_code_running(view)
    interrupt_kernel(page)
    assert wait_done(page, 2, timeout=10) < 3.0
    expect(status(view)).to_have_text("stopped")
    expect(view.locator(".nba-steps > .nba-step-stopped")).to_have_count(1)
    out = output_of(page, 3, "report(sleeper); print('FIRST', sleeper.memory.action_steps()[0].code_action)")
    assert "STEPS [1, 2] STOPPED [2] STATUS stopped" in out
    assert "KINDS ['TaskStep', 'ActionStep', 'ActionStep']" in out and "FIRST x = 42" in out


def test_kernel_interrupt_during_a_prepared_run_stops_it_with_memory_intact(page, notebook):
    notebook(
        "interrupt_idle.ipynb",
        f'sleeper = CodeAgent(tools=[], model=scripted("x = 42", "{SLEEP}", "final_answer(x)"))',
        "%%agent --agent sleeper --step\nSleep on it.",
        "report(sleeper)",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    run_cell(page, 2)
    view = widget(page, 2)
    wait_done(page, 2)
    expect(status(view)).to_have_text("paused", timeout=15_000)
    button(view, "Run").click()
    wait_code_running(view)
    interrupt_kernel(page)
    expect(status(view)).to_have_text("stopped", timeout=3_000)
    expect(view.locator(".nba-steps > .nba-step-stopped")).to_have_count(1)
    out = output_of(page, 3, "report(sleeper)")
    assert "STEPS [1, 2] STOPPED [2] STATUS stopped" in out
    assert "KINDS ['TaskStep', 'ActionStep', 'ActionStep']" in out


# ---------------------------------------------------------------- Stop during a model call

PONDERING = '''\
import time
from nbagent.models import ChatMessage

class Pondering:
    """A user's own model class: thinks for a minute and knows nothing of Stop (the run abandons its call)."""
    def generate(self, messages, stop_sequences=None, **kwargs):
        time.sleep(60)
        return ChatMessage(role="assistant", content=code("final_answer(1)"))

ponderer = CodeAgent(tools=[], model=Pondering())'''

BADGES = """view => {
  // every badge the header was given, from the mutation records: two renders in one task (messages that arrived
  // together on a loaded machine) leave only the last text in the page by the time an observer looks
  window.__badges = [view.querySelector('.nba-header .nba-status')?.textContent];
  new MutationObserver(records => {
    for (const record of records) {
      if (!record.target.matches?.('.nba-header')) continue;
      for (const node of record.addedNodes) {
        const text = node.matches?.('.nba-status') ? node.textContent : null;
        if (text && text !== window.__badges.at(-1)) window.__badges.push(text);
      }
    }
  }).observe(view, { childList: true, subtree: true });
}"""


@pytest.mark.parametrize("situation", ["blocking", "prepared", "kernel interrupt"])
def test_stop_during_a_model_call_says_stopping_then_stopped(page, notebook, situation):
    flags = " --step" if situation == "prepared" else ""
    notebook(
        f"stop_model_{situation.replace(' ', '_')}.ipynb",
        PONDERING,
        f"%%agent --agent ponderer{flags}\nThink.",
        "report(ponderer)",
    )
    run_cell(page, 1)
    wait_done(page, 1)
    run_cell(page, 2)
    view = widget(page, 2)
    if situation == "prepared":
        wait_done(page, 2)
        expect(status(view)).to_have_text("paused", timeout=15_000)
        button(view, "Run").click()
    expect(status(view)).to_have_text("running", timeout=15_000)
    time.sleep(1.0)  # the model call is under way (the model is the first thing a step does)
    view.evaluate(BADGES)
    expect(button(view, "Stop")).to_be_enabled()
    started = time.monotonic()
    if situation == "kernel interrupt":
        interrupt_kernel(page)  # ■ on a blocking run: the cell waits in Python while the model computes
    else:
        button(view, "Stop").click()
    expect(status(view)).to_have_text("stopped", timeout=5_000)
    assert time.monotonic() - started < 5.0  # the target is 2 s: benchmarks/stop_latency.py
    if situation != "prepared":
        wait_done(page, 2, timeout=5)
    badges = view.evaluate("() => window.__badges")
    assert badges[-2:] == ["stopping…", "stopped"], badges
    expect(view.locator(".nba-steps > .nba-step-stopped")).to_have_count(1)
    assert "STEPS [1] STOPPED [1] STATUS stopped" in output_of(page, 3, "report(ponderer)")
