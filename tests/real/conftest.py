"""Fixtures for the contract tests on the pinned real CLIs (``tests/real/``).

Every test here is marked ``real_cli``. The CLI comes from :mod:`tests.real.pins`; where it is
absent and cannot be installed (no npm, no registry), the tests skip with the reason — except
under ``CI=true``, where a missing CLI fails the test.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core.clock import SystemClock
from core.engine import Engine
from core.paths import resolve_paths
from core.providers.claude.provider import ClaudeProvider
from core.settings import Settings
from tests.real.claude_mock import Answer, ClaudeApi
from tests.real.claude_world import ClaudeWorld, Tui
from tests.real.mockhttp import MockServer, serving
from tests.real.pins import Pin, pinned, selected
from tests.real.terminal import need_tmux


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.real_cli)


@pytest.fixture(scope="session", params=selected("codex"), ids=lambda p: f"codex-{p.version}")
def codex_pin(request: pytest.FixtureRequest) -> Pin:
    """Each tested end of Codex's supported range (``tests/real/pins.py``)."""
    pin: Pin = request.param
    return pin


@pytest.fixture(scope="session", params=selected("claude"), ids=lambda p: f"claude-{p.version}")
def claude_pin(request: pytest.FixtureRequest) -> Pin:
    """Each tested end of Claude Code's supported range (``tests/real/pins.py``)."""
    pin: Pin = request.param
    return pin


@pytest.fixture(scope="session")
def codex_bin(codex_pin: Pin) -> Path:
    """The real ``codex`` binary at one tested end of the range."""
    return pinned(codex_pin)


@pytest.fixture(scope="session")
def claude_bin(claude_pin: Pin) -> Path:
    """The real ``claude`` binary at one tested end of the range."""
    return pinned(claude_pin)


# -- the real claude, offline ----------------------------------------------------------------------

@pytest.fixture(scope="session")
def claude_api() -> Iterator[tuple[ClaudeApi, MockServer]]:
    """One mock Messages API on 127.0.0.1 for the whole session (tests reset its queue)."""
    api = ClaudeApi()
    with serving(api) as server:
        yield api, server


@pytest.fixture
def claude_world(claude_bin: Path, claude_api: tuple[ClaudeApi, MockServer],
                 tmp_path: Path) -> ClaudeWorld:
    """A fresh config dir, home and project for the real claude, the mock's queue emptied."""
    api, server = claude_api
    api.reset(Answer.ok())
    return ClaudeWorld(tmp_path / "claude-world", claude_bin, server.url)


@pytest.fixture
def tuis() -> Iterator[list[Tui]]:
    """TUIs a test starts go here; every one is closed (no tmux, no claude left) afterwards."""
    need_tmux()
    started: list[Tui] = []
    yield started
    for tui in started:
        tui.close()


def fast_settings(world: ClaudeWorld, **extra: Any) -> Settings:
    """Resume right at the reset, notice things within a fraction of a second."""
    return Settings(**{
        "auto_resume_default": True, "resume_margin_seconds": 0, "resume_jitter_seconds": 0,
        "stable_seconds": 0, "max_sleep_seconds": 0.5, "claude_poll_seconds": 0.2,
        "claude_bin": str(world.binary), "claude_retry_backoff_seconds": 0.5,
        "claude_stop_grace_seconds": 5, "codex_enabled": False, **extra})


@pytest_asyncio.fixture
async def engine_of(tmp_path: Path) -> AsyncIterator[Any]:
    """Engines with only the Claude provider on the real clock, the real claude as runner."""
    started: list[Engine] = []

    async def make(world: ClaudeWorld, **extra: Any) -> tuple[Engine, ClaudeProvider]:
        paths = resolve_paths({"GOALKEEPER_HOME": str(tmp_path / f"gk-{len(started)}")})
        settings = fast_settings(world, **extra)
        provider = ClaudeProvider(settings, paths, SystemClock(), world.env)
        engine = Engine(paths, settings, [provider], SystemClock(), random.Random(7))
        await engine.start()
        started.append(engine)
        return engine, provider

    yield make
    for engine in started:
        await engine.stop()
