"""`goalkeeper notify test`, `secret set ntfy-token` and the channels in `goalkeeper status`."""

from __future__ import annotations

import asyncio
import io
import json
import random
import sys
from typing import Any

import pytest

from core.cli import main
from core.clock import FakeClock
from core.host import Host
from core.models import HistoryRow
from core.paths import Paths
from core.settings import Settings
from tests.real.mockhttp import MockServer, Reply
from tests.support.fakes import FakeProvider, until
from tests.support.notify import Script


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_notify_test_with_a_token_from_the_keyring(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        server: MockServer, memory_keyring: Any) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("tk_from_the_keyring\n"))
    code, out, _ = cli(capsys, "secret", "set", "ntfy-token")
    assert code == 0 and "tk_from" not in out
    assert memory_keyring.entries[("Goalkeeper", "ntfy-token")] == "tk_from_the_keyring"
    monkeypatch.setenv("GOALKEEPER_NOTIFY_NTFY_URL", f"{server.url}/goals")
    monkeypatch.setenv("GOALKEEPER_NOTIFY_WEBHOOK_URL", f"{server.url}/hook")
    code, out, _ = cli(capsys, "notify", "test")
    assert code == 0, out
    assert out.splitlines() == ["ntfy: test message delivered", "webhook: test message delivered"]
    to_ntfy, to_hook = server.requests
    assert to_ntfy.headers["authorization"] == "Bearer tk_from_the_keyring"
    assert to_hook.json()["kind"] == "test" and "x-goalkeeper-signature" not in to_hook.headers
    code, out, _ = cli(capsys, "secret", "list", "--json")
    assert json.loads(out) == [{"name": "ntfy-token", "present": True}]


def test_notify_test_says_what_failed_and_exits_1(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        server: MockServer, script: Script, memory_keyring: Any) -> None:
    script.replies = [Reply.json({"code": 40101, "error": "unauthorized"}, 401)]
    monkeypatch.setenv("GOALKEEPER_NOTIFY_NTFY_URL", f"{server.url}/goals")
    code, out, _ = cli(capsys, "notify", "test", "--json")
    assert code == 1
    [report] = json.loads(out)
    assert report == {"channel": "ntfy", "delivered": False, "attempts": 1,
                      "reason": "HTTP 401 Unauthorized — check the token: "
                                "`goalkeeper secret set ntfy-token`"}


def test_notify_test_without_a_channel_is_a_usage_error(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = cli(capsys, "notify", "test")
    assert code == 2 and "notify_ntfy_url or notify_webhook_url" in err
    monkeypatch.setenv("GOALKEEPER_NOTIFY_NTFY_URL", "https://ntfy.example.org/goals")
    code, _, err = cli(capsys, "notify", "test", "--channel", "webhook")
    assert code == 2 and "the webhook channel is not configured" in err
    monkeypatch.setenv("GOALKEEPER_NOTIFY_NTFY_URL", "https://me:pw@ntfy.example.org/goals")
    code, _, err = cli(capsys, "notify", "test")
    assert code == 2 and "must not contain a user or password" in err


def test_status_without_a_host_says_nothing_is_sent(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = cli(capsys, "status")
    assert code == 0 and "Notifications: desktop only" in out
    monkeypatch.setenv("GOALKEEPER_NOTIFY_WEBHOOK_URL", "https://hooks.example.org/T0/SECRET")
    code, out, _ = cli(capsys, "status", "--json")
    [channel] = json.loads(out)["notifications"]
    assert channel["target"] == "https://hooks.example.org/…" and channel["state"] == "idle"
    assert channel["reason"] == "no host is running: nothing is sent"
    assert "SECRET" not in out


@pytest.mark.asyncio
async def test_status_shows_the_running_hosts_failing_channel(
        capsys: pytest.CaptureFixture[str], paths: Paths, clock: FakeClock,
        fake: FakeProvider, server: MockServer, script: Script, memory_keyring: Any) -> None:
    script.replies = [Reply.json({}, 400)]
    settings = Settings(notify_webhook_url=f"{server.url}/hook/SECRET", resume_jitter_seconds=0)
    host = Host(paths, settings, [fake], "daemon", clock, random.Random(1))
    await host.start()
    try:
        host.notifications.offer(HistoryRow(at=clock.now(), goal="g", event="failed"))
        await until(lambda: host.notifications.health()[0].failing)
        code, out, _ = await asyncio.to_thread(cli, capsys, "status", "--json")
        [channel] = json.loads(out)["notifications"]
        assert code == 0 and channel["state"] == "failing" and channel["failed"] == 1
        assert channel["reason"] == "HTTP 400 Bad Request"
        assert channel["target"] == f"{server.url}/…"
        code, out, _ = await asyncio.to_thread(cli, capsys, "status")
        line = next(line for line in out.splitlines() if line.strip().startswith("webhook"))
        assert "FAILING since" in line and "HTTP 400 Bad Request (1 not delivered)" in line
        assert "SECRET" not in out
    finally:
        await host.stop()
