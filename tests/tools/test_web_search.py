"""WebSearchTool's Exa engine against a loopback stand-in for Exa's search API; clear errors without a key."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import nbagent.tools.web_search as web_search
from nbagent.tools.web_search import WebSearchError, WebSearchTool


@pytest.fixture
def exa(monkeypatch):
    """An HTTP server answering like POST https://api.exa.ai/search; `answers` holds the next bodies."""
    state = {"requests": [], "answers": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            state["requests"].append({"headers": dict(self.headers), "body": body})
            data = json.dumps(state["answers"].pop(0)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(web_search, "EXA_SEARCH_URL", f"http://127.0.0.1:{server.server_address[1]}/search")
    monkeypatch.setenv("EXA_API_KEY", "exa-key")
    yield state
    server.shutdown()
    server.server_close()


def test_exa_results_as_markdown(exa):
    exa["answers"] = [
        {
            "results": [
                {"title": "Exa AI", "url": "https://exa.ai", "highlights": ["A search engine", "for AI."]},
                {"title": "No highlights", "url": "https://example.com", "highlights": None},
            ]
        }
    ]
    text = WebSearchTool(engine="exa", max_results=2)("search engines")
    assert text.startswith("## Search Results")
    assert (
        "[Exa AI](https://exa.ai)\nA search engine for AI." in text and "[No highlights](https://example.com)" in text
    )
    sent = exa["requests"][0]
    assert sent["headers"]["x-api-key"] == "exa-key"
    assert sent["body"] == {"query": "search engines", "numResults": 2, "contents": {"highlights": True}}


def test_exa_no_results_and_no_key(exa, monkeypatch):
    exa["answers"] = [{"results": []}]
    with pytest.raises(WebSearchError, match="No results found"):
        WebSearchTool(engine="exa")("nothing")
    monkeypatch.delenv("EXA_API_KEY")
    with pytest.raises(ValueError, match="EXA_API_KEY"):
        WebSearchTool(engine="exa")("anything")


def test_unknown_engine():
    with pytest.raises(ValueError, match="duckduckgo, bing, exa"):
        WebSearchTool(engine="google")
