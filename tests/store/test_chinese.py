"""The shared store's words in Chinese: ``store migrate``, ``hosts``, ``status`` and a routed
action's refusal speak the language; ``--json`` keeps its English."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.i18n import localized, use_language
from core.models import GoalState
from core.paths import Paths
from core.store import HostRecord
from core.store.postgres import PostgresStore
from tests.store.support import goal, put, row, set_heartbeat
from tests.support.store import local_store, run


@pytest.fixture
def chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOALKEEPER_LANGUAGE", "zh_CN")


def test_store_migrate_in_chinese(paths: Paths, pg_url: str, chinese: None,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    local_store(paths)
    code, out = run(capsys, "store", "migrate", "--to", pg_url)
    assert code == 0, out.err
    lines = out.out.splitlines()
    assert lines[0].startswith(f"已复制到 {pg_url}：3 个目标、43 条历史记录、1 条最新读数、"), lines
    assert lines[1].startswith("  已校验：两边的数量相同，校验和都是 ")
    assert lines[2] == f"  {paths.database} 未被改动"
    assert lines[-1].startswith("  下一步：在 ") and "然后重启宿主" in lines[-1]
    code, out = run(capsys, "store", "migrate", "--to", pg_url)
    assert code == 1
    assert "其中 3 个目标已在 共享存储 " in out.err and "没有复制任何内容" in out.err, out.err
    code, out = run(capsys, "store", "migrate", "--to", "postgresql://me:pw@db/goals")
    assert code == 2 and "密码不能写在 store_url 里" in out.err, out.err


def test_hosts_status_and_a_refused_action_in_chinese(
        pg_url: str, chinese: None, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    now = datetime.now(UTC)
    gone = now - timedelta(hours=2)
    shared = PostgresStore(pg_url)
    try:
        shared.beat_host(HostRecord("alpha", "daemon", "alpha", 7, gone, gone, 1))
        set_heartbeat(shared, "alpha", gone)
        shared.beat_host(HostRecord("bravo", "gui", "bravo", 8, now, now, 1,
                                    accounts={"codex": "team"}))
        shared.host_id = "alpha"
        put(shared, goal("fake:a", state=GoalState.PAUSED), row("fake:a", "discovered"))
    finally:
        shared.close()
    monkeypatch.setenv("GOALKEEPER_STORE_URL", pg_url)
    monkeypatch.setenv("GOALKEEPER_HOST_ID", "charlie")
    since = gone.isoformat().replace("+00:00", "Z")
    code, out = run(capsys, "hosts")
    assert code == 0, out.err
    lines = out.out.splitlines()
    assert lines[0].startswith("共享存储 ") and lines[0].endswith(" 中的宿主："), lines
    assert "守护进程" in lines[1] and f"自 {since[:16]}" in lines[1] and "1 个目标" in lines[1]
    assert "在线" in lines[2] and "上次心跳在 " in lines[2]
    assert lines[3] == "    账户：codex=team"
    code, out = run(capsys, "status")
    assert code == 0, out.err
    assert f"  宿主 alpha：自 {since[:16]}" in out.out and "  宿主 bravo：在线" in out.out
    assert "宿主离线" in out.out and "[alpha]" in out.out
    code, data = run(capsys, "status", "--json")
    assert data["goals"][0]["shown_state"] == "host offline"
    assert {h["host"]: h["state"].split(" since ")[0] for h in data["hosts"]} == {
        "alpha": "offline", "bravo": "online", "charlie": "this host"}
    code, out = run(capsys, "resume", "fake:a")
    assert code == 4
    assert out.out.strip().startswith("fake:a: 已拒绝：宿主 alpha 自 "), out.out


@pytest.mark.parametrize(("stored", "shown"), [
    ("host alpha offline since 2026-07-07T12:00:00Z", "宿主 alpha 自 2026-07-07T12:00:00Z 起离线"),
    ("quota recovered (read by host laptop): fake:5h",
     "配额重新可用（由宿主 laptop 读到）：fake:5h"),
    ("goal fake:b belongs to host desk; only that host changes it",
     "目标 fake:b 属于宿主 desk；只有该宿主能更改它"),
    ("store unavailable: the shared store db/goals is unavailable: server closed the connection "
     "since 2026-07-07T12:00:00Z",
     "存储不可用：共享存储 db/goals 不可用：server closed the connection，自 "
     "2026-07-07T12:00:00Z 起"),
    ("another Goalkeeper started as host desk (a newer epoch holds its registry row): this one "
     "may no longer write",
     "另一个 Goalkeeper 以宿主 desk 的身份启动了（更新的纪元占有了它的登记行）：这一个不能再写入"),
])
def test_the_shared_store_s_stored_english_is_shown_translated(stored: str, shown: str) -> None:
    use_language("zh_CN")
    assert localized(stored) == shown
