"""The local executor, mended after the security review: one test per root cause (it remains protection against
mistakes, not attacks; the isolated executor is the boundary)."""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any

import pytest

from nbagent.sandbox import ExecutionError, LocalPythonExecutor, PolicyError
from nbagent.sandbox.errors import SandboxInterrupt
from nbagent.sandbox.wire.codec import AgentValue


def run(code: str, **options: Any) -> Any:
    options.setdefault("timeout_seconds", 5)
    executor = LocalPythonExecutor(**options)
    try:
        return executor(code).output
    except ExecutionError as exc:
        return exc


MATCH_ATTACK = """
class Meta(type):
    def __instancecheck__(cls, obj):
        return True
class P(metaclass=Meta):
    __match_args__ = ("__globals__",)
def f():
    pass
match f:
    case P(g):
        leaked = g
"""


def test_match_positional_class_patterns_are_checked() -> None:
    assert isinstance(run(MATCH_ATTACK), PolicyError)
    ok = "class Pt:\n    __match_args__ = ('x', 'y')\n    def __init__(self):\n        self.x, self.y = 1, 2\n"
    assert run(ok + "match Pt():\n    case Pt(a, b):\n        r = (a, b)\nr") == (1, 2)
    assert run("match 5:\n    case int(v):\n        r = v\nr") == 5  # self-matching builtins
    assert repr(run("class I(int): pass\nmatch I(7):\n    case I(v):\n        r = v\nr")) == "7"


@pytest.mark.parametrize(
    "code",
    [
        "import statistics\nclass S(str): pass\nS.format('{0.__globals__}', statistics.mean)",
        "class S(str): pass\nS('{0.__class__}').format(1)",
        "class S(str): pass\nS.format_map('{a.__class__}', {'a': 1})",
        "class S(str):\n    def format(self, *a):\n        return super(S, S('{0.__class__}')).format(*a)\nS('x').format(1)",
    ],
    ids=["unbound via subclass", "subclass instance", "format_map via subclass", "super()"],
)
def test_format_through_str_subclasses_is_checked(code: str) -> None:
    assert isinstance(run(code, additional_authorized_imports=["statistics"]), PolicyError)


def test_notebook_classes_are_known_by_identity_not_module() -> None:
    subclass = "import numpy as np\nT = type(np.zeros(1).ctypes)\nclass X(T): pass\nx = X(np.zeros(1), 0)\nx._arr"
    assert isinstance(run(subclass, additional_authorized_imports=["numpy"]), PolicyError)
    forged = "import numpy as np\nC = type(np.zeros(1).ctypes)\nnp.core.overrides.set_module('__main__')(C)\nC._ctypes"
    assert isinstance(run(forged, additional_authorized_imports=["numpy"]), ExecutionError)
    own = "class P:\n    def __init__(self):\n        self._v = 3\n    def get(self):\n        return self._v\nP().get() + P()._v"
    assert run(own) == 6


def test_agent_objects_are_not_touched_after_the_limits() -> None:
    out = run("class P:\n    def __repr__(self):\n        return 'P!'\n[P(), 1]")
    assert isinstance(out, AgentValue) and repr(out) == "[P!, 1]" and str(out) == "[P!, 1]"
    slow_str = "class E(Exception):\n    def __str__(self):\n        while True:\n            pass\nraise E()"
    started = time.monotonic()
    assert isinstance(run(slow_str, timeout_seconds=1), ExecutionError)  # str() of the error ran under the limits
    assert time.monotonic() - started < 10  # not a hang (the limit is 1 s)


@pytest.mark.parametrize(
    "code",
    [
        "t = type\nD = t('D', (), {'__del__': lambda self: print('later')})\nd = D()",
        "D = type.__new__(type, 'D', (), {'__del__': lambda self: print('later')})\nd = D()",
        "class M(type):\n    @classmethod\n    def __prepare__(mcs, name, bases):\n        return {'__del__': lambda self: print('later')}\n"
        "class D(metaclass=M):\n    pass\nd = D()",
    ],
    ids=["type alias", "type.__new__", "__prepare__"],
)
def test_finalizers_slipped_into_classes_are_removed(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    executor = LocalPythonExecutor(namespace=namespace, timeout_seconds=5)
    output = executor(code)
    assert "removed __del__" in output.logs
    namespace.pop("d")
    assert "later" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "code",
    [
        "for i in range(10**9):\n    try:\n        x = sum(range(1000))\n    finally:\n        continue",
        "class S:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        return True\n"
        "for i in range(10**9):\n    with S():\n        x = sum(range(1000))",
        "while True:\n    try:\n        pass\n    finally:\n        continue",
    ],
    ids=["finally continue", "suppressing __exit__", "while"],
)
def test_a_loop_cannot_swallow_its_timeout(code: str) -> None:
    started = time.monotonic()
    assert type(run(code, timeout_seconds=1)).__name__ == "ExecutionTimeout"
    assert time.monotonic() - started < 10  # not a hang (the limit is 1 s)


@pytest.mark.parametrize("in_thread", [False, True], ids=["main thread", "worker thread"])
def test_no_interrupt_escapes_around_disarm(in_thread: bool) -> None:
    """Deadlines and stop requests landing just as the code ends: always an outcome, never SandboxInterrupt."""
    escaped: list[BaseException] = []

    def calls() -> None:
        executor = LocalPythonExecutor(timeout_seconds=0.004)
        for _ in range(150):
            stopper = threading.Timer(0.003, executor.request_stop)
            stopper.start()
            try:
                executor("x = sum(range(20_000))")
            except ExecutionError:
                pass
            except BaseException as exc:  # SandboxInterrupt or any other escape
                escaped.append(exc)
            stopper.cancel()

    if in_thread:
        thread = threading.Thread(target=calls)
        thread.start()
        thread.join()
    else:
        calls()
    assert not [e for e in escaped if isinstance(e, SandboxInterrupt)], escaped[:3]
    assert not escaped


def test_the_local_executor_says_once_what_it_protects_against() -> None:
    from nbagent.sandbox.guards import executor as module

    module._noticed.clear()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        LocalPythonExecutor()
        LocalPythonExecutor()
    notices = [w for w in seen if issubclass(w.category, module.LocalNotice)]
    assert len(notices) == 1 and "mistaken model, not a hostile one" in str(notices[0].message)


def test_on_output_streams_prints_of_the_local_executor_too() -> None:
    seen: list[str] = []
    executor = LocalPythonExecutor(on_output=seen.append)
    assert executor("for i in range(3):\n    print(i)").logs == "0\n1\n2\n"
    assert "".join(seen) == "0\n1\n2\n"
    assert executor("1").images == []
