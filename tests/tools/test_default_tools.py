"""The default toolbox: final_answer, user_input, python_interpreter, visit_webpage (real local HTTP server)."""

from __future__ import annotations

import sys
import threading
import time
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from nbagent.sandbox.guards.statement_value import with_last_statement_value
from nbagent.tools import (
    BASE_TOOLS,
    TOOL_MAPPING,
    FinalAnswerTool,
    PythonInterpreterTool,
    Tool,
    UserInputTool,
    VisitWebpageTool,
    get_base_tools,
)

PAGE = """<html><head><title>T</title><style>body {color: red}</style>
<script>var secret = "do-not-show";</script></head>
<body><h1>Welcome</h1>



<p>Read the <a href="/docs">docs</a> and <b>enjoy</b>.</p>
<ul><li>one</li><li>two</li></ul></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    stop = threading.Event()

    def log_message(self, *args):  # keep test output clean
        pass

    def _send(self, status: int, body: str, content_type: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/page":
            self._send(200, PAGE, "text/html; charset=utf-8")
        elif self.path == "/long":
            self._send(200, "<p>" + "word " * 2000 + "</p>", "text/html")
        elif self.path == "/plain":
            self._send(200, "a_b *c*\n\n\n\nd", "text/plain")
        elif self.path == "/hang":
            self.stop.wait(timeout=10)  # bounded: released at teardown
            self._send(200, "too late", "text/plain")
        else:
            self._send(404, "<h1>Not found</h1>", "text/html")


@pytest.fixture
def server():
    _Handler.stop.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    _Handler.stop.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def test_visit_webpage_returns_markdown(server):
    text = VisitWebpageTool()(f"{server}/page")
    assert "# Welcome" in text or "Welcome\n=======" in text
    assert "[docs](/docs)" in text and "**enjoy**" in text
    assert "one" in text and "two" in text
    assert "do-not-show" not in text and "color: red" not in text
    assert "\n\n\n" not in text and text == text.strip()


def test_visit_webpage_plain_text_is_not_markdown_escaped(server):
    assert VisitWebpageTool()(url=f"{server}/plain") == "a_b *c*\n\nd"


def test_visit_webpage_truncates_with_marker(server):
    text = VisitWebpageTool(max_output_length=100)(f"{server}/long")
    assert text.startswith("word word")
    body, marker = text.split("\n...", 1)
    assert len(body) == 100
    assert "truncated to stay below 100 characters" in marker


def test_visit_webpage_http_error(server):
    text = VisitWebpageTool()(f"{server}/missing")
    assert text == f"Error: {server}/missing answered HTTP 404 Not Found. Check the URL."


def test_visit_webpage_timeout_is_bounded(server):
    start = time.monotonic()
    text = VisitWebpageTool(timeout=0.5)(f"{server}/hang")
    elapsed = time.monotonic() - start
    assert text == f"Error: the request to {server}/hang timed out after 0.5 s. Try again later or another URL."
    assert elapsed < 5


def test_visit_webpage_connection_refused_and_bad_url():
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    text = VisitWebpageTool(timeout=2)(f"http://127.0.0.1:{port}/")
    assert text.startswith(f"Error: could not connect to http://127.0.0.1:{port}/") and "Check the URL" in text
    assert VisitWebpageTool()("not a url").startswith("Error fetching not a url: ")


def test_final_answer_and_user_input(monkeypatch):
    answer = {"nested": [1, 2]}
    assert FinalAnswerTool()(answer) is answer
    assert FinalAnswerTool()(answer=3) == 3
    prompts = []
    monkeypatch.setattr("builtins.input", lambda prompt: prompts.append(prompt) or "blue")
    assert UserInputTool()(question="Favourite colour?") == "blue"
    assert prompts == ["Favourite colour? => Type your answer here:"]


def test_python_interpreter_uses_the_sandbox_executor(monkeypatch):
    made = []

    class ExecutionError(Exception):
        pass

    class FakeExecutor:
        def __init__(self, additional_authorized_imports=(), **kwargs):
            made.append((list(additional_authorized_imports), kwargs))

        def __call__(self, code):
            if "boom" in code:
                raise ExecutionError("line 1: boom")
            return types.SimpleNamespace(output=repr(code), logs="printed\n", is_final_answer=False)

    fake = types.ModuleType("nbagent.sandbox")
    fake.LocalPythonExecutor = FakeExecutor
    fake.ExecutionError = ExecutionError
    fake.with_last_statement_value = with_last_statement_value
    monkeypatch.setitem(sys.modules, "nbagent.sandbox", fake)

    interpreter = PythonInterpreterTool(authorized_imports=["numpy", "math"], timeout_seconds=3)
    assert "It may also import: math, numpy." in interpreter.inputs["code"]["description"]
    # as in smolagents, the output is the last statement's value: a trailing assignment is read back
    assert interpreter(code="x = 1") == "Stdout:\nprinted\n\nOutput: 'x = 1\\nx\\n'"
    assert made == [(["math", "numpy"], {"timeout_seconds": 3})]
    with pytest.raises(ExecutionError, match="boom"):
        interpreter("boom")
    interpreter("x")
    assert len(made) == 3  # a fresh executor per call: variables do not leak between calls


def test_python_interpreter_with_the_real_sandbox():
    sandbox = pytest.importorskip("nbagent.sandbox")
    if not hasattr(sandbox, "LocalPythonExecutor"):
        pytest.skip("nbagent.sandbox has no LocalPythonExecutor yet")
    interpreter = PythonInterpreterTool()
    out = interpreter("print('hi')\n6 * 7")
    assert out.startswith("Stdout:\nhi") and out.endswith("Output: 42")
    with pytest.raises(sandbox.ExecutionError):
        interpreter("1 / 0")


def test_registry():
    assert set(TOOL_MAPPING) == {"python_interpreter", "visit_webpage", "user_input", "final_answer"}
    assert all(issubclass(cls, Tool) and cls.name == name for name, cls in TOOL_MAPPING.items())
    assert BASE_TOOLS == ("python_interpreter", "visit_webpage")
    code_tools = get_base_tools(code_agent=True)
    assert list(code_tools) == ["visit_webpage"] and isinstance(code_tools["visit_webpage"], VisitWebpageTool)
    assert list(get_base_tools(code_agent=False)) == ["python_interpreter", "visit_webpage"]
    assert get_base_tools(True)["visit_webpage"] is not code_tools["visit_webpage"]  # fresh instances
