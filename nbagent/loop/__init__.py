"""Layer 3, loop: the engine that runs a task step by step. It is given its views; it never makes them.

Modules:
    engine      AgentLoop: run → step → finalize, model calls, planning, the final answer, events to views
    code_step   CodeLoop: a step that writes Python and runs it in the sandbox
    tool_step   ToolCallingLoop: a step that calls tools by name with JSON arguments
    session     RunSession: runs and "re-run from step k" strung into one event stream; forks; undo of the last run
    scope       AgentScope: the names the agent's code made, held out of the notebook between runs (agent.scratch)
    undo        what an undo says: restored, removed, not restorable, and what no undo reaches (files, tools)
    gates       RunGates: stop, pause, step budget, code approval and permission asks, opened from any thread
    permissions on_permission: what a refused file or host becomes (asked, denied, a function's answer); the grants
    deadline    RunDeadline: a run's time limit (max_time), which stops it like Stop; "10m" read as seconds
    model_calls model calls on a helper thread under a cancel scope the gates trip on Stop (never outlast a Stop)
    parsing     reading code and the thought out of model text
    prompting   PromptBuilder: prompt templates rendered into messages; which profile a model gets
    aids/       the small-model aids behind one seam (Coach): the data card, hints, repeats, answer checks
    program/    the run becomes code: the program that gives the answer without the model, checked (to_code)
    toolbox     the agent's tools by name; how a managed agent is called
    callbacks   step callbacks and final-answer checks: one way to call the user's functions
    view        the View protocol and LogLevel
    monitoring  AgentLogger and Monitor: smolagents' `agent.logger` (the console a run prints to) and `agent.monitor`
"""

from .code_step import CodeLoop
from .engine import AgentLoop
from .gates import CodeRejected, ControlError, RunControl, RunGates
from .session import RunSession
from .tool_step import ToolCallingLoop
from .view import LogLevel, View

__all__ = [
    "AgentLoop",
    "CodeLoop",
    "CodeRejected",
    "ControlError",
    "LogLevel",
    "RunControl",
    "RunGates",
    "RunSession",
    "ToolCallingLoop",
    "View",
]
