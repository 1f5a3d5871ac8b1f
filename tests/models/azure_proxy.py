"""A loopback stand-in for Azure OpenAI's routes in front of an OpenAI-compatible server.

Azure clients call `POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=V`
with an `api-key` header. The proxy checks both, records the request, and forwards it to
`{upstream}/chat/completions` with `model` set to the deployment; the answer (streamed or not) is
passed back unchanged.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROUTE = re.compile(r"^/openai/deployments/([^/]+)/chat/completions$")


class AzureProxy:
    def __init__(self, upstream: str, api_key: str, api_version: str) -> None:
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                url = urlsplit(self.path)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                match = ROUTE.match(url.path)
                version = parse_qs(url.query).get("api-version", [None])[0]
                owner.requests.append(
                    {"path": url.path, "api_version": version, "api_key": self.headers.get("api-key")}
                )
                if not match or version != api_version:
                    return self._reply(404, {"error": {"message": f"no Azure route {self.path}"}})
                if self.headers.get("api-key") != api_key:
                    return self._reply(401, {"error": {"message": "Access denied due to invalid subscription key."}})
                forwarded = urllib.request.Request(
                    f"{upstream}/chat/completions",
                    data=json.dumps({**body, "model": match.group(1)}).encode(),
                    headers={"content-type": "application/json"},
                )
                with urllib.request.urlopen(forwarded, timeout=120) as answer:
                    data = answer.read()
                    self.send_response(answer.status)
                    self.send_header("content-type", answer.headers.get("content-type", "application/json"))
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

            def _reply(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> AzureProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
