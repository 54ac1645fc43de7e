"""The host's control socket: how CLI commands that change a goal reach the running host.

A Unix socket in the runtime directory (the directory is 0700, the socket 0600). One JSON request
per line, one JSON reply per line: ``{"op": "resume", "goal": "demo:docs"}`` →
``{"goal": ..., "outcome": ..., "reason": ..., "not_before": ..., "state": ...}``. A goal op is
a command's JSON form (:data:`core.commands.COMMANDS`, by its wire name) and goes through the one
door (``perform``), exactly like a click in the window; the others are ``ping`` (the read
model's answer about the host), ``refresh`` and ``store-restore``.

Other modules add ops with :meth:`ControlServer.register` (e.g. the pipeline's ``run``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.commands import COMMANDS, ActionResult, Command, command_from_json
from core.i18n import N_
from core.paths import Paths

if TYPE_CHECKING:  # the server's; the client (a CLI command) runs no loop (issue 24)
    import asyncio

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Perform = Callable[[Command, str], Awaitable[ActionResult]]


@dataclass(frozen=True)
class HostOps:
    """What the socket serves besides commands: the host's answer to a ping, a refresh of every
    provider, and safe mode's restore of a store backup."""

    ping: Callable[[], dict[str, Any]]
    refresh: Callable[[], Awaitable[None]]
    restore: Callable[[str | None, bool], Awaitable[dict[str, Any]]]
MAX_REQUEST_BYTES = 1 << 20


class NoHostRunning(Exception):
    """Nothing listens on the control socket."""


class ControlServer:
    """Serves the control socket for one engine. Owns the listening socket."""

    def __init__(self, paths: Paths, perform: Perform, ops: HostOps) -> None:
        self.path = paths.socket_path
        self._perform = perform
        self._host = ops
        self._server: asyncio.AbstractServer | None = None
        self._inode: int | None = None
        self._ops: dict[str, Handler] = {
            "ping": self._ping,
            "refresh": self._refresh,
            "store-restore": self._store_restore,
            **{wire: self._command for wire in COMMANDS},
        }

    def register(self, op: str, handler: Handler) -> None:
        self._ops[op] = handler

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a stale socket of a dead host (we hold the host lease)
        import asyncio  # here, not at the top: see TYPE_CHECKING above

        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(
                self._serve, path=str(self.path), limit=MAX_REQUEST_BYTES)
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        self._inode = self.path.stat().st_ino

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            if self._inode is not None and self.path.stat().st_ino == self._inode:
                self.path.unlink()  # ours — not the socket of a host that replaced us
        self._inode = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        import asyncio

        try:
            line = await reader.readline()
            reply = await self.dispatch(line)
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError) as exc:
            log.warning("control connection failed: %s", exc)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def dispatch(self, line: bytes) -> dict[str, Any]:
        try:
            request = json.loads(line)
        except ValueError as exc:
            return {"error": N_("bad request: {error}").format(error=exc)}
        if not isinstance(request, dict):
            return {"error": N_("bad request: {error}").format(
                error=N_("a request is a JSON object"))}
        return await self.handle(request)

    async def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request, already parsed (also those another host routes here, see
        :mod:`core.hosts.remote`)."""
        try:
            handler = self._ops.get(str(request.get("op")))
            if handler is None:
                return {"error": N_("unknown op {op!r}").format(op=request.get("op"))}
            return await handler(request)
        except ValueError as exc:
            return {"error": N_("bad request: {error}").format(error=exc)}
        except Exception as exc:
            log.exception("control op failed")
            return {"error": f"{type(exc).__name__}: {exc}"}

    async def _ping(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "pid": os.getpid(), **self._host.ping()}

    async def _store_restore(self, request: dict[str, Any]) -> dict[str, Any]:
        backup = request.get("backup")
        return await self._host.restore(str(backup) if backup else None,
                                        bool(request.get("empty")))

    async def _command(self, request: dict[str, Any]) -> dict[str, Any]:
        command = command_from_json(request)  # a bad field: ValueError, "bad request: …"
        return (await self._perform(command, _origin(request))).to_json()

    async def _refresh(self, request: dict[str, Any]) -> dict[str, Any]:
        await self._host.refresh()
        return {"ok": True}


def _origin(request: dict[str, Any]) -> str:
    return str(request.get("origin") or "cli")


def send_request(socket_path: Path, request: dict[str, Any],
                 timeout: float = 120.0) -> dict[str, Any]:
    """Send one request to the host and return its reply; :class:`NoHostRunning` if none."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(socket_path))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise NoHostRunning(str(exc)) from None
        sock.sendall(json.dumps(request).encode() + b"\n")
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    data = b"".join(chunks)
    if not data:
        raise NoHostRunning(N_("the host closed the connection without answering"))
    reply: dict[str, Any] = json.loads(data)
    return reply
