"""Delivery against a local server: retries per the retry table, time-outs, health, logging."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import random
import socket
from datetime import UTC, datetime, timedelta

import pytest

from core.clock import FakeClock
from core.notices import ChannelState, Kind, Notification
from core.notify.channels import SIGNATURE_HEADER, WEBHOOK_KEYS, NtfyChannel
from core.notify.delivery import ChannelWorker
from core.notify.retrying import DeliveryPolicy
from core.secrets import SecretStoreError
from tests.real.mockhttp import MockServer, Reply
from tests.support.notify import HANG, RigFactory, Script, drive, ntfy, reader_of, webhook

AT = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def note(kind: Kind = Kind.RESUMED, goal: str = "codex:abc") -> Notification:
    return Notification(kind, f"{kind.value}: Refactor", "It happened.", AT, goal, "Refactor",
                        "codex")


def fail(status: int, **headers: str) -> Reply:
    return Reply.json({"error": "nope"}, status, headers)


@pytest.mark.asyncio
async def test_what_ntfy_and_the_webhook_receive(server: MockServer, rig: RigFactory,
                                                 secrets: dict[str, str]) -> None:
    secrets.update({"ntfy-token": "tk_0123456789", "webhook-secret": "hook-key"})
    assert (await rig(ntfy(server)).worker.deliver(note(Kind.GAVE_UP))).delivered
    assert (await rig(webhook(server)).worker.deliver(note(Kind.DONE))).delivered
    to_ntfy, to_hook = server.requests
    assert (to_ntfy.method, to_ntfy.path) == ("POST", "/")
    assert to_ntfy.headers["authorization"] == "Bearer tk_0123456789"
    sent = to_ntfy.json()
    assert (sent["topic"], sent["priority"], sent["title"]) == ("goals-7f3a", 4,
                                                               "gave_up: Refactor")
    assert {"goalkeeper", "gave_up", "codex", "box"} <= set(sent["tags"])
    assert (to_hook.method, to_hook.path) == ("POST", "/hook/T000/B000/XXXX")
    assert to_hook.headers["content-type"] == "application/json"
    payload = to_hook.json()
    assert tuple(payload) == WEBHOOK_KEYS and payload["kind"] == "done"
    assert payload["at"] == "2026-07-07T12:00:00Z" and payload["host"] == "box"
    # the receiver's check, on the bytes it received
    mac = hmac.new(b"hook-key", to_hook.body, hashlib.sha256).hexdigest()
    assert to_hook.headers[SIGNATURE_HEADER.lower()] == f"sha256={mac}"


@pytest.mark.asyncio
async def test_503_is_retried_with_full_jitter_backoff(server: MockServer, script: Script,
                                                       rig: RigFactory, clock: FakeClock) -> None:
    script.replies = [fail(503), fail(503), Reply.json({"id": "x"})]
    r = rig(webhook(server))
    r.worker.start()
    r.worker.submit(note())
    waits = []
    for attempts in (1, 2):
        await drive(clock, lambda n=attempts: len(server.requests) == n and clock.sleepers > 0)
        waits.append(clock.next_wakeup())
        clock.advance(waits[-1] or 0)
    await drive(clock, lambda: r.worker.health.state is ChannelState.OK)
    assert 0 <= waits[0] <= 1 and 0 <= waits[1] <= 2  # type: ignore[operator]
    bodies = {req.body for req in server.requests}
    assert len(server.requests) == 3 and len(bodies) == 1  # the same delivery, retried
    ids = {req.headers["x-goalkeeper-delivery"] for req in server.requests}
    assert len(ids) == 1
    assert [h.state for h in r.healths] == [ChannelState.RETRYING, ChannelState.OK]
    assert r.worker.health.delivered == 1 and r.worker.health.failed == 0
    await r.worker.stop(0)


@pytest.mark.asyncio
@pytest.mark.parametrize(("status", "after", "low", "high"),
                         [(429, "7", 7, 7.7), (503, "3", 3, 3.3), (403, "20", 20, 22),
                          (429, "100", 100, 105)])
async def test_a_retry_after_is_waited_exactly_plus_at_most_ten_percent(
        server: MockServer, script: Script, rig: RigFactory, clock: FakeClock, status: int,
        after: str, low: float, high: float) -> None:
    script.replies = [fail(status, **{"Retry-After": after}), Reply.json({"id": "x"})]
    r = rig(ntfy(server))
    r.worker.start()
    r.worker.submit(note())
    await drive(clock, lambda: clock.sleepers > 0)
    wait = clock.next_wakeup()
    assert wait is not None and low <= wait <= high
    clock.advance(wait)
    await drive(clock, lambda: r.worker.health.state is ChannelState.OK)
    assert len(server.requests) == 2
    await r.worker.stop(0)


@pytest.mark.asyncio
@pytest.mark.parametrize(("status", "reason"), [
    (400, "HTTP 400 Bad Request"), (404, "HTTP 404 Not Found — check the URL"),
    (401, "HTTP 401 Unauthorized — check the token: `goalkeeper secret set ntfy-token`"),
    (403, "HTTP 403 Forbidden — check the token"), (413, "HTTP 413"),
    (301, "redirects are not followed")])
async def test_a_4xx_is_never_retried_and_fails_the_channel(
        server: MockServer, script: Script, rig: RigFactory, status: int, reason: str) -> None:
    script.replies = [fail(status, Location="https://elsewhere.example/")]
    r = rig(ntfy(server))
    report = await r.worker.deliver(note())
    assert not report.delivered and report.attempts == 1
    assert len(server.requests) == 1
    assert r.worker.health.state is ChannelState.FAILING
    assert reason in (r.worker.health.reason or "")
    assert r.worker.health.failing_since == AT


@pytest.mark.asyncio
async def test_retries_are_bounded_then_the_channel_fails(server: MockServer, script: Script,
                                                          rig: RigFactory,
                                                          clock: FakeClock) -> None:
    script.replies = [fail(500)]
    r = rig(webhook(server))
    r.worker.start()
    r.worker.submit(note())
    await drive(clock, lambda: r.worker.health.state is ChannelState.FAILING)
    assert len(server.requests) == 4  # 1 + 3 retries
    assert r.worker.health.reason == "HTTP 500 Internal Server Error (4 attempts)"
    since = r.worker.health.failing_since
    r.worker.submit(note(Kind.FAILED))
    await drive(clock, lambda: r.worker.health.failed == 2)
    assert r.worker.health.failing_since == since  # still the same failing episode
    await r.worker.stop(0)


@pytest.mark.asyncio
async def test_a_server_that_never_answers_times_out(server: MockServer, script: Script,
                                                     rig: RigFactory, clock: FakeClock) -> None:
    script.replies = [HANG]
    r = rig(webhook(server), timeout=0.2)
    r.worker.start()
    r.worker.submit(note())
    await drive(clock, lambda: r.worker.health.state is ChannelState.RETRYING)
    assert r.worker.health.reason == "no answer within 0.2 s; retrying"
    await drive(clock, lambda: r.worker.health.state is ChannelState.FAILING)
    assert r.worker.health.reason == "no answer within 0.2 s (4 attempts)"
    assert len(server.requests) == 4
    await r.worker.stop(0)


@pytest.mark.asyncio
async def test_connection_refused_is_retried_then_fails(rig: RigFactory,
                                                        clock: FakeClock) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    r = rig(NtfyChannel("ntfy", f"http://127.0.0.1:{port}/topic", Kind.SCHEDULED))
    r.worker.start()
    r.worker.submit(note())
    await drive(clock, lambda: r.worker.health.state is ChannelState.FAILING)
    assert r.worker.health.reason == "connection refused (4 attempts)"
    await r.worker.stop(0)


@pytest.mark.asyncio
async def test_a_long_retry_after_is_not_waited_in_process(server: MockServer, script: Script,
                                                           rig: RigFactory,
                                                           clock: FakeClock) -> None:
    script.replies = [fail(429, **{"Retry-After": "600"}), Reply.json({"id": "x"})]
    r = rig(ntfy(server))
    report = await r.worker.deliver(note())
    assert not report.delivered and clock.sleepers == 0
    assert report.rest_until is not None
    assert AT + timedelta(seconds=600) <= report.rest_until <= AT + timedelta(seconds=660)
    assert "the server asked to wait 600 s" in (r.worker.health.reason or "")
    skipped = await r.worker.deliver(note(Kind.GAVE_UP))  # resting: not even tried
    assert not skipped.delivered and skipped.attempts == 0 and len(server.requests) == 1
    clock.advance(661)
    assert (await r.worker.deliver(note(Kind.DONE))).delivered
    assert len(server.requests) == 2 and r.worker.health.state is ChannelState.OK


@pytest.mark.asyncio
async def test_x_should_retry_and_a_malformed_retry_after(
        server: MockServer, script: Script, rig: RigFactory, clock: FakeClock,
        caplog: pytest.LogCaptureFixture) -> None:
    script.replies = [fail(503, **{"x-should-retry": "false"})]
    r = rig(webhook(server))
    assert (await r.worker.deliver(note())).attempts == 1
    script.replies = [fail(409, **{"x-should-retry": "true"}), Reply.json({})]
    r.worker.start()
    r.worker.submit(note())
    await drive(clock, lambda: r.worker.health.state is ChannelState.OK)
    assert len(server.requests) == 3
    caplog.set_level(logging.INFO, logger="core.notify")
    script.replies = [fail(429, **{"Retry-After": "soon"}), fail(429, **{"Retry-After": "x"}),
                      Reply.json({})]
    r.worker.submit(note())
    await drive(clock, lambda: len(server.requests) == 6 and r.worker.health.delivered == 2)
    assert caplog.text.count("malformed Retry-After") == 1
    await r.worker.stop(0)


@pytest.mark.asyncio
async def test_failures_are_logged_once_per_reason_and_nothing_secret_anywhere(
        server: MockServer, script: Script, rig: RigFactory, secrets: dict[str, str],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="core.notify")
    secrets.update({"ntfy-token": "tk_TOPSECRET", "webhook-secret": "HMACKEY"})
    hook = rig(webhook(server, path="/hook/SLACKTOKEN"))
    topic = rig(ntfy(server, path="/private-topic-123"))
    script.replies = [fail(400)]
    for _ in range(3):
        await hook.worker.deliver(note())
        await topic.worker.deliver(note())
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2  # one per channel for HTTP 400, not six
    script.replies = [fail(401)]
    await hook.worker.deliver(note())
    script.replies = [Reply.json({})]
    await hook.worker.deliver(note())
    assert "webhook: delivering again" in caplog.text
    script.replies = [fail(400)]
    await hook.worker.deliver(note())  # a new episode: said again
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 4 and "HTTP 401" in warnings[2]
    shown = caplog.text + json.dumps([hook.worker.health.to_json(),
                                      topic.worker.health.to_json()])
    for secret in ("tk_TOPSECRET", "HMACKEY", "SLACKTOKEN", "private-topic-123"):
        assert secret not in shown
    assert f"{server.url}/…" in shown


@pytest.mark.asyncio
async def test_a_failing_keyring_is_reported_and_nothing_is_sent(server: MockServer,
                                                                 clock: FakeClock) -> None:
    async def broken(name: str) -> str | None:
        raise SecretStoreError("the keyring did not answer within 10 s")

    worker = ChannelWorker(ntfy(server), DeliveryPolicy(), clock, host="box", secrets=broken,
                           rng=random.Random(1), on_health=lambda _h: None)
    report = await worker.deliver(note())
    assert not report.delivered and report.attempts == 0 and server.requests == []
    assert report.reason == ("cannot read ntfy-token from the keyring: the keyring did not "
                             "answer within 10 s")


@pytest.mark.asyncio
async def test_the_queue_keeps_order_and_drops_the_oldest_when_full(
        server: MockServer, clock: FakeClock, secrets: dict[str, str]) -> None:
    worker = ChannelWorker(webhook(server), DeliveryPolicy(), clock, host="box",
                           secrets=reader_of(secrets), rng=random.Random(1),
                           on_health=lambda _h: None, max_queued=2)
    first = worker.submit_and_report(note(goal="a"))
    worker.submit(note(goal="b"))
    worker.submit(note(goal="c"))
    assert (await first).reason == "dropped: the queue was full"
    worker.start()
    await drive(clock, lambda: worker.health.delivered == 2)
    assert [r.json()["goal"] for r in server.requests] == ["b", "c"]
    assert worker.health.dropped == 1
    await worker.stop(1)


@pytest.mark.asyncio
async def test_a_failing_channel_stays_failing_while_the_next_one_is_retried(
        server: MockServer, script: Script, rig: RigFactory, clock: FakeClock) -> None:
    script.replies = [fail(400), fail(503), Reply.json({})]
    r = rig(webhook(server))
    await r.worker.deliver(note())
    assert r.worker.health.failing
    r.worker.start()
    r.worker.submit(note(Kind.DONE))
    await drive(clock, lambda: len(server.requests) == 2 and clock.sleepers > 0)
    assert r.worker.health.failing and r.worker.health.reason == "HTTP 400 Bad Request"
    await drive(clock, lambda: r.worker.health.state is ChannelState.OK)
    assert [h.state for h in r.healths] == [ChannelState.FAILING, ChannelState.OK]
    await r.worker.stop(0)
