"""A local HTTP server that answers as a test tells it to, however badly, and counts
what it receives."""

from __future__ import annotations

import json
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, List, Tuple

Headers = Tuple[Tuple[str, str], ...]


class Server:
    """Answers every request with ``answer(handler)``; ``requests`` lists them as
    "METHOD /path", in the order they came."""

    def __init__(self, answer: Callable[[BaseHTTPRequestHandler], None]) -> None:
        self.requests: List[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests.append(f"{self.command} {self.path.split('?')[0]}")
                try:
                    answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first, as it should

            do_GET = do_POST = do_PUT = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # A short poll, so that close() does not wait half a second for the loop to notice.
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @classmethod
    def start(cls, test: unittest.TestCase, answer: Callable[[BaseHTTPRequestHandler], None]) -> "Server":
        s = cls(answer)
        test.addCleanup(s.close)
        return s


def send(h: BaseHTTPRequestHandler, status: int, body: bytes, headers: Headers = (),
         content_type: str = "application/json") -> None:
    """A whole answer, as a well-behaved server sends it."""
    h.send_response(status)
    for k, v in headers:
        h.send_header(k, v)
    h.send_header("Content-Type", content_type)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def json_answer(status: int, value: Any, headers: Headers = ()) -> Callable[[BaseHTTPRequestHandler], None]:
    body = json.dumps(value).encode()
    return lambda h: send(h, status, body, headers)


def error_answer(status: int, code: str, headers: Headers = ()) -> Callable[[BaseHTTPRequestHandler], None]:
    """The API's error shape."""
    return json_answer(status, {"error": {"code": code, "message": "stubbed"}}, headers)


def drip(h: BaseHTTPRequestHandler, data: bytes, every: float) -> None:
    """data a byte at a time, ``every`` seconds apart: each read gets something well
    within any per-read timeout, the whole takes len(data) * every seconds."""
    for i in range(len(data)):
        h.wfile.write(data[i:i + 1])
        h.wfile.flush()
        time.sleep(every)
