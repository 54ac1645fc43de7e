"""Shared fixtures. Tests never touch the network, the user's directories or the real clock."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists

import random
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core import i18n
from core.clock import FakeClock
from core.engine import Engine
from core.paths import Paths, resolve_paths
from core.settings import Settings
from tests.support.engine import EngineFactory
from tests.support.fakes import FakeProvider


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No GOALKEEPER_* setting leaks in from the developer's shell; a private home per test;
    English whatever the shell's language (a test that wants Chinese asks for it)."""
    for name in list(os.environ):
        if name.startswith("GOALKEEPER_") or name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("GOALKEEPER_HOME", str(tmp_path / "gk-home"))
    # never the developer's own Claude Code sessions: an empty, non-existent config dir
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-claude-config"))
    # never the machine's logind: a test that wants one starts a private bus (fake_login1)
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path}/no-system-bus")
    i18n.use_language("en")
    yield
    i18n.use_language("en")


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    return resolve_paths({"GOALKEEPER_HOME": str(tmp_path / "gk-home")})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings() -> Settings:
    return Settings(resume_jitter_seconds=0)


@pytest.fixture
def fake(clock: FakeClock) -> FakeProvider:
    return FakeProvider(clock)


@pytest_asyncio.fixture
async def make_engine(paths: Paths, clock: FakeClock) -> AsyncIterator[EngineFactory]:
    """Start engines on the shared paths and fake clock; stop them all at teardown."""
    engines: list[Engine] = []

    async def _make(*providers: Any, settings: Settings | None = None, **kw: Any) -> Engine:
        engine = Engine(paths, settings or Settings(resume_jitter_seconds=0), list(providers),
                        clock, random.Random(7), **kw)
        await engine.start()
        await engine.drain()
        engines.append(engine)
        return engine

    yield _make
    for engine in engines:
        await engine.stop()


@pytest_asyncio.fixture
async def make_host(pg_url: str, tmp_path: Path, clock: FakeClock) -> AsyncIterator[EngineFactory]:
    """Engines of hosts on one shared PostgreSQL store, each with its own data directory, host
    id and the account ``alice``; each started, listening and registered; all stopped at
    teardown."""
    from tests.support.fakes import until

    engines: list[Engine] = []

    async def _make(host_id: str, *providers: Any, **settings: Any) -> Engine:
        paths = resolve_paths({"GOALKEEPER_HOME": str(tmp_path / host_id)})
        values = {"store_url": pg_url, "host_id": host_id, "resume_jitter_seconds": 0,
                  "account": "alice", **settings}
        engine = Engine(paths, Settings(**values), list(providers), clock, random.Random(7))
        await engine.start()
        await engine.drain()
        await until(lambda: engine.shared_sync.listening, 10)
        await until(lambda: engine.host_registry.registered, 10)
        engines.append(engine)
        return engine

    yield _make
    for engine in engines:
        await engine.stop()


@pytest.fixture(scope="session")
def pg_server() -> Any:
    """A real PostgreSQL server, started once per session (skipped where the server binaries
    are missing — and failing under CI=true, where .ci/run installs them)."""
    from tests.support.postgres import PgServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        why = "PostgreSQL server binaries (initdb, pg_ctl) are not installed"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    server = PgServer(bindir).init()
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: Any) -> Any:
    """A fresh database of this test's own on the session's server."""
    name = pg_server.create_database()
    yield pg_server.url(name)
    pg_server.drop_database(name)
