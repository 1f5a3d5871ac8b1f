"""A loopback HTTP server that plays a script of faults for chat-completions clients.

Each request consumes the next action of `server.script` (the last one repeats):
"ok", "ok_stream", ("status", code, message), "malformed", "truncated" (stream cut after some
output), "truncated_early" (headers, then the connection closes), "hang" (answers nothing until
the test ends). Every request is recorded (path, headers, JSON body).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "Hello from the fault server."


def completion(text: str = ANSWER, tool_call: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_call:
        message["tool_calls"] = [{"id": "call_1", "type": "function", "function": tool_call}]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def chunk(text: str | None, finish: str | None = None, usage: bool = False) -> bytes:
    data: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "delta": {"content": text} if text is not None else {}, "finish_reason": finish}],
    }
    if usage:
        data["choices"] = []
        data["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    return f"data: {json.dumps(data)}\n\n".encode()


class FaultServer:
    def __init__(self) -> None:
        self.script: list[Any] = ["ok"]
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()  # set at stop: hanging handlers return
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self._reply(200, {"data": [{"id": "fake", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with owner._lock:
                    owner.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    action = owner.script.pop(0) if len(owner.script) > 1 else owner.script[0]
                self._act(action, body)

            def _reply(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _sse_headers(self, length: int | None = None) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                if length is not None:
                    self.send_header("content-length", str(length))
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True

            def _act(self, action: Any, body: dict[str, Any]) -> None:
                stream = bool(body.get("stream"))
                if action == "ok" and stream:
                    action = "ok_stream"
                if action == "ok":
                    self._reply(200, completion())
                elif action == "ok_stream":
                    words = ANSWER.split(" ")
                    parts = [chunk(w if i == 0 else " " + w) for i, w in enumerate(words)]
                    payload = b"".join([*parts, chunk(None, "stop"), chunk(None, usage=True), b"data: [DONE]\n\n"])
                    self._sse_headers(len(payload))
                    self.wfile.write(payload)
                elif isinstance(action, tuple) and action[0] == "status":
                    _, code, message = action
                    self._reply(
                        code,
                        {"error": {"message": message, "type": "fault", "code": code}},
                        {"retry-after": "0"} if code == 429 else None,
                    )
                elif action == "malformed":
                    data = b'{"id": "chatcmpl-1", "choices": [ this is not json'
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                elif action == "truncated":
                    first = chunk("Hello") + chunk(" from")
                    self._sse_headers(len(first) + 500)  # promise more than we send, then hang up
                    self.wfile.write(first)
                    self.wfile.flush()
                elif action == "truncated_early":
                    self._sse_headers(500)
                    self.wfile.flush()
                elif action == "hang":
                    owner.release.wait(30)
                else:
                    raise ValueError(f"unknown fault action {action!r}")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
