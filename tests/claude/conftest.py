"""Fixtures of the Claude provider's tests: a copy of the fixture config dir, an environment."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.clock import FakeClock
from tests.support.claude import FakeClaude, World

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def claude_dir(tmp_path: Path) -> Path:
    """A private copy of ``fixtures/claude-config`` (tests may append to it)."""
    target = tmp_path / "claude-config"
    shutil.copytree(FIXTURES / "claude-config", target)
    return target


@pytest.fixture
def environ(tmp_path: Path, claude_dir: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(claude_dir), "PATH": "/usr/bin:/bin",
            "TZ": "UTC"}


@pytest.fixture
def late_clock() -> FakeClock:
    """The fixture stops happen on 2026-07-07 between 03:10 and 21:15 UTC; this is just after."""
    return FakeClock(datetime(2026, 7, 7, 22, 0, tzinfo=UTC))


@pytest.fixture
def claude_dir_2(tmp_path: Path) -> Path:
    target = tmp_path / "claude-config-2"
    shutil.copytree(FIXTURES / "claude-config-2", target)
    return target


@pytest.fixture
def fake_claude(tmp_path: Path) -> FakeClaude:
    return FakeClaude(tmp_path / "fake-claude")


@pytest.fixture
def world(tmp_path: Path, fake_claude: FakeClaude) -> World:
    config, repo, home = tmp_path / "claude", tmp_path / "repo", tmp_path / "home"
    for d in (config, repo, home):
        d.mkdir()
    environ = {**fake_claude.env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(config),
               "TZ": "UTC"}
    return World(config, repo, environ, fake_claude)
