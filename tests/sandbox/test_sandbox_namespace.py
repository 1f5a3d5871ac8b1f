"""Namespace sharing with a real IPython InteractiveShell: user cells run with ``shell.run_cell``."""

from __future__ import annotations

import builtins
import linecache
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.sandbox import ExecutionError, LocalPythonExecutor, PolicyError


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    created = not InteractiveShell.initialized()
    shell = InteractiveShell.instance()
    shell.reset(new_session=False)
    yield shell
    shell.reset(new_session=False)
    if created:  # a later test in this process may start IPython's test shell, another kind of the singleton
        InteractiveShell.clear_instance()


def cell(shell: InteractiveShell, code: str) -> Any:
    result = shell.run_cell(code, store_history=True)
    result.raise_error()
    return result.result


def agent(shell: InteractiveShell, **options: Any) -> LocalPythonExecutor:
    options.setdefault("timeout_seconds", 10)
    return LocalPythonExecutor(namespace=shell.user_ns, **options)


def test_user_variables_visible_and_agent_bindings_appear(shell: InteractiveShell) -> None:
    cell(shell, "data = [3, 1, 2]\ndef double(x):\n    return 2 * x")
    executor = agent(shell)
    out = executor(
        "ordered = sorted(data)\nclass Box:\n    def __init__(self, v):\n        self.v = v\n"
        "def total(xs):\n    return sum(double(x) for x in xs)\ntotal(ordered)"
    )
    assert out.output == 12
    assert cell(shell, "ordered") == [1, 2, 3]
    assert cell(shell, "total([1, 2]) + Box(5).v") == 11
    assert executor("total(data) + Box(1).v").output == 13  # later agent calls too


def test_prints_of_earlier_functions_go_to_logs_in_agent_code_and_to_the_cell_otherwise(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    executor = agent(shell)
    executor("def shout(x):\n    print('shout', x)\n    return x")
    assert executor("shout(1)").logs == "shout 1\n"
    capsys.readouterr()
    cell(shell, "shout(2)")
    assert "shout 2" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name", ["In", "Out", "get_ipython", "_ih", "_oh", "_dh", "_", "__", "_N", "_iN", "exit", "quit"]
)
def test_ipython_internals_are_invisible(shell: InteractiveShell, name: str) -> None:
    cell(shell, "1 + 1")  # creates _, _N and _iN for this cell's number N
    number = shell.execution_count - 1
    name = name.replace("N", str(number))
    assert name in shell.user_ns
    executor = agent(shell)
    with pytest.raises(PolicyError) as info:
        executor(f"value = {name}")
    assert repr(name) in str(info.value) or f"{name}() is not available" in str(info.value)
    assert "value" not in shell.user_ns
    assert cell(shell, f"len(In) > 0 and Out[{number}] == 2")


@pytest.mark.parametrize("code", ["In = []", "get_ipython = None", "def Out(): pass", "import math as _oh"])
def test_ipython_internals_cannot_be_rebound(shell: InteractiveShell, code: str) -> None:
    with pytest.raises(PolicyError):
        agent(shell)(code)
    assert cell(shell, "callable(get_ipython) and isinstance(In, list) and isinstance(_oh, dict)")


def test_underscore_throwaway_does_not_clobber_ipython(shell: InteractiveShell) -> None:
    cell(shell, "40 + 2")
    assert agent(shell)("for _ in range(3):\n    pass\na, _ = 1, 2\n_").output == 2
    assert cell(shell, "_") == 42


def test_ungranted_modules_are_hidden_with_a_grant_hint(shell: InteractiveShell) -> None:
    cell(shell, "import os\nimport json\nfrom os import getcwd")
    executor = agent(shell)
    for code, module in [("os.getcwd()", "os"), ("json.dumps(1)", "json"), ("getcwd()", "posix")]:
        with pytest.raises(PolicyError) as info:
            executor(code)
        message = str(info.value)
        assert "NameNotAllowed" in message and "additional_authorized_imports" in message and "--imports" in message
        assert module in message
    assert agent(shell, additional_authorized_imports=["json"])("json.dumps([1])").output == "[1]"


def test_granted_module_is_the_real_one_for_the_user_and_guarded_for_the_agent(shell: InteractiveShell) -> None:
    executor = agent(shell, additional_authorized_imports=["numpy"])
    executor("import numpy as np\ndef peek():\n    return np.ctypeslib")
    assert cell(shell, "import numpy\nnp is numpy and isinstance(np.__version__, str)")
    with pytest.raises(PolicyError):
        executor("np.ctypeslib")
    assert shell.run_cell("peek()").error_in_exec is not None  # the agent's function stays guarded for the user
    assert executor("int(np.arange(4).sum())").output == 6


def test_agent_functions_stay_sandboxed_when_the_user_calls_them(shell: InteractiveShell) -> None:
    agent(shell)("def sneaky():\n    return eval('1')")
    error = shell.run_cell("sneaky()").error_in_exec
    assert type(error).__name__ == "NameNotAllowed"


def test_user_cells_are_never_restricted(shell: InteractiveShell) -> None:
    before = shell.user_ns["__builtins__"]
    executor = agent(shell, timeout_seconds=0.5)
    executor("x = 1")
    with pytest.raises(ExecutionError):
        executor("while True:\n    pass")
    with pytest.raises(PolicyError):
        executor("import os")
    assert shell.user_ns["__builtins__"] is before
    assert cell(shell, "import os\nwith open(os.devnull) as f:\n    n = len(f.read())\neval('1 + 1') + n + x") == 3
    assert cell(shell, "import math\nmath.pi > 3")


def test_namespace_is_consistent_after_an_error(shell: InteractiveShell) -> None:
    executor = agent(shell)
    with pytest.raises(ExecutionError) as info:
        executor("a = 1\nb = 1 / 0\nc = 3")
    assert info.value.lineno == 2
    assert cell(shell, "a") == 1
    assert "b" not in shell.user_ns and "c" not in shell.user_ns


def test_user_module_alias_is_read_only_for_the_agent(shell: InteractiveShell) -> None:
    cell(shell, "import math as m")
    executor = agent(shell)
    assert executor("m.sqrt(16)").output == 4.0
    with pytest.raises(PolicyError):
        executor("m.pi = 3")
    assert cell(shell, "m.pi > 3.14")


def test_ipython_open_gives_the_sandbox_answer(shell: InteractiveShell) -> None:
    with pytest.raises(PolicyError) as info:
        agent(shell)("open('/etc/hostname')")
    assert "open() is not available" in str(info.value)


def test_user_traceback_shows_agent_source(shell: InteractiveShell) -> None:
    agent(shell)("def boom():\n    return 1 / 0")
    error = shell.run_cell("boom()").error_in_exec
    assert isinstance(error, ZeroDivisionError)
    tb = error.__traceback__
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    filename, line = frames[-1]
    assert filename.startswith("<agent code") and linecache.getline(filename, line).strip() == "return 1 / 0"


def test_send_variables_reach_the_user(shell: InteractiveShell) -> None:
    executor = agent(shell)
    executor.send_variables({"task_input": "hello"})
    assert executor("task_input.upper()").output == "HELLO"
    assert cell(shell, "task_input") == "hello"
    assert executor.state is shell.user_ns


def test_user_shadowing_a_builtin_is_respected(shell: InteractiveShell) -> None:
    cell(shell, "def len(x):\n    return 'mine'")
    try:
        assert agent(shell)("len([1, 2])").output == "mine"
    finally:
        shell.user_ns.pop("len")
    assert builtins.len([1]) == 1
