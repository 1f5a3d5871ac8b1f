"""`ApiWebSearchTool` against a loopback search API in Brave's format (its `endpoint` is configurable): the request it
sends, the markdown it returns, its pacing, and the errors a person meets."""

from __future__ import annotations

import time
from typing import Any

import pytest
from loopback import LoopbackAPI, Reply, Request

from nbagent import ApiWebSearchTool, CodeAgent, ScriptedModel
from nbagent.tools.web_search import WebSearchError

HITS = {
    "web": {
        "results": [
            {"title": "Jupyter", "url": "https://jupyter.org", "description": "Notebooks."},
            {"title": "nbagent", "url": "https://example.org/nbagent"},
        ]
    }
}


def search_api(request: Request) -> Any:
    if request.query.get("q") == ["nothing"]:
        return {"web": {"results": []}}
    if request.query.get("q") == ["broken"]:
        return Reply({"error": "upstream down"}, 503)
    return HITS


def test_a_search_sends_the_query_and_returns_markdown() -> None:
    with LoopbackAPI(search_api) as api:
        search = ApiWebSearchTool(endpoint=f"{api.url}/search", api_key="k-123", rate_limit=None)
        text = search("notebook agents")
        [request] = api.requests
    assert request.path == "/search" and request.query == {"count": ["10"], "q": ["notebook agents"]}
    assert request.headers["x-subscription-token"] == "k-123"
    assert text == (
        "## Search Results\n\n1. [Jupyter](https://jupyter.org)\nNotebooks.\n\n2. [nbagent](https://example.org/nbagent)\n"
    )


def test_headers_params_and_the_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SEARCH_KEY", "from-env")
    with LoopbackAPI(search_api) as api:
        search = ApiWebSearchTool(endpoint=api.url, api_key_name="MY_SEARCH_KEY", params={"count": 2, "lang": "en"})
        assert search.api_key == "from-env"
        assert search("nothing") == "No results found."
        custom = ApiWebSearchTool(endpoint=api.url, headers={"Authorization": "Bearer t"}, rate_limit=None)
        custom("x")
    assert api.requests[0].query == {"count": ["2"], "lang": ["en"], "q": ["nothing"]}
    assert api.requests[1].headers["authorization"] == "Bearer t"


def test_queries_are_paced_by_the_rate_limit() -> None:
    with LoopbackAPI(search_api) as api:
        search = ApiWebSearchTool(endpoint=api.url, rate_limit=4.0)
        started = time.monotonic()
        search("a")
        search("b")
        paced = time.monotonic() - started
    assert paced >= 0.24  # 4 per second: the second query waited for its turn


def test_a_failing_api_and_a_missing_key_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with LoopbackAPI(search_api) as api, pytest.raises(WebSearchError, match=r"The search for 'broken' at .* 503"):
        ApiWebSearchTool(endpoint=api.url, rate_limit=None)("broken")
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    with pytest.raises(ValueError, match="needs an API key .* set BRAVE_API_KEY"):
        ApiWebSearchTool()("anything")


def test_the_agent_searches_through_it() -> None:
    with LoopbackAPI(search_api) as api:
        agent = CodeAgent(
            tools=[ApiWebSearchTool(endpoint=api.url, rate_limit=None)],
            model=ScriptedModel(["```python\nfinal_answer(web_search('jupyter').count('https://'))\n```"]),
            verbosity_level=-1,
            show_widget=False,
        )
        assert agent.run("How many links?") == 2
