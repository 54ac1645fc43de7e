"""Going through the shared app-server: the WebSocket codec of ``codex app-server proxy``, telling
holders apart, and letting go of a shared server without touching its turns."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from core.providers.codex import wsframe
from core.providers.codex.liveness import Holder


def unmask(frame: bytes) -> tuple[int, bytes]:
    first, second = frame[0], frame[1]
    assert second & 0x80, "client frames are masked"
    size, offset = second & 0x7F, 2
    if size == 126:
        size, offset = struct.unpack(">H", frame[2:4])[0], 4
    elif size == 127:
        size, offset = struct.unpack(">Q", frame[2:10])[0], 10
    mask = frame[offset:offset + 4]
    body = frame[offset + 4:offset + 4 + size]
    return first & 0x0F, bytes(b ^ mask[i & 3] for i, b in enumerate(body))


@pytest.mark.parametrize("size", [0, 5, 125, 126, 65535, 65536, 300_000])
def test_client_frames_are_masked_and_sized(size):
    payload = bytes(i % 251 for i in range(size))
    assert unmask(wsframe.encode(payload)) == (wsframe.TEXT, payload)


def server_frame(payload: bytes, opcode: int = wsframe.TEXT, final: bool = True) -> bytes:
    size = len(payload)
    head = bytes([(0x80 if final else 0) | opcode])
    if size < 126:
        head += bytes([size])
    elif size < 1 << 16:
        head += bytes([126]) + struct.pack(">H", size)
    else:
        head += bytes([127]) + struct.pack(">Q", size)
    return head + payload


def test_frames_split_anywhere_and_fragments_are_joined():
    stream = (server_frame(b'{"a":1}') + server_frame(b'{"b"', final=False)
              + server_frame(b':2}', opcode=0) + server_frame(b"hi", wsframe.PING)
              + server_frame(b"x" * 70_000))
    reader = wsframe.FrameReader()
    frames = []
    for i in range(0, len(stream), 7):
        frames += reader.feed(stream[i:i + 7])
    assert [(f.opcode, f.payload) for f in frames] == [
        (wsframe.TEXT, b'{"a":1}'), (wsframe.TEXT, b'{"b":2}'), (wsframe.PING, b"hi"),
        (wsframe.TEXT, b"x" * 70_000)]


def test_a_refused_upgrade_and_a_stray_continuation_are_errors():
    request, key = wsframe.handshake()
    assert request.startswith(b"GET / HTTP/1.1") and key.encode() in request
    wsframe.check_upgrade(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")
    with pytest.raises(wsframe.FrameError):
        wsframe.check_upgrade(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    with pytest.raises(wsframe.FrameError):
        wsframe.FrameReader().feed(server_frame(b"x", opcode=0))


def test_holders_are_told_apart_by_their_command_line():
    daemon = Holder(1, "codex", Path("x"),
                    ("/c/codex", "app-server", "--listen", "unix://", "--managed-daemon"))
    tui = Holder(2, "codex", daemon.path, ("/c/codex", "resume", "019f"))
    plain = Holder(3, "codex", daemon.path, ("/c/codex", "app-server"))
    assert daemon.shared_server and not daemon.tui
    assert tui.tui and not tui.shared_server
    assert not plain.shared_server and not plain.tui


@pytest.mark.asyncio
async def test_letting_go_of_the_shared_server_never_interrupts_its_turn():
    import asyncio

    from core.providers.codex.hosted import HostedRun

    class Server:
        via_proxy, running, pid = True, True, None

        def __init__(self) -> None:
            self.sent: list[str] = []

        async def request(self, method, params=None, timeout=None):
            self.sent.append(method)
            return {}

        async def close(self, grace=2.0):
            self.running = False

    class Ctx:
        finished = staticmethod(lambda goal_id: None)

    server = Server()
    run = HostedRun(Ctx(), "codex:t", 1, "t", server)  # type: ignore[arg-type]
    run.turn_id = "turn-1"
    run._task = asyncio.ensure_future(asyncio.sleep(30))
    await run.stop()
    assert server.sent == [] and not server.running
    server.via_proxy = False  # a server of Goalkeeper's own: its turn is interrupted first
    server.running = True
    run._task = asyncio.ensure_future(asyncio.sleep(30))
    await run.stop()
    assert server.sent == ["turn/interrupt"]


def test_a_thread_open_in_the_users_terminal_says_what_to_do():
    from core.providers.codex.runner import held_by

    tui = Holder(7, "codex", Path("x.lock"), ("/c/codex", "resume", "019f"))
    text = held_by([tui], "019f")
    assert "codex (pid 7)" in text and "/goal resume" in text and "quit it" in text
    other = held_by([Holder(8, "codex", Path("x.lock"), ("/c/codex", "app-server"))], "019f")
    assert "another Codex process" in other and "pid 8" in other


@pytest.mark.asyncio
async def test_a_close_is_finished_even_when_its_caller_is_cancelled():
    import asyncio

    from core.providers.codex.rpc import finish

    done: list[str] = []

    async def close() -> None:
        await asyncio.sleep(0.05)
        done.append("closed")

    async def reader() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            await finish(close())

    task = asyncio.ensure_future(reader())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert done == ["closed"]  # reaped before the cancellation went on
