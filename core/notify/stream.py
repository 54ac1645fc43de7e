"""ntfy's JSON stream, read on the loop: ``GET <server>/<topic>/json?since=…``, one JSON object
per line (docs.ntfy.sh/subscribe/api, "Subscribe as JSON stream"), kept open until either side
closes it.

Standard library only, like :mod:`core.notify.http`, but on asyncio streams rather than urllib in
a thread: a subscription waits for hours, and a thread blocked in ``readline`` cannot be
cancelled when the host stops. The request is HTTP/1.0, so the body arrives as is until the server
closes (a server that answers HTTP/1.1 with ``Transfer-Encoding: chunked`` is decoded too). HTTPS
uses the system's certificates; proxies are not used (the stream is outbound only either way).
Errors are :class:`StreamError` whose text never contains the URL (its topic is a secret) or a
header.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Mapping
from urllib.parse import urlsplit

from core.i18n import N_

MAX_LINE_BYTES = 64 * 1024
MAX_HEADER_LINES = 100


class StreamError(Exception):
    """The stream could not be opened or broke (secret-free)."""


class JsonStream:
    """One open subscription: :meth:`lines` until the server closes it; :meth:`close` to end."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 chunked: bool) -> None:
        self._reader = reader
        self._writer = writer
        self._chunked = chunked

    async def lines(self, idle: float) -> AsyncIterator[bytes]:
        """Each line of the body; ends when the server closes. Raises :class:`StreamError`
        when nothing (not even a keepalive) arrived for ``idle`` seconds."""
        raw = self._chunks() if self._chunked else self._plain()
        buffer = b""
        while True:
            try:
                chunk = await asyncio.wait_for(_next(raw), idle)
            except TimeoutError:
                raise StreamError(N_("nothing arrived for {seconds} s").format(
                    seconds=f"{idle:g}")) from None
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                yield line
            if len(buffer) > MAX_LINE_BYTES:
                raise StreamError(N_("a line longer than {n} bytes").format(n=MAX_LINE_BYTES))

    async def _plain(self) -> AsyncIterator[bytes]:
        while chunk := await self._reader.read(4096):
            yield chunk

    async def _chunks(self) -> AsyncIterator[bytes]:
        while True:
            size_line = await self._reader.readline()
            try:
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise StreamError(N_("a malformed chunked body")) from None
            if size == 0:
                return
            data = await self._reader.readexactly(size)
            await self._reader.readline()
            yield data

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError, ssl.SSLError, asyncio.CancelledError):
            await asyncio.wait_for(self._writer.wait_closed(), 2.0)


async def _next(chunks: AsyncIterator[bytes]) -> bytes:
    return await anext(chunks, b"")


async def open_stream(url: str, headers: Mapping[str, str], timeout: float) -> JsonStream:
    """Connect, send the GET, read the status and headers (within ``timeout``)."""
    parts = urlsplit(url)
    https = parts.scheme == "https"
    host = parts.hostname or ""
    port = parts.port or (443 if https else 80)
    context = ssl.create_default_context() if https else None
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=context, limit=MAX_LINE_BYTES), timeout)
    except TimeoutError:
        raise StreamError(N_("timed out connecting")) from None
    except ssl.SSLError as exc:
        raise StreamError(f"TLS failed ({exc.reason or 'handshake'})") from None
    except OSError as exc:
        raise StreamError(N_("cannot connect: {error}").format(
            error=exc.strerror or type(exc).__name__)) from None
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    head = [f"GET {target} HTTP/1.0", f"Host: {parts.netloc}",
            *(f"{k}: {v}" for k, v in headers.items())]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
    stream = JsonStream(reader, writer, False)
    try:
        chunked = await asyncio.wait_for(_read_head(reader), timeout)
    except BaseException:
        await stream.close()
        raise
    stream._chunked = chunked
    return stream


async def _read_head(reader: asyncio.StreamReader) -> bool:
    """The status line and the headers; whether the body is chunked."""
    try:
        status = (await reader.readline()).decode("latin-1").split()
    except (OSError, ValueError) as exc:
        raise StreamError(N_("cannot read the answer: {error}").format(
            error=type(exc).__name__)) from None
    if len(status) < 2 or not status[0].startswith("HTTP/") or not status[1].isdigit():
        raise StreamError(N_("not an HTTP answer"))
    code = int(status[1])
    chunked = False
    for _ in range(MAX_HEADER_LINES):
        line = (await reader.readline()).decode("latin-1").strip()
        if not line:
            break
        name, _sep, value = line.partition(":")
        if name.strip().lower() == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    if code in (401, 403):
        raise StreamError(N_("HTTP {code}: the server refused the subscription (check the "
                             "token: `goalkeeper secret set ntfy-token`)").format(code=code))
    if code != 200:
        raise StreamError(N_("HTTP {code}").format(code=code))
    return chunked
