"""The network ask, reached as README says (issue 33 item 3): code that names a host without a network grant (a
library reads a URL: `pd.read_csv("https://…")`) fails in the worker at name resolution, before any socket is
refused, since the worker's network namespace has no DNS; that failure is a refusal of kind "network", so the step
asks, and an "Allow" sends the retry through the kernel's proxy. Through the public executor (guards on and off)
and a CodeAgent whose on_permission answers."""

from __future__ import annotations

import pytest

from nbagent import CodeAgent, ScriptedModel
from nbagent.sandbox import IsolatedPythonExecutor
from nbagent.sandbox.errors import InterpreterError

F = "`" * 3
READ_URL = "import pandas as pd\ndf = pd.read_csv('https://data.invalid/sales.csv')"


@pytest.mark.parametrize("guards", [True, False])
def test_a_host_named_without_the_network_is_a_network_refusal(guards):
    executor = IsolatedPythonExecutor(additional_authorized_imports=["pandas"], guards=guards)
    try:
        executor.send_tools({})
        assert executor.allow_network is False  # pandas is no network module
        with pytest.raises(InterpreterError, match="name resolution|not known"):
            executor(READ_URL)
        assert [(r.kind, r.target) for r in executor.last_refusals] == [("network", "")]
    finally:
        executor.close()


def test_the_step_asks_for_the_network_and_an_allow_goes_through_the_proxy():
    asks = []

    def allow_once(ask):
        asks.append((ask.kind, ask.text))
        return "once"

    model = ScriptedModel([f"Thought: read it.\n{F}python\n{READ_URL}\n{F}", f"{F}python\nfinal_answer('done')\n{F}"])
    agent = CodeAgent(
        tools=[], model=model, additional_authorized_imports=["pandas"], on_permission=allow_once, max_steps=2
    )
    try:
        agent.run("Read the sales file.")
        assert asks == [("network", "Step 1 wants to use the network")]
        step = agent.memory.action_steps()[0]
        assert [(p["kind"], p["answer"]) for p in step.permissions] == [("network", "once")]
        assert "nbagent: data.invalid does not resolve" in str(step.error)  # the proxy answered: it was granted
    finally:
        agent.python_executor.close()


def test_an_opener_the_kernel_built_before_does_not_bypass_the_proxy():
    """The kernel opened a URL before (urllib keeps that opener, without the worker's proxy): the worker's HTTP still
    goes through the relay once the network is granted."""
    import urllib.request

    urllib.request.install_opener(urllib.request.build_opener(urllib.request.ProxyHandler({})))  # no proxies at all
    try:
        test_the_step_asks_for_the_network_and_an_allow_goes_through_the_proxy()
    finally:
        urllib.request.install_opener(None)
