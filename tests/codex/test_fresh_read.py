"""The authoritative quota read through the fake ``codex app-server``: merges, time-box."""

from __future__ import annotations

import asyncio
import os
import time
from datetime import timedelta

import pytest

from core.models import Exactness
from core.providers.codex import rpc
from core.providers.codex.fresh_read import FreshReadError
from core.settings import Settings
from tests.codex.fakecodex import FakeCodex, rl
from tests.codex.fixtures import T0, epoch

H = timedelta(hours=1)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def server_pids(fake: FakeCodex) -> list[int]:
    return [e["pid"] for e in fake.invocations() if e["argv"] == ["app-server"]]


@pytest.mark.asyncio
async def test_fresh_read_asks_the_app_server_and_merges_sparse_updates(fake, make_codex):
    fake.script(rate_limits=[rl(100, epoch(T0 + H), 63, epoch(T0 + 50 * H),
                                reached="rate_limit_reached")],
                updates=[{"limitId": "codex", "secondary": {"usedPercent": 64}}])
    provider = make_codex()
    readings = {r.window_id: r for r in await provider.read_quotas(fresh=True)}
    assert readings["codex:5h"].used_percent == 100.0
    assert readings["codex:5h"].limit_reached is True
    assert readings["codex:5h"].exactness is Exactness.EXACT
    assert readings["codex:5h"].observed_at == T0  # the injected clock's now
    weekly = readings["codex:weekly"]
    assert weekly.resets_at is not None and epoch(weekly.resets_at) == epoch(T0 + 50 * H)
    [call] = fake.invocations()
    assert call["argv"] == ["app-server"] and call["codex_home"] == str(provider.config.home)
    assert [m["method"] for m in (e["recv"] for e in fake.log() if "recv" in e)] == [
        "initialize", "initialized", "account/rateLimits/read"]
    assert gone(call["pid"])


@pytest.mark.asyncio
async def test_the_update_sent_before_the_answer_is_sparse(fake, make_codex):
    """The answer is the snapshot; updates received meanwhile only add what they carry."""
    fake.script(rate_limits=[rl(10, epoch(T0 + H), 20, epoch(T0 + 50 * H))],
                updates=[{"limitId": "codex", "primary": {"usedPercent": 99}}])
    provider = make_codex()
    readings = {r.window_id: r for r in await provider.read_quotas(fresh=True)}
    assert readings["codex:5h"].used_percent == 99.0
    assert readings["codex:5h"].window_seconds == 300 * 60  # kept: the update lacks it
    assert readings["codex:weekly"].used_percent == 20.0


@pytest.mark.asyncio
async def test_an_app_server_that_never_answers_is_time_boxed_and_reaped(fake, make_codex):
    fake.script(mode="silent")
    provider = make_codex(Settings(codex_app_server_timeout_seconds=0.5))
    began = time.monotonic()
    with pytest.raises(FreshReadError, match=r"did not answer within 0.5 s"):
        await provider.read_quotas(fresh=True)
    assert time.monotonic() - began < 5.0
    [pid] = server_pids(fake)
    assert gone(pid)


@pytest.mark.asyncio
async def test_a_crashing_app_server_says_so(fake, make_codex):
    fake.script(mode="crash")
    with pytest.raises(FreshReadError, match="crashed at start"):
        await make_codex().read_quotas(fresh=True)


@pytest.mark.asyncio
async def test_a_missing_binary_says_where_it_looked(make_codex, tmp_path):
    provider = make_codex(Settings(codex_bin=str(tmp_path / "no" / "codex")))
    with pytest.raises(FreshReadError, match="does not exist or is not executable"):
        await provider.read_quotas(fresh=True)
    provider = make_codex(PATH=str(tmp_path))
    with pytest.raises(FreshReadError, match="not found on PATH"):
        await provider.read_quotas(fresh=True)


@pytest.mark.asyncio
async def test_codex_bin_setting_is_used(fake, make_codex):
    provider = make_codex(Settings(codex_bin=str(fake.bin / "codex")), PATH="/nonexistent")
    fake.script(rate_limits=[rl(5, epoch(T0 + H), 5, epoch(T0 + 50 * H))])
    readings = await provider.read_quotas(fresh=True)
    assert {r.window_id for r in readings} >= {"codex:5h", "codex:weekly"}


@pytest.mark.asyncio
async def test_a_cancellation_as_the_app_server_spawns_leaves_no_process_behind(
        fake: FakeCodex, monkeypatch: pytest.MonkeyPatch) -> None:
    """asyncio raises a cancellation that arrives as the spawn completes out of
    ``create_subprocess_exec`` with the process already running (a host stopping during a
    fresh read, a time-out): the server must still close it — it was a codex left behind,
    seen as unclosed-transport warnings in the suite."""
    fake.script(mode="silent")
    real_spawn = asyncio.create_subprocess_exec
    spawned: list[int] = []
    starting: list[asyncio.Task[object]] = []

    async def spawn_then_cancelled(*args, **kwargs):
        proc = await real_spawn(*args, **kwargs)
        spawned.append(proc.pid)
        starting[0].cancel()  # the caller is cancelled the moment the process exists
        await asyncio.sleep(0)
        return proc

    monkeypatch.setattr(rpc.asyncio, "create_subprocess_exec", spawn_then_cancelled)
    server = rpc.AppServer("codex", os.environ)
    starting.append(asyncio.ensure_future(server.start()))
    with pytest.raises(asyncio.CancelledError):
        await starting[0]
    await rpc.finish(server.close(grace=0.2))
    assert spawned and server.pid == spawned[0] and gone(spawned[0])
