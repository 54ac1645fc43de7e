"""An ntfy-compatible server on 127.0.0.1 for the tests (issue 23): the publish API and the
subscribe JSON stream, as docs.ntfy.sh describes them.

* ``POST /`` with a JSON body publishes ``message`` to ``topic`` (what the ntfy channel sends;
  the whole JSON is kept in :attr:`NtfyState.published` for the test to look at);
* ``POST /<topic>`` publishes the body as the message (what a phone's ``http`` action does);
* ``GET /<topic>/json?since=<id>|<n>s|all`` streams ``open``, the cached messages after
  ``since``, then each new message and a ``keepalive`` every :attr:`NtfyServer.keepalive`
  seconds, one JSON object per line, until the client goes or the server stops.

The message cache (:class:`NtfyState`) outlives a server, so a test can stop one and start
another on the same port, as a restarted ntfy with a cache file would be. ``stop()`` cuts every
open stream, as a server going away does.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class NtfyState:
    """Every message by topic, in order, and what was published as JSON."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    published: list[dict[str, Any]] = field(default_factory=list)
    subscriptions: list[str] = field(default_factory=list)  # each GET's path and query
    changed: threading.Condition = field(default_factory=threading.Condition)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def publish(self, topic: str, message: str) -> dict[str, Any]:
        with self.changed:
            event = {"id": f"m{next(self._ids):06d}", "time": int(time.time()),
                     "event": "message", "topic": topic, "message": message}
            self.messages.append(event)
            self.changed.notify_all()
            return event

    def topic(self, topic: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["topic"] == topic]

    def after(self, topic: str, since: str) -> list[dict[str, Any]]:
        mine = self.topic(topic)
        ids = [m["id"] for m in mine]
        if since in ids:
            return mine[ids.index(since) + 1:]
        if since.endswith("s") and since[:-1].isdigit():
            horizon = time.time() - int(since[:-1])
            return [m for m in mine if m["time"] >= horizon]
        return mine if since == "all" else []


class NtfyServer:
    """One server on 127.0.0.1 (``port`` 0: any free one) over a shared :class:`NtfyState`."""

    def __init__(self, state: NtfyState | None = None, port: int = 0,
                 keepalive: float = 0.2) -> None:
        self.state = state or NtfyState()
        self.keepalive = keepalive
        self._port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._streams: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.closing = threading.Event()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> NtfyServer:
        self.closing.clear()
        server = ThreadingHTTPServer(("127.0.0.1", self._port), _handler(self))
        server.daemon_threads = True
        self._server, self._port = server, int(server.server_address[1])
        self._thread = threading.Thread(target=server.serve_forever, name="ntfy-test",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.closing.set()
        with self.state.changed:
            self.state.changed.notify_all()
        if self._server is not None:
            self._server.shutdown()
            with self._lock:
                for sock in self._streams:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
            self._server.server_close()
            self._server = None

    def track(self, sock: socket.socket, add: bool) -> None:
        with self._lock:
            (self._streams.add if add else self._streams.discard)(sock)


class _Handler(BaseHTTPRequestHandler):
    """ntfy's publish and JSON-stream endpoints over :attr:`owner`'s state."""

    owner: NtfyServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        topic = urlsplit(self.path).path.strip("/")
        if not topic:
            data = json.loads(body)
            self.owner.state.published.append(data)
            topic, text = data["topic"], data.get("message", "")
        else:
            text = body.decode()
        self._reply(200, self.owner.state.publish(topic, text))

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        topic, _, kind = parts.path.strip("/").partition("/")
        if kind != "json":
            self._reply(404, {"error": "only /<topic>/json here"})
            return
        self.owner.state.subscriptions.append(self.path)
        since = parse_qs(parts.query).get("since", [""])[0]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson; charset=utf-8")
        self.end_headers()
        self.owner.track(self.connection, True)
        try:
            self._stream(topic, since)
        except OSError:
            pass
        finally:
            self.owner.track(self.connection, False)

    def _stream(self, topic: str, since: str) -> None:
        self._line({"id": "open", "time": int(time.time()), "event": "open",
                    "topic": topic})
        with self.owner.state.changed:
            backlog = self.owner.state.after(topic, since)
            seen = len(self.owner.state.topic(topic))
        for message in backlog:
            self._line(message)
        while not self.owner.closing.is_set():
            with self.owner.state.changed:
                self.owner.state.changed.wait(self.owner.keepalive)
                fresh = self.owner.state.topic(topic)[seen:]
                seen += len(fresh)
            for message in fresh:
                self._line(message)
            if not fresh:
                self._line({"id": "ka", "time": int(time.time()), "event": "keepalive",
                            "topic": topic})

    def _line(self, event: dict[str, Any]) -> None:
        self.wfile.write(json.dumps(event).encode() + b"\n")
        self.wfile.flush()


def _handler(owner: NtfyServer) -> type[BaseHTTPRequestHandler]:
    return type("NtfyHandler", (_Handler,), {"owner": owner})
