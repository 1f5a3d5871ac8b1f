"""`web_search` tools with smolagents' names: `WebSearchTool`, `DuckDuckGoSearchTool` and `ApiWebSearchTool`.

DuckDuckGo and Bing searches go through the `ddgs` package (formerly `duckduckgo_search`),
which is not a dependency of nbagent; `WebSearchTool(engine="exa")` calls Exa's search API
with `$EXA_API_KEY`; `ApiWebSearchTool` calls a search API's endpoint (Brave's by default, with
`$BRAVE_API_KEY`; any endpoint answering in Brave's format). Without the package, the key or a network, a call raises one clear
error naming what is missing. The agent sees that error with the tool's name and can carry
on without the web.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from .base import Tool

__all__ = ["ApiWebSearchTool", "WebSearchTool", "DuckDuckGoSearchTool", "WebSearchError", "WEB_SEARCH_TOOLS"]

_NEEDS = "web_search needs the `ddgs` package (`pip install ddgs`) and network access"
# `backend` names a search engine in ddgs (>= 9); the former duckduckgo_search package used it otherwise.
_BACKEND_PACKAGE = "ddgs"


class WebSearchError(RuntimeError):
    """The search could not be run (package missing, no network, the engine refused)."""


def _ddgs_class() -> type:
    try:
        from ddgs import DDGS
    except ImportError:
        try:
            from duckduckgo_search import DDGS  # the package's former name
        except ImportError:
            raise ImportError(
                f"{_NEEDS}; `ddgs` is not installed here. Install it, or give the agent other tools "
                "(e.g. visit_webpage with known URLs)."
            ) from None
    return DDGS


def _format_results(results: list[dict[str, Any]]) -> str:
    entries = [f"[{r.get('title', '')}]({r.get('href', '')})\n{r.get('body', '')}" for r in results]
    return "## Search Results\n\n" + "\n\n".join(entries)


class _DDGSSearch(Tool):
    name = "web_search"
    description = "Performs a web search for your query (think a Google search), then returns the top results."
    inputs = {"query": {"type": "string", "description": "The search query to perform."}}
    output_type = "string"

    max_results: int = 10
    backend: str | None = None
    ddgs_kwargs: dict[str, Any] | None = None

    def forward(self, query: str) -> str:
        ddgs = _ddgs_class()(**(self.ddgs_kwargs or {}))
        options: dict[str, Any] = {"max_results": self.max_results}
        if self.backend and type(ddgs).__module__.split(".")[0] == _BACKEND_PACKAGE:
            options["backend"] = self.backend
        try:
            results = list(ddgs.text(query, **options) or [])
        except Exception as failure:
            raise WebSearchError(
                f"The web search for {query!r} failed ({type(failure).__name__}: {failure}). "
                "web_search needs network access: check the connection, or try again later."
            ) from failure
        if not results:
            return f"No results found for {query!r}. Try a shorter or less specific query."
        return _format_results(results)


class DuckDuckGoSearchTool(_DDGSSearch):
    """DuckDuckGo search (smolagents' `DuckDuckGoSearchTool`). `kwargs` go to `ddgs.DDGS` (e.g. `timeout`, `proxy`)."""

    description = "Performs a duckduckgo web search based on your query (think a Google search) then returns the top search results."

    def __init__(self, max_results: int = 10, **kwargs: Any) -> None:
        super().__init__()
        self.max_results = max_results
        self.ddgs_kwargs = kwargs


EXA_SEARCH_URL = "https://api.exa.ai/search"


class WebSearchTool(_DDGSSearch):
    """A web search through DuckDuckGo, Bing or Exa (smolagents' `WebSearchTool`); Exa needs `$EXA_API_KEY`."""

    ENGINES = ("duckduckgo", "bing", "exa")

    def __init__(self, max_results: int = 10, engine: str = "duckduckgo") -> None:
        super().__init__()
        if engine not in self.ENGINES:
            raise ValueError(f"WebSearchTool(engine={engine!r}): use one of {', '.join(self.ENGINES)}")
        self.max_results = max_results
        self.engine = engine
        self.backend = engine

    def forward(self, query: str) -> str:
        if self.engine == "exa":
            return self._search_exa(query)
        return super().forward(query)

    def _search_exa(self, query: str) -> str:
        import requests

        key = os.environ.get("EXA_API_KEY")
        if not key:
            raise ValueError("web_search with engine='exa' needs an Exa API key: set EXA_API_KEY in the environment.")
        try:
            response = requests.post(
                EXA_SEARCH_URL,
                headers={"x-api-key": key, "x-exa-integration": "nbagent", "content-type": "application/json"},
                json={"query": query, "numResults": self.max_results, "contents": {"highlights": True}},
                timeout=30,
            )
            response.raise_for_status()
            results = response.json().get("results") or []
        except requests.exceptions.RequestException as failure:
            raise WebSearchError(
                f"The Exa search for {query!r} failed ({type(failure).__name__}: {failure}). Check EXA_API_KEY "
                "and the network."
            ) from failure
        if not results:
            raise WebSearchError(f"No results found for {query!r}! Try a less restrictive/shorter query.")
        return _format_results(
            [
                {"title": r.get("title", ""), "href": r.get("url", ""), "body": " ".join(r.get("highlights") or [])}
                for r in results
            ]
        )


BRAVE_SEARCH_URL = "https://api.search.brave.com/res/v1/web/search"


class ApiWebSearchTool(Tool):
    """A web search through a search API (smolagents' `ApiWebSearchTool`): GET `endpoint` with `params` and
    `q=<query>`, results read from Brave's answer format (`web.results[].title/url/description`).

    Args:
        endpoint: the API's URL (default: Brave Search's).
        api_key: the key; else the environment variable `api_key_name` (default `BRAVE_API_KEY`).
        headers: the request's headers (default: Brave's `X-Subscription-Token` with the key).
        params: the query parameters besides `q` (default `{"count": 10}`).
        rate_limit: at most this many queries per second (None: no pause between them).
        timeout: seconds for one request (smolagents waits without end).
    """

    name = "web_search"
    description = (
        "Performs a web search for a query and returns a string of the top search results formatted as markdown "
        "with titles, URLs, and descriptions."
    )
    inputs = {"query": {"type": "string", "description": "The search query to perform."}}
    output_type = "string"

    def __init__(
        self,
        endpoint: str = "",
        api_key: str = "",
        api_key_name: str = "",
        headers: dict | None = None,
        params: dict | None = None,
        rate_limit: float | None = 1.0,
        timeout: float = 30.0,
    ) -> None:
        super().__init__()
        self.endpoint = endpoint or BRAVE_SEARCH_URL
        self.api_key_name = api_key_name or "BRAVE_API_KEY"
        self.api_key = api_key or os.getenv(self.api_key_name)
        self.headers = headers if headers is not None else {"X-Subscription-Token": self.api_key or ""}
        self.params = params if params is not None else {"count": 10}
        self.rate_limit = rate_limit
        self.timeout = timeout
        self._min_interval = 1.0 / rate_limit if rate_limit else 0.0
        self._last_request = 0.0
        self._pace = threading.Lock()

    def _enforce_rate_limit(self) -> None:
        with self._pace:
            wait = self._last_request + self._min_interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._last_request = time.monotonic()

    def forward(self, query: str) -> str:
        import requests

        if self.endpoint == BRAVE_SEARCH_URL and not self.api_key:
            raise ValueError(
                f"web_search needs an API key for {self.endpoint}: set {self.api_key_name} in the environment "
                "or pass api_key=."
            )
        self._enforce_rate_limit()
        try:
            response = requests.get(
                self.endpoint, headers=self.headers, params={**self.params, "q": query}, timeout=self.timeout
            )
            response.raise_for_status()
            data = response.json()
        except (requests.exceptions.RequestException, ValueError) as failure:
            raise WebSearchError(
                f"The search for {query!r} at {self.endpoint} failed ({type(failure).__name__}: {failure}). Check "
                "the key and the network."
            ) from failure
        return self.format_markdown(self.extract_results(data))

    def extract_results(self, data: dict) -> list[dict[str, str]]:
        """Brave's format: `{"web": {"results": [{"title", "url", "description"}, ...]}}`."""
        found = (data.get("web") or {}).get("results") or [] if isinstance(data, dict) else []
        return [{"title": r["title"], "url": r["url"], "description": r.get("description", "")} for r in found]

    def format_markdown(self, results: list[dict[str, str]]) -> str:
        if not results:
            return "No results found."
        entries = [f"{n}. [{r['title']}]({r['url']})\n{r['description']}" for n, r in enumerate(results, start=1)]
        return "## Search Results\n\n" + "\n\n".join(entries)


# For the CLI's `--tools web_search`.
WEB_SEARCH_TOOLS: dict[str, type[Tool]] = {"web_search": WebSearchTool}
