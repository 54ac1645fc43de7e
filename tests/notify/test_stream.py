"""ntfy's JSON stream client (core/notify/stream.py) against scripted answers on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import pytest_asyncio

from core.notify.stream import StreamError, open_stream

Answer = Callable[[asyncio.StreamWriter], Awaitable[None]]
Serve = Callable[[Answer], Awaitable[str]]


@pytest_asyncio.fixture
async def serve() -> AsyncIterator[Serve]:
    servers: list[asyncio.Server] = []
    requests: list[bytes] = []
    writers: list[asyncio.StreamWriter] = []

    async def start(answer: Answer) -> str:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writers.append(writer)
            try:
                requests.append(await reader.readuntil(b"\r\n\r\n"))
                await answer(writer)
                await writer.drain()
            finally:
                writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        servers.append(server)
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/gk-topic/json?since=5s"

    yield start
    for writer in writers:
        writer.close()
    for server in servers:
        server.close()
        await server.wait_closed()


async def collect(url: str, idle: float = 2.0) -> list[bytes]:
    stream = await open_stream(url, {"Authorization": "Bearer tk"}, 2.0)
    try:
        return [line async for line in stream.lines(idle)]
    finally:
        await stream.close()


@pytest.mark.asyncio
async def test_a_chunked_http11_answer_is_decoded_into_lines(serve: Serve) -> None:
    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for part in (b'{"event":"open"}\n{"ev', b'ent":"message","message":"x"}\n'):
            writer.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        writer.write(b"0\r\n\r\n")

    lines = await collect(await serve(answer))
    assert lines == [b'{"event":"open"}', b'{"event":"message","message":"x"}']


@pytest.mark.asyncio
async def test_a_plain_answer_streams_until_the_server_closes(serve: Serve) -> None:
    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: application/x-ndjson\r\n\r\na\nb\n")

    assert await collect(await serve(answer)) == [b"a", b"b"]


@pytest.mark.asyncio
@pytest.mark.parametrize("status,words", [(401, "refused the subscription"), (500, "HTTP 500")])
async def test_a_refusal_is_a_stream_error_without_the_url(serve: Serve, status: int,
                                                           words: str) -> None:
    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(f"HTTP/1.1 {status} No\r\nContent-Length: 0\r\n\r\n".encode())

    url = await serve(answer)
    with pytest.raises(StreamError) as caught:
        await collect(url)
    assert words in str(caught.value) and "gk-topic" not in str(caught.value)


@pytest.mark.asyncio
async def test_silence_longer_than_the_idle_limit_ends_the_stream(serve: Serve) -> None:
    async def answer(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.0 200 OK\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(1.0)

    with pytest.raises(StreamError, match=r"nothing arrived for 0\.2 s"):
        await collect(await serve(answer), idle=0.2)


@pytest.mark.asyncio
async def test_nobody_listening_is_a_stream_error() -> None:
    with pytest.raises(StreamError, match="cannot connect"):
        await open_stream("http://127.0.0.1:9/t/json", {}, 2.0)
