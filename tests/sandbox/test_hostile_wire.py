"""Worker -> host is hostile in size, time and control (issue 19, item 1).

Each attack goes through the public executor, with the guards on and off where the worker's code matters; forged
frames need the guards off (the code writes raw frames to the channel's socket). Each test checks that the host (this
pytest process, standing in for the kernel) stays bounded in memory and time and that the next call works.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import TO_THE_HOST, assert_next_call_works, assert_protocol_anomaly, host_growth

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, RemoteObject
from nbagent.sandbox.boundary.watch import CallWatch
from nbagent.sandbox.wire import codec
from nbagent.sandbox.wire.budget import CallBudget

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the isolated worker's tests run on Linux")

MB = 1_000_000
GENEROUS_SECONDS = 20.0  # a bound on time, never a speed assertion

FORGE = (
    TO_THE_HOST
    + """
import struct, json, time
def frame(header, buffers=()):
    data = json.dumps(header).encode()
    lengths = b''.join(struct.pack('<Q', len(b)) for b in buffers)
    return struct.pack('<II', len(data), len(buffers)) + lengths + data + b''.join(buffers)
def send(payload):
    to_the_host(lambda s: s.sendall(payload))
def forge(header, buffers=(), ids=(1, 2, 3)):
    send(b''.join(frame(dict(header, id=i), buffers) for i in ids))
"""
)


@pytest.fixture
def raw(home: Path) -> Iterator[IsolatedPythonExecutor]:
    executor = IsolatedPythonExecutor(guards=False, timeout_seconds=10)
    yield executor
    executor.close()


def make(guards: bool, **options: Any) -> IsolatedPythonExecutor:
    options.setdefault("timeout_seconds", 20)
    return IsolatedPythonExecutor(guards=guards, **options)


def attack(executor: IsolatedPythonExecutor, code: str) -> tuple[int, float, Any]:
    """Run ``code``: the host's peak growth, the seconds it took, and the outcome."""
    started = time.monotonic()
    growth, result = host_growth(lambda: executor(code))
    return growth, time.monotonic() - started, result


# --- size: aliases are sent once ---------------------------------------------------------------------------------


@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no guards"])
@pytest.mark.parametrize("code", ["x = [b'x' * 100_000] * 9000", "x = ['y' * 100_000] * 9000"], ids=["bytes", "str"])
def test_a_repeated_value_costs_the_host_once(home: Path, guards: bool, code: str) -> None:
    executor = make(guards)
    try:
        growth, seconds, _ = attack(executor, code)
        x = executor.state["x"]
        assert isinstance(x, list) and len(x) == 9000 and x[0] is x[-1]  # the aliasing, rebuilt
        assert growth < 50 * MB and seconds < GENEROUS_SECONDS
        assert_next_call_works(executor)
    finally:
        executor.close()


@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no guards"])
def test_a_broadcast_view_is_never_expanded(home: Path, guards: bool) -> None:
    executor = make(guards, additional_authorized_imports=["numpy"])
    try:
        growth, _, _ = attack(executor, "import numpy as np\nx = np.broadcast_to(np.arange(10.0), (10**7, 10))")
        x = executor.state["x"]
        assert x.shape == (10**7, 10) and float(x[123_456, 7]) == 7.0
        assert growth < 50 * MB
        assert_next_call_works(executor)
    finally:
        executor.close()


def test_honest_values_keep_their_aliasing(home: Path) -> None:
    executor = make(True, additional_authorized_imports=["pandas"])
    try:
        executor("a = [1]\nb = [a, a]")
        b = executor.state["b"]
        assert b == [[1], [1]] and b[0] is b[1]
        executor("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 's': ['x', 'y']})\npair = [df, df, df['a']]")
        pair = executor.state["pair"]
        assert pair[0] is pair[1] and pair[0]["s"].tolist() == ["x", "y"] and pair[2].tolist() == [1, 2]
    finally:
        executor.close()


# --- size: the budget, per call and over steps ---------------------------------------------------------------------


@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no guards"])
def test_a_final_answer_counts_once(home: Path, guards: bool) -> None:
    executor = make(guards, max_transfer_bytes=30 * MB)
    try:
        result = executor("x = b'x' * 20_000_000\nfinal_answer(x)")
        assert result.is_final_answer and executor.state["x"] is result.output  # sent once, named twice
        assert not executor.last_notes
    finally:
        executor.close()


def test_over_the_budget_a_value_stays_in_the_worker_and_the_step_says_so(home: Path) -> None:
    executor = make(True, max_transfer_bytes=10 * MB)
    try:
        executor("big = b'x' * 20_000_000\nsmall = b'y' * 1000")
        assert isinstance(executor.state["big"], RemoteObject) and executor.state["small"] == b"y" * 1000
        assert any("`big`" in note and "transfer budget" in note for note in executor.last_notes)
        assert executor("len(big)").output == 20_000_000
    finally:
        executor.close()


def test_the_budget_spans_steps_until_names_are_dropped(home: Path) -> None:
    executor = make(True)
    executor.max_held_bytes = 30 * MB
    try:
        executor("a = b'x' * 20_000_000")
        assert isinstance(executor.state["a"], bytes)
        executor("b = b'y' * 20_000_000")
        assert isinstance(executor.state["b"], RemoteObject)
        assert any("`b`" in note for note in executor.last_notes)
        del executor.state["a"], executor.state["b"]  # the user drops them: their bytes no longer count
        executor("c = b'z' * 20_000_000")
        assert isinstance(executor.state["c"], bytes)
        executor.max_held_bytes = 1000  # spent: small answers still come back as themselves
        assert executor("d = b'q' * 5_000_000\n6 * 7").output == 42
        assert isinstance(executor.state["d"], RemoteObject)
    finally:
        executor.close()


def test_a_worker_that_sends_more_than_it_was_told_is_replaced(home: Path) -> None:
    # One 1 MB buffer named by 3000 nodes: the host would allocate 3 GB; the budget is 20 MB.
    executor = make(False, max_transfer_bytes=20 * MB)
    try:
        code = FORGE + "forge({'t': 'done', 'names': {'x': [{'$': 'bytes', 'buf': 0}] * 3000}}, [b'x' * 1_000_000])"
        growth, _, result = attack(executor, code + "\ntime.sleep(2)")
        assert growth < 50 * MB and "x" not in executor.state
        assert_protocol_anomaly(executor, result)
    finally:
        executor.close()


# --- time: big numbers and colliding keys ----------------------------------------------------------------------------


@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no guards"])
def test_big_ints_and_fractions_stay_in_the_worker(home: Path, guards: bool) -> None:
    executor = make(guards, additional_authorized_imports=["fractions"])
    try:
        code = "from fractions import Fraction\nf = Fraction(3**252000, 7)\nx = [f] * 9000\nn = 3**100000\nm = 3**1000"
        growth, seconds, _ = attack(executor, code)
        assert seconds < GENEROUS_SECONDS and growth < 50 * MB
        assert isinstance(executor.state["f"], RemoteObject) and isinstance(executor.state["n"], RemoteObject)
        assert executor.state["m"] == 3**1000
        x = executor.state["x"]
        assert isinstance(x, RemoteObject) or (len(x) == 9000 and x[0] is x[-1])
        assert_next_call_works(executor)
    finally:
        executor.close()


@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no guards"])
def test_colliding_keys_are_refused_before_they_are_built(home: Path, guards: bool) -> None:
    executor = make(guards)
    try:
        _, seconds, _ = attack(executor, "x = {i * (2**61 - 1): 0 for i in range(3000)}\ny = set(x)")
        assert seconds < GENEROUS_SECONDS
        assert isinstance(executor.state["x"], RemoteObject) and isinstance(executor.state["y"], RemoteObject)
    finally:
        executor.close()


def test_forged_colliding_keys_are_a_protocol_anomaly(raw: IsolatedPythonExecutor) -> None:
    keys = "[i * (2**61 - 1) for i in range(100_000)]"
    code = FORGE + f"k = {keys}\nforge({{'t': 'done', 'names': {{'x': {{'$': 'dict', 'k': k, 'v': [0] * len(k)}}}}}})"
    _, seconds, result = attack(raw, code + "\ntime.sleep(2)")
    assert seconds < GENEROUS_SECONDS
    assert_protocol_anomaly(raw, result)


def test_decoding_gives_up_when_its_check_says_so() -> None:
    calls = []

    def check() -> None:
        calls.append(1)
        if len(calls) > 3:
            raise codec.DecodeAbandoned("stop")

    tree = [{"$": "tuple", "items": []}] * 100_000
    with pytest.raises(codec.DecodeAbandoned):
        codec.decode(tree, [], lambda node: None, lambda node: None, check=check)


def test_a_stop_request_ends_the_calls_decoding() -> None:
    stop_asked = time.monotonic() - 1.0
    watch = CallWatch(1, 30.0, 0.1, CallBudget(2**30, 0, 2**40), lambda: stop_asked)
    decoder = watch.decoder([], lambda node: None, lambda node: None, header_bytes=0)
    with pytest.raises(codec.DecodeAbandoned, match="stop"):
        codec.decoded(decoder, [{"$": "tuple", "items": []}] * 100_000)


def test_a_packed_list_that_lies_about_its_length_is_refused() -> None:
    lie = {"$": "jlist", "parts": [{"n": 1, "buf": 0}]}
    with pytest.raises(codec.WireError):
        codec.decode(lie, [b"[" + b",".join([b'"ab"'] * 100_000) + b"]"], lambda n: None, lambda n: None)


def test_long_lists_of_strings_round_trip() -> None:
    items = [f"name {i}" if i % 7 else None for i in range(20_000)] + ["\ud800 é"]
    tree, buffers = codec.encode(items)
    assert tree["$"] == "jlist" and codec.decode(tree, buffers, lambda n: None, lambda n: None) == items


def test_what_the_host_would_refuse_the_worker_keeps_as_a_handle() -> None:
    from decimal import Decimal

    handle = {"$": "remote", "kind": "object", "oid": 1, "type": "x", "summary": ""}
    tree, _ = codec.encode([Decimal("9" * 20_000), 3**100_000, Decimal("1.5")], lambda obj: dict(handle))
    assert tree[0]["$"] == tree[1]["$"] == "remote" and tree[2]["$"] == "decimal"
    with pytest.raises(codec.WireError):  # a forged one
        codec.decode({"$": "int", "hex": "f" * 5000}, [], lambda n: None, lambda n: None)


def test_a_reference_before_its_value_is_refused() -> None:
    with pytest.raises(codec.WireError):
        codec.decode([{"$": "ref", "to": 1}, [{"$": "@", "#": 1}, 1]], [], lambda n: None, lambda n: None)
    with pytest.raises(codec.WireError):  # a cycle: the list names itself
        codec.decode([{"$": "@", "#": 1}, {"$": "ref", "to": 1}], [], lambda n: None, lambda n: None)


# --- control ---------------------------------------------------------------------------------------------------------


def test_ran_heartbeats_do_not_keep_the_host_waiting(home: Path) -> None:
    executor = IsolatedPythonExecutor(guards=False, timeout_seconds=2)
    try:
        code = FORGE + "while True:\n    forge({'t': 'ran'})\n    time.sleep(0.05)"
        _, seconds, result = attack(executor, code)
        assert seconds < GENEROUS_SECONDS
        assert_protocol_anomaly(executor, result)
    finally:
        executor.close()


def test_a_worker_error_never_raises_keyboard_interrupt_in_the_host(raw: IsolatedPythonExecutor) -> None:
    error = {"class": "KeyboardInterrupt", "message": "x", "logs": ""}
    _, _, result = attack(raw, FORGE + f"forge({{'t': 'done', 'names': {{}}, 'error': {error!r}}})\ntime.sleep(2)")
    assert isinstance(result, ExecutionError)
    assert_next_call_works(raw)  # the frames forged for the next calls' ids are not taken as their answers


@pytest.mark.parametrize(
    "header",
    [{"final": True, "output": 666}, {"final": True, "host_final": 1}],
    ids=["final claim", "host_final never given"],
)
def test_a_final_answer_only_through_the_hosts_tool(raw: IsolatedPythonExecutor, header: dict) -> None:
    forged = f"forge(dict({{'t': 'done', 'names': {{'planted': 1}}}}, **{header!r}))"
    _, _, result = attack(raw, FORGE + forged + "\ntime.sleep(2)")
    assert "planted" not in raw.state  # an anomaly binds nothing
    assert_protocol_anomaly(raw, result)


def test_a_huge_printed_output_frame_is_refused_before_it_is_read(raw: IsolatedPythonExecutor) -> None:
    code = FORGE + (
        "h = json.dumps({'t': 'out', 'text': ''}).encode()\n"
        "send(struct.pack('<II', len(h), 1) + struct.pack('<Q', 2**31) + h + b'x' * 1_000_000)\n"
        "time.sleep(5)"
    )
    growth, seconds, result = attack(raw, code)
    assert growth < 50 * MB and seconds < GENEROUS_SECONDS
    assert_protocol_anomaly(raw, result)


def test_late_printed_output_keeps_the_worker(raw: IsolatedPythonExecutor) -> None:
    late = "import threading\nthreading.Timer(0.2, send, [frame({'t': 'out', 'text': 'late'})]).start()"
    raw(FORGE + late + "\npid = os.getpid()")
    time.sleep(0.6)  # the text arrives between the calls
    assert raw("os.getpid()").output == raw.state["pid"]  # printed text between calls: dropped, not an anomaly


def test_printed_output_streams_in_small_frames(home: Path) -> None:
    seen: list[str] = []
    executor = IsolatedPythonExecutor(on_output=seen.append, max_print_outputs_length=200_000)
    try:
        result = executor("print('z' * 150_000)")
        assert "z" * 150_000 in result.logs
        assert len(seen) > 1 and max(map(len, seen)) <= 8192
    finally:
        executor.close()


SWALLOWED = [
    "try:\n    final_answer(5)\nexcept BaseException:\n    pass\n'not the answer'",
    "try:\n    final_answer(5)\nfinally:\n    raise ValueError('hidden')",
    "try:\n    final_answer(5)\nexcept BaseException:\n    final_answer(6)",
]


@pytest.mark.parametrize("code", SWALLOWED, ids=["swallowed", "error after", "second answer"])
def test_the_first_final_answer_ends_the_call_whatever_the_code_does_after_it(code: str) -> None:
    """Guards off (the guards close these spellings themselves): the host ran final_answer, so the step is final with
    the first answer, and nothing runs in the host after it."""
    executor = IsolatedPythonExecutor(guards=False, timeout_seconds=10)
    ran: list = []
    executor.send_tools({"final_answer": lambda answer: ran.append(answer) or answer})
    try:
        result = executor(code)
        assert result.is_final_answer and result.output == 5
        assert ran == [5]
        assert executor("6 * 7").output == 42
    finally:
        executor.close()
