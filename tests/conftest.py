"""Shared fixtures. Tests never touch the network, the user's directories or the real clock."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists

import random
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, settings

from core import i18n
from core.clock import FakeClock
from core.engine import Engine
from core.paths import Paths, resolve_paths
from core.settings import Settings
from tests.support import reaper
from tests.support.engine import EngineFactory
from tests.support.examples import on_ci
from tests.support.fakes import FakeProvider

#: the second line behind pytest-timeout: a test stuck in Qt's loop cannot hang the run
pytest_plugins = ["tests.support.timeouts"]


# Under CI=true (a loaded 2-core machine): no per-example deadline and no "too slow" health
# check — both are wall-clock limits that fail on load, not on code; the examples a test runs
# there are sized to a time budget instead (tests/support/examples.py).
settings.register_profile("ci", deadline=None, max_examples=100, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if on_ci() else "default")


def pytest_configure(config: pytest.Config) -> None:
    """Whatever this run starts dies with it, even when pytest is killed (support/reaper.py)."""
    if hasattr(os, "pidfd_open"):  # Linux; elsewhere the fixtures' teardown is all there is
        reaper.start()


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
    teardown. ``clock_of=`` gives one host its own clock (a machine whose clock is off)."""
    from tests.support.fakes import until

    engines: list[Engine] = []
    # the hosts' clock reads the database's time: a store measures each host's clock against
    # its own ``now()`` (issue 21), and a host months off would be a health problem
    clock.jump((datetime.now(UTC) - clock.now()).total_seconds())

    async def _make(host_id: str, *providers: Any, clock_of: FakeClock | None = None,
                    **settings: Any) -> Engine:
        paths = resolve_paths({"GOALKEEPER_HOME": str(tmp_path / host_id)})
        values = {"store_url": pg_url, "host_id": host_id, "resume_jitter_seconds": 0,
                  "account": "alice", **settings}
        engine = Engine(paths, Settings(**values), list(providers), clock_of or clock,
                        random.Random(7))
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
    server = PgServer(bindir)
    reaper.remove_later(server.root)  # the reaper stops the server itself: it is marked
    yield server.init()
    server.stop()


@pytest.fixture
def pg_url(pg_server: Any) -> Any:
    """A fresh database of this test's own on the session's server."""
    name = pg_server.create_database()
    yield pg_server.url(name)
    pg_server.drop_database(name)
