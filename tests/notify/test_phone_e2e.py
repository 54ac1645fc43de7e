"""Answering from the phone, end to end (issue 23): a host subscribed to its command topic on an
ntfy-compatible server on 127.0.0.1 (tests/support/ntfy.py), the phone played by POSTs to it."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.host import Host
from core.models import GoalState, HistoryRow, PauseReason
from core.notify import phone
from core.notify.listen import ListenState
from core.paths import Paths
from core.settings import Settings
from tests.support.fakes import FakeProvider, until
from tests.support.notify import drive
from tests.support.ntfy import NtfyServer

GOAL = "fake:g"


@pytest.fixture
def ntfy() -> Iterator[NtfyServer]:
    server = NtfyServer().start()
    yield server
    server.stop()


def phone_settings(ntfy: NtfyServer, **kw: Any) -> Settings:
    return Settings(notify_ntfy_url=f"{ntfy.url}/goals", phone_commands=True,
                    resume_jitter_seconds=0, **kw)


@pytest_asyncio.fixture
async def host(paths: Paths, clock: FakeClock, fake: FakeProvider, ntfy: NtfyServer,
               memory_keyring: Any) -> AsyncIterator[Host]:
    fake.observe(GOAL, GoalState.PAUSED, reason=PauseReason.USER)
    started = Host(paths, phone_settings(ntfy), [fake], "daemon", clock, random.Random(1))
    await started.start()
    try:
        await until(lambda: started.phone.state is ListenState.SUBSCRIBED)
        yield started
    finally:
        await started.stop()


def key_of(memory_keyring: Any) -> str:
    return str(memory_keyring.entries[("Goalkeeper", phone.PHONE_KEY)])


def topic(memory_keyring: Any) -> str:
    return phone.topic_for(key_of(memory_keyring))


async def refused_rows(host: Host) -> list[HistoryRow]:
    return [r for r in await host.engine.reads.history(limit=500) if r.event == "phone_refused"]


@pytest.mark.asyncio
async def test_a_signed_resume_now_resumes_the_goal_once(
        host: Host, ntfy: NtfyServer, clock: FakeClock, fake: FakeProvider,
        memory_keyring: Any) -> None:
    body = phone.sign(key_of(memory_keyring), GOAL, "resume", clock.now(), timedelta(minutes=30))
    ntfy.state.publish(topic(memory_keyring), body)
    await until(lambda: host.engine.goals[GOAL].state is GoalState.RUNNING)
    assert [g for g, _ in fake.resume_calls] == [GOAL]
    rows = await host.engine.reads.history(GOAL)
    asked = [r for r in rows if r.event == "resume_requested"]
    assert asked and asked[0].origin == "phone"
    assert host.phone.accepted == 1 and host.phone.refused == 0
    # a replay of the very same message: refused and recorded, nothing more is resumed
    ntfy.state.publish(topic(memory_keyring), body)
    await until(lambda: host.phone.refused == 1)
    [row] = await refused_rows(host)
    assert row.goal == GOAL and "replayed" in (row.reason or "") and row.origin == "phone"
    assert [g for g, _ in fake.resume_calls] == [GOAL]


@pytest.mark.asyncio
async def test_expired_forged_and_unknown_goal_commands_do_nothing_and_are_recorded(
        host: Host, ntfy: NtfyServer, clock: FakeClock, fake: FakeProvider,
        memory_keyring: Any) -> None:
    key, now = key_of(memory_keyring), clock.now()
    expired = phone.sign(key, GOAL, "resume", now - timedelta(hours=1), timedelta(minutes=30))
    forged = phone.sign("0" * 64, GOAL, "resume", now, timedelta(minutes=30))
    tampered = json.loads(phone.sign(key, "fake:other", "resume", now, timedelta(minutes=30)))
    tampered["goal"] = GOAL  # signed for another goal, re-addressed
    unknown = phone.sign(key, "fake:nobody", "resume", now, timedelta(minutes=30))
    not_allowed = phone.sign(key, GOAL, "skip", now, timedelta(minutes=30))
    for message in (expired, forged, json.dumps(tampered), unknown, not_allowed, "hello"):
        ntfy.state.publish(topic(memory_keyring), message)
    await until(lambda: host.phone.refused == 6)
    reasons = [r.reason or "" for r in await refused_rows(host)]
    assert len(reasons) == 6
    assert any(r.startswith("expired") for r in reasons)
    assert sum("bad signature" in r for r in reasons) == 2
    assert any("unknown goal" in r for r in reasons)
    assert any("may not skip" in r for r in reasons)
    assert any("not JSON" in r for r in reasons)
    assert fake.resume_calls == [] and host.engine.goals[GOAL].state is GoalState.PAUSED
    assert host.phone.accepted == 0


@pytest.mark.asyncio
async def test_the_host_reconnects_after_the_server_restarts_and_takes_nothing_twice(
        host: Host, ntfy: NtfyServer, clock: FakeClock, fake: FakeProvider,
        memory_keyring: Any) -> None:
    key = key_of(memory_keyring)
    ntfy.state.publish(topic(memory_keyring), phone.sign(
        key, GOAL, "keep-paused", clock.now(), timedelta(minutes=30)))
    await until(lambda: host.phone.accepted == 1)
    ntfy.stop()
    await until(lambda: host.phone.state is ListenState.RECONNECTING)
    assert host.phone.status()["state"] == "reconnecting"
    # a command published while the host is away from the server
    ntfy.state.publish(topic(memory_keyring), phone.sign(
        key, GOAL, "resume", clock.now(), timedelta(minutes=30)))
    ntfy.start()  # the same port, the same cache
    await drive(clock, lambda: host.phone.state is ListenState.SUBSCRIBED)
    await until(lambda: host.phone.accepted == 2)
    await until(lambda: host.engine.goals[GOAL].state is GoalState.RUNNING)
    assert [g for g, _ in fake.resume_calls] == [GOAL]
    assert host.phone.refused == 0  # the keep-paused message was not taken again
    assert "since=m" in ntfy.state.subscriptions[-1]
    assert host.engine.goals[GOAL].auto_resume is False


@pytest.mark.asyncio
async def test_a_notification_carries_correctly_signed_buttons(
        host: Host, ntfy: NtfyServer, clock: FakeClock, memory_keyring: Any) -> None:
    host.notifications.offer(HistoryRow(at=clock.now(), goal=GOAL, event="gave_up",
                                        reason="attempt cap reached (3/3)"))
    await until(lambda: bool(ntfy.state.published))
    [published] = ntfy.state.published
    actions = published["actions"]
    assert [a["label"] for a in actions] == ["Resume now", "Keep paused"]
    for action in actions:
        assert action["action"] == "http" and action["method"] == "POST"
        assert action["url"] == f"{ntfy.url}/{topic(memory_keyring)}"
        found = phone.check(action["body"], key_of(memory_keyring), clock.now(),
                            ("resume", "keep-paused"))
        assert isinstance(found, phone.PhoneCommand) and found.goal == GOAL
    # tapping "Resume now" publishes exactly that body to the command topic
    ntfy.state.publish(topic(memory_keyring), actions[0]["body"])
    await until(lambda: host.engine.goals[GOAL].state is GoalState.RUNNING)


@pytest.mark.asyncio
async def test_a_restarted_host_still_refuses_a_replay(
        paths: Paths, clock: FakeClock, fake: FakeProvider, ntfy: NtfyServer,
        memory_keyring: Any) -> None:
    fake.observe(GOAL, GoalState.PAUSED, reason=PauseReason.USER)
    first = Host(paths, phone_settings(ntfy), [fake], "daemon", clock, random.Random(1))
    await first.start()
    await until(lambda: first.phone.state is ListenState.SUBSCRIBED)
    body = phone.sign(key_of(memory_keyring), GOAL, "keep-paused", clock.now(),
                      timedelta(minutes=30))
    ntfy.state.publish(topic(memory_keyring), body)
    await until(lambda: first.phone.accepted == 1)
    await first.stop()
    second = Host(paths, phone_settings(ntfy), [fake], "daemon", clock, random.Random(2))
    await second.start()
    try:
        await until(lambda: second.phone.state is ListenState.SUBSCRIBED)
        result = await second.phone.take(body)  # the same message, delivered again
        assert isinstance(result, phone.Refusal) and "replayed" in result.reason
    finally:
        await second.stop()


@pytest.mark.asyncio
async def test_feature_off_means_no_subscription_and_no_buttons(
        paths: Paths, clock: FakeClock, fake: FakeProvider, ntfy: NtfyServer,
        memory_keyring: Any) -> None:
    fake.observe(GOAL, GoalState.PAUSED, reason=PauseReason.USER)
    settings = Settings(notify_ntfy_url=f"{ntfy.url}/goals", resume_jitter_seconds=0)
    off = Host(paths, settings, [fake], "daemon", clock, random.Random(1))
    await off.start()
    try:
        off.notifications.offer(HistoryRow(at=clock.now(), goal=GOAL, event="gave_up"))
        await until(lambda: bool(ntfy.state.published))
        assert "actions" not in ntfy.state.published[0]
        assert ntfy.state.subscriptions == []
        assert off.phone.state is ListenState.OFF and off.phone.signer() is None
        assert ("Goalkeeper", phone.PHONE_KEY) not in memory_keyring.entries
    finally:
        await off.stop()


@pytest.mark.asyncio
async def test_status_shows_the_subscription(
        host: Host, ntfy: NtfyServer, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, memory_keyring: Any) -> None:
    from core.cli import main

    monkeypatch.setenv("GOALKEEPER_NOTIFY_NTFY_URL", f"{ntfy.url}/goals")
    monkeypatch.setenv("GOALKEEPER_PHONE_COMMANDS", "true")
    code = await asyncio.to_thread(main, ["status", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["phone"]["state"] == "subscribed"
    assert data["phone"]["server"] == ntfy.url and data["phone"]["refused"] == 0
    code = await asyncio.to_thread(main, ["status"])
    out = capsys.readouterr().out
    assert "Answers from the phone: subscribed" in out
    assert topic(memory_keyring) not in out and key_of(memory_keyring) not in out
    ntfy.stop()
    await until(lambda: host.phone.state is ListenState.RECONNECTING)
    await asyncio.to_thread(main, ["status"])
    assert "Answers from the phone: reconnecting" in capsys.readouterr().out


def test_status_without_a_host_says_nobody_listens(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from core.cli import main

    assert main(["status"]) == 0 and "phone" not in capsys.readouterr().out
    monkeypatch.setenv("GOALKEEPER_PHONE_COMMANDS", "1")
    assert main(["status"]) == 0
    assert "Answers from the phone: not listening — no host is listening" in (
        capsys.readouterr().out)
