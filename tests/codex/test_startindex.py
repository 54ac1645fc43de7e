"""The start index: unchanged rollouts are not read again, grown ones only from where they were."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.providers.codex import startup
from core.providers.codex.config import from_settings
from core.providers.codex.follow import RolloutIndex
from core.providers.codex.provider import CodexProvider
from core.providers.codex.startindex import load, save
from core.providers.codex.startup import read_startup
from core.settings import Settings
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    THREAD_B,
    CodexHome,
    chatter,
    goal,
    limit_stop,
    meta,
)

H = timedelta(hours=1)
M = timedelta(minutes=1)


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every backwards goal search: (file name, floor)."""
    calls: list[tuple[str, int]] = []
    real = startup._last_goal_at

    def counted(path: Path, floor: int = 0):
        calls.append((path.name, floor))
        return real(path, floor)

    monkeypatch.setattr(startup, "_last_goal_at", counted)
    return calls


def start(home: CodexHome, index_file: Path):
    files = RolloutIndex(home.sessions).list_all()
    state = read_startup(files, home.root, load(index_file))
    save(index_file, state.entries)
    return state


def test_a_warm_start_reads_only_what_changed(home: CodexHome, tmp_path: Path, scans):
    index_file = tmp_path / "gk" / "codex-start-index.json"
    a = home.rollout(THREAD_A, T0 - 2 * H, meta(THREAD_A, T0 - 2 * H, cwd="/repo/a"),
                     goal(THREAD_A, "active", T0 - 2 * H), chatter(T0 - H))
    home.rollout(THREAD_B, T0 - H, meta(THREAD_B, T0 - H), chatter(T0 - H))
    cold = start(home, index_file)
    assert len(scans) == 2 and cold.goals[THREAD_A].status == "active"
    assert cold.metas[THREAD_A].cwd == "/repo/a"

    scans.clear()
    warm = start(home, index_file)
    assert scans == []  # nothing changed: nothing read
    assert warm.goals == cold.goals and warm.metas[THREAD_A].cwd == "/repo/a"

    size = a.stat().st_size
    home.append(a, chatter(T0), goal(THREAD_A, "usageLimited", T0 + M))
    scans.clear()
    grown = start(home, index_file)
    assert scans == [(a.name, size)]
    assert grown.goals[THREAD_A].status == "usageLimited"

    home.append(a, chatter(T0 + 2 * M))  # grown, but no newer goal line
    scans.clear()
    assert start(home, index_file).goals[THREAD_A].status == "usageLimited"


def test_a_goal_line_cut_at_the_indexed_size_is_found_once_complete(
        home: CodexHome, tmp_path: Path):
    index_file = tmp_path / "idx.json"
    text = goal(THREAD_A, "complete", T0)
    a = home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H), goal(THREAD_A, "active", T0 - H),
                     text[:25])
    assert start(home, index_file).goals[THREAD_A].status == "active"
    home.append(a, text[25:])
    assert start(home, index_file).goals[THREAD_A].status == "complete"


def test_a_replaced_file_or_a_broken_index_is_read_afresh(home: CodexHome, tmp_path: Path,
                                                          scans):
    index_file = tmp_path / "idx.json"
    a = home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H), goal(THREAD_A, "active", T0 - H))
    start(home, index_file)
    replacement = a.with_name("tmp")
    replacement.write_text(meta(THREAD_A, T0) + goal(THREAD_A, "paused", T0))
    replacement.replace(a)  # same name, another file
    scans.clear()
    assert start(home, index_file).goals[THREAD_A].status == "paused"
    assert len(scans) == 1 and scans[0][1] == 0
    index_file.write_text("{not json")
    scans.clear()
    assert start(home, index_file).goals[THREAD_A].status == "paused"
    assert len(scans) == 1


def test_only_a_limit_stop_after_the_last_goal_line_makes_it_usage_limited(
        home: CodexHome, tmp_path: Path):
    """The stop is looked for past the goal's line only: an older stop, followed by the goal
    set active again (resumed), says nothing about now."""
    home.rollout(THREAD_A, T0 - 3 * H, meta(THREAD_A, T0 - 3 * H),
                 goal(THREAD_A, "active", T0 - 3 * H), limit_stop(T0 - 2 * H),
                 goal(THREAD_A, "active", T0 - H), chatter(T0 - 30 * M))
    b = home.rollout(THREAD_B, T0 - 3 * H, meta(THREAD_B, T0 - 3 * H),
                     goal(THREAD_B, "active", T0 - 3 * H), chatter(T0 - 2 * H))
    index_file = tmp_path / "idx.json"
    first = start(home, index_file)
    assert first.goals[THREAD_A].status == "active"
    assert first.goals[THREAD_B].status == "active"
    home.append(b, limit_stop(T0 - M))  # grown by a stop after its goal line
    again = start(home, index_file)
    assert again.goals[THREAD_B].status == "usageLimited"
    assert again.goals[THREAD_A].status == "active"


@pytest.mark.asyncio
async def test_the_provider_writes_the_index_behind_its_start_and_the_next_start_uses_it(
        home: CodexHome, tmp_path: Path, scans, clock):
    home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H), goal(THREAD_A, "complete", T0 - H))
    config = from_settings(Settings(), {"CODEX_HOME": str(home.root)})
    index_file = tmp_path / "gk" / "codex-start-index.json"
    first = CodexProvider(config, clock, index_file=index_file)
    await first.start()
    await first.stop()  # waits for the index being written
    assert len(scans) == 1 and load(index_file)
    scans.clear()
    second = CodexProvider(config, clock, index_file=index_file)
    await second.start()
    await second.stop()
    assert scans == [] and second.state.book.records[THREAD_A].update.status == "complete"


def test_a_rollout_that_cannot_be_read_is_named_in_the_hosts_health(home: CodexHome,
                                                                     tmp_path: Path) -> None:
    from core.health import HostHealth, ProviderHealth, StoreHealth

    home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H), goal(THREAD_A, "active", T0 - H))
    files = RolloutIndex(home.sessions).list_all()
    for file in files:
        file.path.unlink()  # listed, then gone (or unreadable) before it is read
    state = read_startup(files, home.root)
    assert set(state.unreadable) == {str(f.path) for f in files}
    assert all(why for why in state.unreadable.values())
    health = HostHealth(StoreHealth(), (ProviderHealth(
        "codex", unreadable=tuple(f"{p} ({why})" for p, why in state.unreadable.items())),))
    [line] = health.problems()
    assert line.startswith("provider codex: cannot read 1 file(s): ") and str(files[0].path) in line
    assert HostHealth.from_json(health.to_json()) == health
