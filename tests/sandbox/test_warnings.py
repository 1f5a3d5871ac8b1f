"""Warnings the agent's code raises (a library's deprecation, a UserWarning) are kept apart from what it prints.

They are captured where the code runs (this process for the local executor, the worker for the isolated one, with
the guards on and off) and come back as `CodeOutput.warnings` / `ExecutionError.warnings`, one bounded line each;
the printed output (`logs`, what the model reads) never holds them. A hostile worker's warnings are bounded text.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import TO_THE_HOST

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, LocalPythonExecutor
from nbagent.sandbox.guards.capture import MAX_WARNING_CHARS, MAX_WARNINGS, WarningLog, capture_warnings

CODE = """
import pandas as pd
import warnings
frame = pd.DataFrame({'a': [1, 2]})
same = frame.astype(int, copy=False)
warnings.warn('check the units', UserWarning)
print('printed')
len(same)
"""
FAILING = "import warnings\nwarnings.warn('going away', FutureWarning)\n1 / 0"

KINDS = ["local", "isolated", "isolated, no guards"]


@pytest.fixture(params=KINDS)
def executor(request: pytest.FixtureRequest, home: Path) -> Iterator[object]:
    imports = ["pandas", "warnings"]
    if request.param == "local":
        yield LocalPythonExecutor(additional_authorized_imports=imports, timeout_seconds=20)
        return
    if sys.platform != "linux":
        pytest.skip("the isolated worker's tests run on Linux")
    isolated = IsolatedPythonExecutor(
        guards=request.param == "isolated", additional_authorized_imports=imports, timeout_seconds=20
    )
    yield isolated
    isolated.close()


def test_warnings_come_back_apart_from_the_printed_output(executor) -> None:
    output = executor(CODE)
    assert output.output == 2 and output.logs == "printed\n"
    deprecation, user = output.warnings
    assert deprecation.startswith("Pandas4Warning: The copy keyword is deprecated") and deprecation.endswith("(line 5)")
    assert user == "UserWarning: check the units (line 6)"


def test_the_warnings_before_an_error_come_back_with_it(executor) -> None:
    with pytest.raises(ExecutionError) as failure:
        executor(FAILING)
    assert failure.value.warnings == ["FutureWarning: going away (line 2)"]
    assert "going away" not in failure.value.logs and "ZeroDivisionError" in str(failure.value)


def test_a_flood_of_warnings_is_bounded(executor) -> None:
    flood = "import warnings\nfor i in range(500):\n    warnings.warn(f'{i} ' + 'x' * 5000, UserWarning)\n"
    repeated = "for i in range(3):\n    warnings.warn('again', UserWarning)\n"
    lines = executor(flood + repeated).warnings
    assert len(lines) == MAX_WARNINGS + 1 and lines[-1] == "[… 481 more warnings]"  # 'again' did not fit either
    assert all(len(line) <= MAX_WARNING_CHARS for line in lines)
    once = executor(repeated.replace("'again'", "'once more'")).warnings
    assert once == ["UserWarning: once more (line 2)"]  # Python's default: once per place


def test_a_repeated_warning_is_one_line_with_its_count() -> None:
    log = WarningLog()
    for _ in range(3):
        log.add("again", UserWarning, "<agent code, step 1>", 2)
    log.add(DeprecationWarning("old"), DeprecationWarning, "/venv/lib/site-packages/pandas/core/frame.py", 9)
    assert log.lines() == ["UserWarning: again (line 2) (×3)", "DeprecationWarning: old (pandas/core/frame.py:9)"]


def test_other_threads_warnings_are_shown_as_before() -> None:
    shown: list[str] = []
    saved = warnings.showwarning
    warnings.showwarning = lambda message, *rest: shown.append(str(message))
    log = WarningLog()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            with capture_warnings(log):
                other = threading.Thread(target=lambda: warnings.warn("the kernel's own", UserWarning, stacklevel=1))
                other.start()
                other.join()
                warnings.warn("the agent's", UserWarning, stacklevel=1)
            warnings.warn("after the call", UserWarning, stacklevel=1)
            restored = warnings.showwarning
    finally:
        warnings.showwarning = saved
    assert shown == ["the kernel's own", "after the call"]
    assert [line.split(" (")[0] for line in log.lines()] == ["UserWarning: the agent's"]
    assert restored is not None and getattr(restored, "__name__", "") != "_show_warning"


FORGE = (
    TO_THE_HOST
    + """
import struct, json, time
def frame(header):
    data = json.dumps(header).encode()
    return struct.pack('<II', len(data), 0) + data
to_the_host(lambda s: s.sendall(b''.join(frame({'t': 'done', 'id': i, 'names': {}, 'warnings': WARNINGS}) for i in (1, 2, 3))))
time.sleep(2)
"""
)


@pytest.mark.skipif(sys.platform != "linux", reason="the isolated worker's tests run on Linux")
def test_a_hostile_workers_warnings_are_bounded_text(home: Path) -> None:
    raw = IsolatedPythonExecutor(guards=False, timeout_seconds=10)
    try:
        sent = "['w' * 100_000] * 40 + [1, {'x': 2}, None]"
        output = raw(FORGE.replace("WARNINGS", sent))
        assert len(output.warnings) == MAX_WARNINGS + 1
        assert all(isinstance(line, str) and len(line) <= MAX_WARNING_CHARS for line in output.warnings)
        assert raw("6 * 7").output == 42
    finally:
        raw.close()
