"""``codex app-server``: one child process spoken to in JSON-RPC over stdio.

The protocol is JSON-RPC 2.0 with the ``"jsonrpc"`` header omitted, one JSON object per line
(``codex-rs/app-server`` README). A session starts with the ``initialize`` request and the
``initialized`` notification. The server sends responses (``id`` + ``result``/``error``),
notifications (``method`` without ``id``) and requests of its own (``method`` + ``id``, e.g.
approvals), which Goalkeeper answers with an error: it cannot approve anything on the user's
behalf, and never passes flags that would make Codex stop asking.

:class:`AppServer` owns the process. It is started in its own process group and
:meth:`AppServer.close` always reaps it — stdin closed first (the server exits at end of input),
then SIGTERM to the group, then SIGKILL — whatever happened before, cancellation included.

``via_proxy``: instead of a server of its own, ``codex app-server proxy`` — a relay to the shared
app-server (``codex app-server daemon``) that already holds a thread. The relay speaks WebSocket
(:mod:`.wsframe`); closing it leaves the shared server and its turns running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from core.i18n import N_
from core.providers.codex import wsframe

log = logging.getLogger(__name__)
T = TypeVar("T")

CLIENT_INFO = {"name": "goalkeeper", "title": "Goalkeeper", "version": "0.1.0"}
METHOD_NOT_FOUND = -32601
INVALID_REQUEST = -32600
#: thread/resume answers with the whole thread; lines can be large
_LINE_LIMIT = 256 << 20

Notification = tuple[str, dict[str, Any]]
RequestHandler = Callable[[str, dict[str, Any]], None]


class AppServerError(Exception):
    """The app-server could not be started, died, or did not answer in time."""


class RpcError(Exception):
    """The app-server answered a request with an error."""

    def __init__(self, method: str, code: int | None, message: str) -> None:
        super().__init__(f"{method}: {message} (code {code})")
        self.method = method
        self.code = code
        self.message = message

    @property
    def method_missing(self) -> bool:
        """This Codex does not know the method (older builds, or goals turned off)."""
        text = self.message.lower()
        return self.code == METHOD_NOT_FOUND or (
            self.code == INVALID_REQUEST and ("unknown variant" in text or "unknown method" in text
                                              or "goals feature is disabled" in text))


class AppServer:
    """A running ``codex app-server``.

    Attributes:
        notifications: every notification received, in order (a runner consumes them).
        arrived: how many notifications have been put into ``notifications`` so far.
        pid: the process id once started.

    Codex sends some notifications *about the past* right after a request is answered (e.g.
    ``thread/resume`` replays the goal's old status): :meth:`request_marked` also returns
    ``arrived`` as it was when the answer came, so a consumer counting what it took from the
    queue can tell the notifications that preceded an answer from those that followed it.
    """

    def __init__(self, executable: str, env: Mapping[str, str], cwd: Path | None = None,
                 on_request: RequestHandler | None = None, via_proxy: bool = False) -> None:
        self.via_proxy = via_proxy
        self._argv = [executable, "app-server", "proxy"] if via_proxy else [
            executable, "app-server"]
        self._env = dict(env)
        self._cwd = cwd
        self.on_request = on_request
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._next_id = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._stderr: deque[str] = deque(maxlen=20)
        self._closed = False
        self.notifications: asyncio.Queue[Notification] = asyncio.Queue()
        self.arrived = 0
        self.pid: int | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> dict[str, Any]:
        """Spawn and initialize; returns the ``initialize`` result."""
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self._argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=self._env,
                cwd=str(self._cwd) if self._cwd else None, start_new_session=True,
                limit=_LINE_LIMIT,
            )
        except OSError as exc:
            raise AppServerError(f"cannot start {self._argv[0]} app-server: "
                                 f"{exc.strerror or exc}") from None
        self.pid = self._proc.pid
        leftover = await self._upgrade() if self.via_proxy else b""
        self._tasks = [asyncio.ensure_future(self._read_stdout(leftover)),
                       asyncio.ensure_future(self._read_stderr())]
        result = await self.request("initialize", {
            "clientInfo": CLIENT_INFO,
            # thread/goal/* were experimental in some builds; asking for them changes nothing
            # about permissions or sandboxing
            "capabilities": {"experimentalApi": True},
        })
        self.notify("initialized")
        return result if isinstance(result, dict) else {}

    async def _upgrade(self) -> bytes:
        """The WebSocket upgrade through the proxy; returns what followed the reply's head."""
        assert self._proc is not None and self._proc.stdin and self._proc.stdout
        request, _ = wsframe.handshake()
        self._proc.stdin.write(request)
        head = bytearray()
        while b"\r\n\r\n" not in head:
            chunk = await self._proc.stdout.read(4096)
            if not chunk:
                raise AppServerError(N_("codex app-server proxy closed before the upgrade "
                                        "(is the shared app-server running?)"))
            head.extend(chunk)
        end = head.index(b"\r\n\r\n") + 4
        try:
            wsframe.check_upgrade(bytes(head[:end]))
        except wsframe.FrameError as exc:
            raise AppServerError(str(exc)) from None
        return bytes(head[end:])

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None and not self._closed

    @property
    def stderr_tail(self) -> str:
        return " | ".join(self._stderr)

    async def close(self, grace: float = 2.0) -> int | None:
        """Stop the process and reap it (and its process group). Safe to call twice.

        Once begun, a close runs to its end even when its caller is cancelled (a host stopping
        mid-close): a half-done close would leave a running codex with its stdin closed."""
        return await finish(self._close(grace))

    async def _close(self, grace: float) -> int | None:
        self._closed = True
        proc = self._proc
        if proc is None:
            return None
        if proc.returncode is None:
            with contextlib.suppress(OSError, RuntimeError):
                if proc.stdin is not None:
                    proc.stdin.close()
            if not await _exited(proc, grace):
                _signal_group(proc, signal.SIGTERM)
                if not await _exited(proc, grace):
                    _signal_group(proc, signal.SIGKILL)
                    await proc.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._fail_pending(AppServerError(self._gone()))
        return proc.returncode

    def _gone(self) -> str:
        code = self._proc.returncode if self._proc else None
        tail = f": {self.stderr_tail}" if self._stderr else ""
        return f"codex app-server exited (code {code}){tail}"

    # -- messages ------------------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      timeout: float | None = None) -> Any:
        """Send a request and wait for its result; raises :class:`RpcError` on an error reply."""
        result, _ = await self.request_marked(method, params, timeout)
        return result

    async def request_marked(self, method: str, params: dict[str, Any] | None = None,
                             timeout: float | None = None) -> tuple[Any, int]:
        """:meth:`request`, and the number of notifications that had arrived before the answer."""
        if not self.running:
            raise AppServerError(self._gone() if self._proc else "codex app-server not started")
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        message: dict[str, Any] = {"method": method, "id": request_id}
        if params is not None:
            message["params"] = params
        try:
            self._write(message)
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancellation
            async with asyncio.timeout(timeout):
                answer: tuple[Any, int] = await future
                return answer
        except TimeoutError:
            raise AppServerError(f"codex app-server did not answer {method} within "
                                 f"{timeout:g} s") from None
        finally:
            self._pending.pop(request_id, None)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    def _write(self, message: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            raise AppServerError(self._gone())
        data = json.dumps(message, separators=(",", ":")).encode()
        proc.stdin.write(wsframe.encode(data) if self.via_proxy else data + b"\n")

    def respond(self, request_id: Any, result: Any = None, error: dict[str, Any] | None = None
                ) -> None:
        reply: dict[str, Any] = {"id": request_id}
        if error is not None:
            reply["error"] = error
        else:
            reply["result"] = result
        with contextlib.suppress(AppServerError, OSError, RuntimeError):
            self._write(reply)

    def push(self, item: Notification) -> None:
        """Queue a notification (the server's, or an event of the client's own such as
        ``$exit``), counted in :attr:`arrived`."""
        self.arrived += 1
        self.notifications.put_nowait(item)

    async def _read_stdout(self, leftover: bytes = b"") -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stream = self._proc.stdout
        try:
            if self.via_proxy:
                await self._read_frames(stream, leftover)
            else:
                while line := await stream.readline():
                    self._dispatch(line)
        except (ValueError, OSError) as exc:  # a line over the limit, a broken pipe
            log.warning("reading codex app-server output failed: %s", exc)
        await self._proc.wait()
        self._fail_pending(AppServerError(self._gone()))
        self.push(("$exit", {"code": self._proc.returncode}))

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while line := await self._proc.stderr.readline():
            text = line.decode("utf-8", "replace").strip()
            if text:
                self._stderr.append(text[:300])

    async def _read_frames(self, stream: asyncio.StreamReader, leftover: bytes) -> None:
        reader = wsframe.FrameReader()
        chunk = leftover
        while True:
            for frame in reader.feed(chunk):
                if frame.opcode == wsframe.TEXT:
                    self._dispatch(frame.payload)
                elif frame.opcode == wsframe.PING and self._proc and self._proc.stdin:
                    self._proc.stdin.write(wsframe.encode(frame.payload, wsframe.PONG))
                elif frame.opcode == wsframe.CLOSE:
                    return
            chunk = await stream.read(65536)
            if not chunk:
                return

    def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            log.warning("codex app-server wrote a line that is not JSON: %.120r", line)
            return
        if not isinstance(message, dict):
            return
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            if "id" in message:
                self._server_request(message["id"], method, params)
            else:
                self.push((method, params))
            return
        request_id = message.get("id")
        pending = self._pending.get(request_id) if isinstance(request_id, int) else None
        if pending is None or pending[1].done():
            return
        method, future = pending
        error = message.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            future.set_exception(RpcError(method, code if isinstance(code, int) else None,
                                          str(error.get("message") or "error")))
        else:
            future.set_result((message.get("result"), self.arrived))

    def _server_request(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        self.respond(request_id, error={
            "code": METHOD_NOT_FOUND,
            "message": f"Goalkeeper cannot answer {method}; open the thread in Codex",
        })
        if self.on_request is not None:
            self.on_request(method, params)

    def _fail_pending(self, error: Exception) -> None:
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(error)


async def finish(work: Awaitable[T]) -> T:
    """Run ``work`` (a close, a reap) to its end even when the caller is being cancelled — a
    shutdown that cancels a read must not leave a codex process behind — then let the
    cancellation go on."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await task
        raise


async def _exited(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    try:
        async with asyncio.timeout(timeout):
            await proc.wait()
        return True
    except TimeoutError:
        return False


def _signal_group(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    """Signal the server's process group — only while the server itself is not yet reaped,
    so the group id cannot have been reused by anything that is not ours."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
