"""Fixtures for the contract tests on the pinned real CLIs (``tests/real/``).

Every test here is marked ``real_cli``. The CLI comes from :mod:`tests.real.pins`; where it is
absent and cannot be installed (no npm, no registry), the tests skip with the reason — except
under ``CI=true``, where a missing CLI fails the test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.real.claude_mock import Answer, ClaudeApi
from tests.real.claude_world import ClaudeWorld, Tui
from tests.real.mockhttp import MockServer, serving
from tests.real.pins import PINS, PinUnavailable, ensure

_IN_CI = os.environ.get("CI", "").lower() == "true"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.real_cli)


def _pinned(name: str) -> Path:
    try:
        return ensure(PINS[name])
    except PinUnavailable as exc:
        if _IN_CI:
            pytest.fail(f"CI=true and the pinned {name} CLI is missing: {exc}")
        pytest.skip(f"the pinned {name} CLI is not available here: {exc}")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The real ``codex`` binary at the pinned version."""
    return _pinned("codex")


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The real ``claude`` binary at the pinned version."""
    return _pinned("claude")


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
    started: list[Tui] = []
    yield started
    for tui in started:
        tui.close()
