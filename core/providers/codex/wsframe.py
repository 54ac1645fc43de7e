"""The WebSocket framing ``codex app-server proxy`` needs (RFC 6455, the client side only).

A shared app-server — ``codex app-server daemon`` — listens on a control socket
(``$CODEX_HOME/app-server-control/app-server-control.sock``) that speaks WebSocket.
``codex app-server proxy`` relays its stdio to that socket byte for byte, so a client talking
through it opens with the HTTP upgrade and then sends each JSON-RPC message as a masked text
frame and reads text frames back (observed on 0.169.0). This module is that codec and nothing
more: no extensions, no fragmentation on send; pings are answered by :class:`FrameReader`'s
caller.
"""

from __future__ import annotations

import base64
import os
import struct
from dataclasses import dataclass

TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA
#: a frame larger than this is refused (the server announces 16 MiB unfragmented)
MAX_FRAME = 256 << 20


class FrameError(ValueError):
    """The byte stream is not the WebSocket the proxy should speak."""


def handshake() -> tuple[bytes, str]:
    """The upgrade request, and the ``Sec-WebSocket-Key`` it carries."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = ("GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
    return request.encode(), key


def check_upgrade(head: bytes) -> None:
    """Raise unless ``head`` (the reply up to the blank line) switched protocols."""
    status = head.split(b"\r\n", 1)[0]
    if b" 101 " not in status + b" ":
        raise FrameError(f"the app-server control socket refused the upgrade: {status!r}")


def encode(payload: bytes, opcode: int = TEXT) -> bytes:
    """One final, masked client frame."""
    mask = os.urandom(4)
    size = len(payload)
    if size < 126:
        header = struct.pack(">BB", 0x80 | opcode, 0x80 | size)
    elif size < 1 << 16:
        header = struct.pack(">BBH", 0x80 | opcode, 0x80 | 126, size)
    else:
        header = struct.pack(">BBQ", 0x80 | opcode, 0x80 | 127, size)
    masked = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
    return header + mask + masked


@dataclass(frozen=True)
class Frame:
    opcode: int
    payload: bytes
    final: bool


class FrameReader:
    """Frames out of a byte stream, fed in chunks; continuation frames are joined."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._partial: tuple[int, bytearray] | None = None

    def feed(self, chunk: bytes) -> list[Frame]:
        self._buffer.extend(chunk)
        frames = []
        while (frame := self._next()) is not None:
            joined = self._join(frame)
            if joined is not None:
                frames.append(joined)
        return frames

    def _join(self, frame: Frame) -> Frame | None:
        if frame.opcode >= CLOSE:  # control frames are never fragmented
            return frame
        if frame.opcode != 0:
            self._partial = (frame.opcode, bytearray(frame.payload))
        elif self._partial is not None:
            self._partial[1].extend(frame.payload)
        else:
            raise FrameError("a continuation frame with nothing to continue")
        if not frame.final:
            return None
        opcode, payload = self._partial
        self._partial = None
        return Frame(opcode, bytes(payload), True)

    def _next(self) -> Frame | None:
        data = self._buffer
        if len(data) < 2:
            return None
        first, second = data[0], data[1]
        size, offset = second & 0x7F, 2
        if size == 126:
            if len(data) < 4:
                return None
            size, offset = struct.unpack(">H", data[2:4])[0], 4
        elif size == 127:
            if len(data) < 10:
                return None
            size, offset = struct.unpack(">Q", data[2:10])[0], 10
        if size > MAX_FRAME:
            raise FrameError(f"a {size}-byte frame is larger than {MAX_FRAME}")
        mask = b""
        if second & 0x80:  # servers do not mask, but accept it
            mask, offset = bytes(data[offset:offset + 4]), offset + 4
        if len(data) < offset + size:
            return None
        payload = bytes(data[offset:offset + size])
        if mask:
            payload = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
        del data[:offset + size]
        return Frame(first & 0x0F, payload, bool(first & 0x80))
