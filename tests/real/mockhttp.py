"""A scripted HTTP server on 127.0.0.1 for the real CLIs to talk to (never the network).

A test gives :class:`MockServer` a handler ``(Request) -> Reply``; every request is recorded in
``server.requests``. Replies are JSON bodies, raw bytes or Server-Sent Events, each with a status
and headers, so one server can play the OpenAI Responses API, the Anthropic Messages API or a usage
endpoint.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclasses.dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    method: str
    path: str  # without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclasses.dataclass(frozen=True)
class Reply:
    """What to answer: a status, headers and either a body or a list of SSE events."""

    status: int = 200
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    body: bytes = b""
    events: tuple[tuple[str | None, Any], ...] | None = None  # (event name, data) pairs

    @classmethod
    def json(cls, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        return cls(status, {"content-type": "application/json", **(headers or {})},
                   json.dumps(data).encode())

    @classmethod
    def sse(cls, events: Iterable[tuple[str | None, Any]], status: int = 200,
            headers: dict[str, str] | None = None) -> Reply:
        return cls(status, {"content-type": "text/event-stream", **(headers or {})},
                   events=tuple(events))


Handler = Callable[[Request], Reply]


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        request = Request(self.command, url.path, parse_qs(url.query),
                          {k.lower(): v for k, v in self.headers.items()}, body)
        with self.server.lock:
            self.server.requests.append(request)
        try:
            reply = self.server.handler(request)
        except Exception as exc:  # a test handler's bug shows as a 500 the test can see
            reply = Reply.json({"error": {"type": "mock_error", "message": repr(exc)}}, 500)
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.events is None:
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            return
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in reply.events:
            chunk = "" if name is None else f"event: {name}\n"
            text = data if isinstance(data, str) else json.dumps(data)
            chunk += "".join(f"data: {line}\n" for line in text.split("\n")) + "\n"
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: Handler) -> None:
        super().__init__(("127.0.0.1", 0), _RequestHandler)
        self.handler = handler
        self.requests: list[Request] = []
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that gave up waiting (a time-out test) is not the server's error
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class MockServer:
    """The running server: ``url`` to point a CLI at, ``requests`` to assert on."""

    def __init__(self, handler: Handler, poll_interval: float = 0.5) -> None:
        self._server = _Server(handler)
        # poll_interval: how often serve_forever looks for shutdown (stop() waits up to this)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": poll_interval}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[Request]:
        with self._server.lock:
            return list(self._server.requests)

    def set_handler(self, handler: Handler) -> None:
        self._server.handler = handler

    def start(self) -> MockServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def serving(handler: Handler, poll_interval: float = 0.5) -> Iterator[MockServer]:
    """Serve ``handler`` on 127.0.0.1 for the duration of the ``with`` block."""
    server = MockServer(handler, poll_interval).start()
    try:
        yield server
    finally:
        server.stop()
