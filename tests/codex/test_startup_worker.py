"""A cold Codex start-up read in a worker interpreter: the same state as read here, a warm
start kept here, and a failed worker made up for here."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.providers.codex import startup_worker
from core.providers.codex.config import from_settings
from core.providers.codex.follow import RolloutIndex
from core.providers.codex.provider import CodexProvider
from core.providers.codex.startindex import load
from core.providers.codex.startup import read_startup
from core.providers.codex.startup_worker import read_start, to_read
from core.settings import Settings
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    THREAD_B,
    CodexHome,
    chatter,
    five_and_week,
    goal,
    meta,
    token_count,
)
from tests.support.fakes import FakeProvider

H = timedelta(hours=1)


class HeavyStarter(FakeProvider):
    """A provider whose first pass holds the interpreter, as Claude's does."""

    heavy_start = True


def two_goals(home: CodexHome) -> None:
    home.rollout(THREAD_A, T0 - 2 * H, meta(THREAD_A, T0 - 2 * H, cwd="/repo/a"),
                 goal(THREAD_A, "active", T0 - 2 * H), chatter(T0 - H),
                 token_count(T0 - H, five_and_week(40.0, T0 + 2 * H, 5.0, T0 + 90 * H)))
    home.rollout(THREAD_B, T0 - H, meta(THREAD_B, T0 - H, cwd="/repo/b"),
                 goal(THREAD_B, "complete", T0 - H))


@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every start-up read goes to a worker; the list counts the workers run."""
    monkeypatch.setattr(startup_worker, "WORKER_FILES", 1)
    runs: list[int] = []
    import subprocess

    real = subprocess.run

    def counted(*args, **kwargs):
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counted)
    return runs


def test_a_cold_read_in_a_worker_is_the_read_here(home: CodexHome, workers: list[int]):
    two_goals(home)
    files = RolloutIndex(home.sessions).list_all()
    apart = read_start(files, home.root, {})
    assert workers == [1]
    here = read_startup(files, home.root, {})
    assert apart.snapshot == here.snapshot and apart.snapshot is not None
    assert apart.goals == here.goals and set(apart.goals) == {THREAD_A, THREAD_B}
    assert apart.metas == here.metas and apart.entries == here.entries


def test_a_warm_start_is_read_here(home: CodexHome, workers: list[int]):
    two_goals(home)
    files = RolloutIndex(home.sessions).list_all()
    entries = read_startup(files, home.root, {}).entries
    assert to_read(files, entries) == 0 and to_read(files, {}) == 2
    read_start(files, home.root, entries)
    assert workers == []


def test_a_failed_worker_is_made_up_for_here(home: CodexHome, workers: list[int],
                                             monkeypatch: pytest.MonkeyPatch,
                                             caplog: pytest.LogCaptureFixture):
    two_goals(home)
    monkeypatch.setattr(startup_worker, "_WORKER", "import sys; sys.exit(3)")
    files = RolloutIndex(home.sessions).list_all()
    assert read_start(files, home.root, {}).goals == read_startup(files, home.root, {}).goals
    assert workers == [1] and "worker failed (exit 3)" in caplog.text


@pytest.mark.asyncio
async def test_the_provider_starts_from_a_worker_and_writes_the_index(
        home: CodexHome, tmp_path: Path, workers: list[int], clock):
    two_goals(home)
    config = from_settings(Settings(), {"CODEX_HOME": str(home.root)})
    index_file = tmp_path / "gk" / "codex-start-index.json"
    provider = CodexProvider(config, clock, index_file=index_file)
    provider.started_beside([HeavyStarter(clock)])
    await provider.start()
    await provider.stop()
    assert workers == [1] and set(load(index_file)) == {
        str(f.path) for f in RolloutIndex(home.sessions).list_all()}
    assert provider.state.book.records[THREAD_B].update.status == "complete"
    assert provider.snapshot is not None


def test_a_read_that_need_not_be_apart_stays_here(home: CodexHome, workers: list[int]):
    two_goals(home)
    files = RolloutIndex(home.sessions).list_all()
    assert read_start(files, home.root, {}, apart=False).goals == read_startup(
        files, home.root, {}).goals
    assert workers == []


@pytest.mark.asyncio
async def test_alone_the_provider_reads_its_start_here(
        home: CodexHome, tmp_path: Path, workers: list[int], clock):
    """Alone (or beside providers with a light start) a worker would only add its own start
    to Codex's: the read stays in the host's process."""
    two_goals(home)
    config = from_settings(Settings(), {"CODEX_HOME": str(home.root)})
    provider = CodexProvider(config, clock, index_file=tmp_path / "gk" / "index.json")
    provider.started_beside([FakeProvider(clock)])
    await provider.start()
    await provider.stop()
    assert workers == [] and provider.state.book.records[THREAD_B].update.status == "complete"


def test_the_registry_tells_codex_it_starts_beside_claude(tmp_path: Path, clock):
    from core.paths import resolve_paths
    from core.providers.registry import build_providers

    codex_home, claude_dir = tmp_path / "codex", tmp_path / "claude"
    (codex_home / "sessions").mkdir(parents=True)
    (claude_dir / "projects").mkdir(parents=True)
    environ = {"HOME": str(tmp_path), "CODEX_HOME": str(codex_home),
               "GOALKEEPER_HOME": str(tmp_path / "gk")}
    paths = resolve_paths(environ)
    claude = Settings(claude_config_dirs=str(claude_dir))
    empty = {p.name: p for p in build_providers(claude, paths, clock, environ)}
    assert not empty["claude"].heavy_start and not empty["codex"]._read_apart
    (claude_dir / "projects" / "-repo").mkdir()  # a history to go through at its start
    built = {p.name: p for p in build_providers(claude, paths, clock, environ)}
    assert built["codex"]._read_apart and built["claude"].heavy_start
    alone = {p.name: p for p in build_providers(
        Settings(claude_enabled=False), paths, clock, environ)}
    assert not alone["codex"]._read_apart
