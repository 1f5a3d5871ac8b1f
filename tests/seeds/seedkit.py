"""Helpers for running smolagents' documented examples with nbagent imports.

`run_snippet` executes an example's text after the smallest edits: `smolagents`
becomes `nbagent`, and each listed (old, new) replacement must match (so a test
cannot silently run something else than the example). `code()` writes a model
answer in the CodeAgent format; `OpenAIStub` is a loopback OpenAI-compatible
chat-completions server playing scripted answers, for examples whose model
talks to a server.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

SEEDS_DIR = Path("/work/shared/seeds")


def sandbox_ready() -> bool:
    try:
        from nbagent.sandbox import LocalPythonExecutor  # noqa: F401
    except ImportError:
        return False
    return True


needs_sandbox = pytest.mark.skipif(
    not sandbox_ready(), reason="nbagent.sandbox (LocalPythonExecutor) has not landed yet"
)


def adapt(source: str, replacements: list[tuple[str, str]] = ()) -> str:
    """The example with `smolagents` -> `nbagent` and each (old, new) applied; every old must occur."""
    text = source.replace("smolagents", "nbagent")
    for old, new in replacements:
        if old not in text:
            raise AssertionError(f"replacement target {old!r} is not in the example")
        text = text.replace(old, new)
    return text


def run_snippet(source: str, replacements: list[tuple[str, str]] = (), **namespace: Any) -> dict[str, Any]:
    """Execute the adapted example in a fresh namespace (plus `namespace`) and return that namespace."""
    scope: dict[str, Any] = {"__name__": "__seed__", **namespace}
    exec(compile(adapt(source, replacements), "<seed example>", "exec"), scope)
    return scope


def code(source: str, thought: str = "I will write code for this.") -> str:
    """A CodeAgent answer: a thought, then the code in a fenced block."""
    return f"Thought: {thought}\n```python\n{source}\n```"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A ToolCallingAgent answer calling one tool (a native tool call)."""
    return {
        "content": None,
        "tool_calls": [{"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def fibonacci(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


class OpenAIStub:
    """A loopback `/v1/chat/completions` server answering from `script` (text or {"name", "arguments"}).

    Streams (SSE) when asked to, as the openai client does for `generate_stream`. Records request bodies.
    """

    def __init__(self, script: list[str | dict[str, Any]] | Callable[[dict[str, Any]], Any]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(body)
                answer = stub.next_answer(body)
                if body.get("stream"):
                    payload = b"".join(stub.sse(answer)) + b"data: [DONE]\n\n"
                    kind = "text/event-stream"
                else:
                    payload, kind = json.dumps(stub.completion(answer)).encode(), "application/json"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def next_answer(self, body: dict[str, Any]) -> Any:
        if callable(self.script):
            return self.script(body)
        index = min(len(self.requests) - 1, len(self.script) - 1)
        return self.script[index]

    @staticmethod
    def _message(answer: Any) -> dict[str, Any]:
        if isinstance(answer, str):
            return {"role": "assistant", "content": answer}
        function = {"name": answer["name"], "arguments": json.dumps(answer["arguments"])}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": function}],
        }

    def completion(self, answer: Any) -> dict[str, Any]:
        return {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "stub",
            "choices": [{"index": 0, "message": self._message(answer), "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def sse(self, answer: Any) -> list[bytes]:
        message = self._message(answer)
        delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
        if "tool_calls" in message:
            delta["tool_calls"] = [{"index": 0, **message["tool_calls"][0]}]
        chunks = [
            {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}},
        ]
        base = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "stub"}
        return [f"data: {json.dumps({**base, **chunk})}\n\n".encode() for chunk in chunks]

    def __enter__(self) -> OpenAIStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
