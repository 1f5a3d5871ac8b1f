"""Each figure the worker draws comes back with a summary (the marks of its largest series, a few x tick labels) as
plain data, and the host trusts none of it: ints bounded, strings clipped, anything of another shape dropped."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nbagent.media.figures import MAX_AXES, MAX_FIGURES, MAX_MARKS, MAX_TICK_CHARS, MAX_TICKS, checked_figures
from nbagent.sandbox import IsolatedPythonExecutor

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the isolated worker's tests run on Linux")


def test_a_summary_of_the_right_shape_is_kept_as_it_is() -> None:
    honest = [{"marks": 6, "axes": [{"marks": 6, "kind": "bar", "ticks": ["2024-01", "2024-02"]}]}]
    assert checked_figures(honest) == honest
    assert checked_figures([{"marks": 0, "axes": []}]) == [{"marks": 0, "axes": []}]


@pytest.mark.parametrize(
    "forged",
    [
        None,
        "figures",
        {"marks": 5},
        [{"marks": True, "axes": []}],  # a bool is no count
        [{"marks": 5.0, "axes": []}],
        [{"marks": "5", "axes": []}],
        [{"marks": 5, "axes": "bars"}],
        [{"marks": 5, "axes": [{"marks": 5, "kind": "pie", "ticks": []}]}],  # no kind of ours
        [{"marks": 5, "axes": [{"marks": 5, "kind": ["bar"], "ticks": []}]}],
        [{"marks": 5, "axes": [{"marks": 5, "kind": "bar", "ticks": [1, 2]}]}],
        [{"marks": 5, "axes": [{"marks": 5, "kind": "bar", "ticks": "abc"}]}],
        [{"marks": 5, "axes": [["marks", 5]]}],
    ],
)
def test_a_summary_of_another_shape_is_dropped(forged: object) -> None:
    assert checked_figures(forged) == []


def test_huge_counts_and_long_lists_and_strings_are_clipped() -> None:
    axes = {"marks": 10**4000, "kind": "line", "ticks": ["x" * 100_000] * 1000}
    forged = [{"marks": 10**4000, "axes": [axes] * 1000}] * 10_000 + [{"marks": -7, "axes": []}]
    checked = checked_figures(forged)
    assert len(checked) == MAX_FIGURES
    first = checked[0]
    assert first["marks"] == MAX_MARKS and len(first["axes"]) == MAX_AXES
    assert len(first["axes"][0]["ticks"]) == MAX_TICKS and all(
        len(t) == MAX_TICK_CHARS for t in first["axes"][0]["ticks"]
    )
    assert checked_figures([{"marks": -7, "axes": []}]) == [{"marks": 0, "axes": []}]
    # a figure cannot claim more marks than its axes hold
    assert checked_figures([{"marks": 999, "axes": [{"marks": 3, "kind": "bar", "ticks": []}]}])[0]["marks"] == 3


# ---------------------------------------------------------------------------------------------- through a worker


@pytest.fixture(scope="module")
def guarded() -> Iterator[IsolatedPythonExecutor]:
    executor = IsolatedPythonExecutor(timeout_seconds=20, additional_authorized_imports=["matplotlib", "matplotlib.*"])
    yield executor
    executor.close()


@linux_only
def test_the_worker_sends_a_summary_per_figure(guarded: IsolatedPythonExecutor) -> None:
    code = (
        "import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\nax.bar([f'day {i}' for i in range(40)], range(40))\nplt.show()\n"
        "fig, ax = plt.subplots()\nax.plot(range(7))\nax.scatter(range(3), range(3))"
    )
    out = guarded(code)
    assert len(out.images) == 2
    assert [figure["marks"] for figure in out.figures] == [40, 7]
    bars, line = (figure["axes"][0] for figure in out.figures)
    assert bars["kind"] == "bar" and bars["ticks"] == [f"day {i}" for i in range(5)] and line["kind"] == "line"
    assert guarded("1 + 1").figures == []


@linux_only
def test_forged_summaries_from_the_worker_are_clipped_or_dropped(home: Path) -> None:
    executor = IsolatedPythonExecutor(guards=False, timeout_seconds=20)  # the agent's code owns the worker
    forged = (
        "import sys\n"
        "taken = sys.modules['nbagent.sandbox.boundary.figures']._CALL['summaries']\n"
        "taken += [{'marks': 10**4000, 'axes': [{'marks': 10**4000, 'kind': 'bar', 'ticks': ['x' * 100000] * 50}]}]\n"
        "taken += [{'marks': 'many', 'axes': []}, {'marks': 3, 'axes': [{'marks': 3, 'kind': 'exec', 'ticks': []}]}]\n"
        "taken += [[1, 2, 3], 'text', None]\n"
        "taken += [{'marks': 1, 'axes': []}] * 5000\n"
        "'sent'"
    )
    try:
        out = executor(forged)
        assert out.output == "sent"
        assert len(out.figures) == MAX_FIGURES - 5  # the first MAX_FIGURES read, the 5 of wrong shapes dropped
        first = out.figures[0]
        assert first["marks"] == MAX_MARKS and first["axes"][0]["marks"] == MAX_MARKS
        assert len(first["axes"][0]["ticks"]) == MAX_TICKS and len(first["axes"][0]["ticks"][0]) == MAX_TICK_CHARS
        assert out.figures[1:] == [{"marks": 1, "axes": []}] * (MAX_FIGURES - 6)
        assert executor("2").output == 2 and executor("2").figures == []
    finally:
        executor.close()
