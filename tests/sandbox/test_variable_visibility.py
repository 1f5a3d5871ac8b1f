"""The agent's code sees the names it was given (issue 28 items 1 and 4), in both executors, guards on and off.

A hidden name is not there (a NameError the executor turns into a `variable` refusal a person may grant); a hidden
credential is never granted, and in the isolated worker its value is not in memory either, whatever the code does
past the guards (walk every object the collector knows, read its own memory). The scrub that takes it out never
changes the data the agent can see: a frame holding the same text as a secret stays as it is.
"""

from __future__ import annotations

import os
import sys

import pandas as pd
import pytest
from test_kernel_secrets import memory_hits

from nbagent.sandbox import ExecutionError, IsolatedPythonExecutor, LocalPythonExecutor
from nbagent.sandbox.wire.capabilities import RefusedCapability
from nbagent.sandbox.wire.visibility import credential_reason

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TOKEN = "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0"  # the user's credential the task does not name
PASSWORD = "hun" + "t3r!"  # a short one, by its name
KERNEL_SECRET = "kernel-" + "secret-7a6b5c4d3e2f1a0b"  # a secret of the kernel's (its environment)
TWIN = "sk-" + "twin0123456789abcdefXYZ"  # a user's credential whose equal is a cell of the shared frame


def notebook() -> dict:
    return {
        "leads": pd.DataFrame(
            {"who": ["ann", "bo"], "note": ["".join([KERNEL_SECRET]), "".join([TWIN])]}  # equal, other objects
        ),
        "internal_memo": "do not share",
        "secret_token": "".join([TOKEN]),
        "db_password": "".join([PASSWORD]),
        "api_key": "".join([TWIN]),
        "df": 3,
    }


def make(kind: str, namespace: dict) -> object:
    if kind == "local":
        return LocalPythonExecutor(namespace=namespace, timeout_seconds=20)
    return IsolatedPythonExecutor(namespace=namespace, guards=kind == "isolated", timeout_seconds=30)


KINDS = ["local", "isolated", "isolated-no-guards"]


def test_credentials_are_known_by_name_and_by_the_formats_of_providers() -> None:
    for name, value in [
        ("secret_token", "abcd1234"),
        ("OPENAI_API_KEY", "anything-at-all"),
        ("db_password", "hunter2"),
        ("x", "sk-" + "a" * 40),
        ("x", "ghp_" + "A1" * 18),
        ("x", "AKIA" + "ABCDEFGHIJKLMNOP"),
        ("x", "hf_" + "abcdefghij" * 3),
        ("x", "xoxb-" + "1234567890-abc"),
        ("x", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
        ("config", {"api_key": "abcd1234", "region": "eu"}),
    ]:
        assert credential_reason(name, value), (name, value)
    for name, value in [
        ("tokens", ["the", "cat"]),
        ("n_tokens", 12),
        ("tokenizer", "bpe"),
        ("author", "Ann"),
        ("note", "ask for the API key"),
        ("memo", "do not share"),
    ]:
        assert not credential_reason(name, value), (name, value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_hidden_name_is_not_there_is_asked_for_and_can_be_granted(kind: str) -> None:
    namespace = notebook()
    executor = make(kind, namespace)
    try:
        executor.share(["leads"])
        assert executor("len(leads)").output == 2
        with pytest.raises(ExecutionError, match="NameError: name 'internal_memo' is not defined"):
            executor("print(internal_memo)")
        [refused] = executor.last_refusals
        assert refused.describe() == "read your variable `internal_memo` (str, 12 chars)" and refused.grantable
        with pytest.raises(ExecutionError, match="secret_token"):
            executor("len(secret_token)")
        [never] = executor.last_refusals
        assert not never.grantable and "credential" in never.reason
        with pytest.raises(ValueError, match="never granted"):
            executor.grant(never)
        grant = executor.grant(refused, "once")
        assert executor("internal_memo.upper()").output == "DO NOT SHARE"
        executor.revoke(grant)
        with pytest.raises(ExecutionError, match="internal_memo"):
            executor("internal_memo")
        executor("mine = 41")  # what the agent creates is its own
        assert executor("mine + 1").output == 42
        if kind != "isolated-no-guards":
            with pytest.raises(ExecutionError, match="cannot bind 'df'"):  # the user's variable, never seen
                executor("df = 5")
        else:  # past the guards the binding happens in the worker only
            executor("df = 5")
            assert namespace["df"] == 3 and any("kept df in the worker" in n for n in executor.last_notes)
            assert executor("'internal_memo' in globals() or 'secret_token' in globals()").output is False
        assert namespace["internal_memo"] == "do not share" and namespace["df"] == 3
    finally:
        getattr(executor, "close", lambda: None)()


PROBE = """
def probe(needles):
    import gc
    gc.unfreeze()
    found, seen = [], set()
    for holder in gc.get_objects():
        kind = type(holder)
        if kind is dict:
            items = [*holder.keys(), *holder.values()]
        elif kind in (list, tuple, set, frozenset):
            items = holder
        else:
            try:  # (a library's lazy object may raise on any attribute)
                attributes = getattr(holder, "__dict__", None)
            except Exception:
                attributes = None
            items = attributes.values() if type(attributes) is dict else ()
        for item in items:
            if type(item) in (str, bytes) and id(item) not in seen and all(item is not n for n in needles):
                seen.add(id(item))
                text = item if type(item) is str else item.decode("latin-1")
                found += [n for n in needles if n in text]
    try:
        with open("/proc/self/mem", "rb") as memory:
            memory.read(1)
        mem = "read"
    except OSError as error:
        mem = type(error).__name__
    return sorted(set(found)), len(seen), mem
probe(["".join(part) for part in PARTS])
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the worker's confinement and the memory scan are Linux's")
@pytest.mark.parametrize("guards", [True, False], ids=["guards", "no-guards"])
def test_an_unshared_credential_is_not_in_the_worker_and_the_scrub_changes_no_data(
    guards: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NBAGENT_TEST_API_TOKEN", KERNEL_SECRET)  # a kernel secret, equal to a cell of `leads`
    namespace = notebook()
    frame = namespace["leads"].copy()
    executor = IsolatedPythonExecutor(namespace=namespace, guards=guards, timeout_seconds=60)
    try:
        executor.share(["leads"])
        assert executor("list(leads.note)").output == [KERNEL_SECRET, TWIN]  # the frame is intact in the worker
        report = executor.confinement["kernel_secrets"]
        assert any("credentials not shared" in line for line in report["cleared"])
        pd.testing.assert_frame_equal(executor("leads").output, frame)
        if os.geteuid() == 0:  # the worker's whole memory, read from outside (before the probe makes its needles)
            hits = memory_hits(executor.worker_pid, [TOKEN.encode(), PASSWORD.encode(), KERNEL_SECRET.encode()])
            assert hits[TOKEN.encode()] == 0 and hits[PASSWORD.encode()] == 0
            assert hits[KERNEL_SECRET.encode()] > 0  # kept where the shared frame holds it (the scan's control)
        if not guards:  # the code past the guards: every object the collector knows, its own memory
            parts = [[TOKEN[:5], TOKEN[5:]], [PASSWORD[:3], PASSWORD[3:]], [TWIN[:4], TWIN[4:]]]
            found, walked, mem = executor(PROBE.replace("PARTS", repr(parts))).output
            assert walked > 10_000 and mem != "read"
            assert found == [TWIN]  # the shared frame's cell (its own data), never the hidden credentials
            assert executor("'api_key' in globals()").output is False
        assert namespace["secret_token"] == TOKEN and namespace["api_key"] == TWIN  # the kernel's own: untouched
    finally:
        executor.close()


def test_a_credential_the_task_names_is_shared_and_star_shares_all_but_credentials() -> None:
    namespace = notebook()
    executor = LocalPythonExecutor(namespace=namespace)
    executor.share(None)  # '*'
    assert executor("internal_memo").output == "do not share"
    with pytest.raises(ExecutionError, match="secret_token"):
        executor("secret_token")
    executor.share(["secret_token"])
    assert executor("secret_token").output == TOKEN
    with pytest.raises(ValueError, match="no hidden variable"):
        executor.grant(RefusedCapability("variable", "nothing_here"))
