"""The run becomes code: the smallest plain program that gives a run's answer without the model, checked.

Modules:
    analysis  what one statement reads, binds, surely rebinds, calls, or only shows (its AST)
    slicing   the backward slice from `answer` (and the names the task asked for); `final_answer(x)` → `answer = x`
    derive    which steps' statements are candidates: the live line to the last answer, failed steps in part
    inputs    what the program reads from outside: notebook variables (as before the run), imports, tools
    render    the program as a cell or as `def name(<inputs>): ... return answer`
    check     run it once in a fresh executor of the agent's kind on copies of the inputs; compare the answers
    same      pandas/numpy-aware equality of two answers
    result    `RunProgram`: code, checked, reason, inputs, tools, outputs, steps; str() starts "# checked: …"

`program_of(agent)` is `agent.to_code()`; `function_of(agent, name)` is `agent.to_function(name)`. A program is
derived from the agent's memory and executor alone, so it is the same whichever view showed the run; it is cached
per memory state, so the widget's program at the run's end and a later `to_code()` run the check once.
"""

from __future__ import annotations

from typing import Any

from nbagent.record import ActionStep
from nbagent.record.status import outcome_message
from nbagent.sandbox import IsolatedPythonExecutor

from .check import REPRODUCES, check_program
from .derive import NO_ANSWER, Derivation, derive
from .inputs import Inputs, resolve_inputs
from .render import cell_text, check_name, function_text
from .result import RunProgram
from .same import same_value

__all__ = ["RunProgram", "program_of", "function_of", "same_value", "REPRODUCES"]

NOT_ASKED = "not checked (verify=False)"


def program_of(agent: Any, verify: bool = True, call_tools: bool = True) -> RunProgram:
    """The program of `agent`'s last run as a cell (see `RunProgram`).

    `call_tools=False`: a program that calls tools is not checked (a check calls them again, with their effects);
    the widget asks so at every run's end, where nobody asked for a tool to run again.
    """
    return _cached(agent, ("cell", verify, call_tools), lambda: _program(agent, None, verify, call_tools))


def function_of(agent: Any, name: str, verify: bool = True) -> RunProgram:
    """The program of `agent`'s last run as a function `name` of its inputs, returning the answer."""
    check_name(name)
    program = _cached(agent, ("function", name, verify), lambda: _program(agent, name, verify))
    if program.code is None:
        raise ValueError(f"The run has no program to make a function of: {program.reason}")
    return program


def _program(agent: Any, name: str | None, verify: bool, call_tools: bool = True) -> RunProgram:
    memory = getattr(agent, "memory", None)
    derivation = derive(list(getattr(memory, "steps", None) or []))
    if derivation.reason:
        return RunProgram(None, reason=_why_none(derivation.reason, agent))
    inputs = resolve_inputs(derivation.free, agent)
    code = cell_text(derivation, inputs) if name is None else function_text(name, derivation, inputs)
    if verify and inputs.tools and not call_tools:
        checked, reason = False, f"not checked: it calls {', '.join(inputs.tools)}, which a check would call again"
    else:
        checked, reason = _checked(derivation, inputs, name, agent) if verify else (False, NOT_ASKED)
    return RunProgram(
        code,
        checked=checked,
        reason=reason,
        inputs=list(inputs.variables),
        tools=list(inputs.tools),
        outputs=list(derivation.outputs),
        steps=list(derivation.steps),
    )


def _why_none(reason: str, agent: Any) -> str:
    """The reason, with how the last run ended when it did not answer ("max steps reached, no answer")."""
    state = getattr(getattr(agent, "last_result", None), "state", None)
    if reason != NO_ANSWER or not state or state == "success":
        return reason
    return f"{reason}: {outcome_message(state)}"


def _checked(derivation: Derivation, inputs: Inputs, name: str | None, agent: Any) -> tuple[bool, str]:
    if inputs.missing:
        return False, f"it reads {', '.join(inputs.missing)}, which neither the run's code nor the notebook defines"
    body = "\n".join(statement.text for statement in derivation.statements) + "\n"
    if name is not None:  # the function itself, called on the inputs
        plain = Inputs(variables=inputs.variables, tools=inputs.tools)  # its imports are in the namespace
        body = function_text(name, derivation, plain) + f"answer = {name}({', '.join(inputs.variables)})\n"
    checked, reason = check_program(body, inputs, derivation.answer, agent)
    if checked and inputs.tools:
        reason += f" (it calls {', '.join(inputs.tools)} again: tools' results come from outside the program)"
    changed = [name for name in inputs.variables if name in _changed_in_place(agent)]
    if changed and not isinstance(getattr(agent, "python_executor", None), IsolatedPythonExecutor):
        reason += f" (on {', '.join(changed)} as the run left it: the local executor changed it in place)"
    return checked, reason


def _changed_in_place(agent: Any) -> set[str]:
    """The names a step's code changed in place (the local executor's inputs are then not as the run read them)."""
    steps = getattr(getattr(agent, "memory", None), "steps", None) or []
    changes = [c for s in steps if isinstance(s, ActionStep) for c in s.namespace_changes or []]
    return {c.get("name") for c in changes if isinstance(c, dict) and c.get("change") == "modified"}


def _cached(agent: Any, key: tuple[Any, ...], make: Any) -> RunProgram:
    """One program per memory state and form: the last step object and the number of steps say the state."""
    steps = list(getattr(getattr(agent, "memory", None), "steps", None) or [])
    last = next((s for s in reversed(steps) if isinstance(s, ActionStep)), None)
    state = (len(steps), id(last))
    cache = getattr(agent, "_programs", None)
    if not isinstance(cache, dict) or cache.get("state") != state:
        cache = {"state": state}
        try:
            agent._programs = cache
        except AttributeError:  # an object that takes no attributes: no cache
            return make()
    if key not in cache:
        cache[key] = make()
    return cache[key]
