"""Fixtures for the Codex provider: a fixture CODEX_HOME and a provider reading it, a fake
``codex`` on PATH (``fake``: here it is a :class:`FakeCodex`, not the root's FakeProvider) and
a git repository for it to run in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.providers.codex.config import from_settings
from core.providers.codex.provider import CodexProvider
from core.settings import Settings
from tests.codex.fakecodex import FakeCodex
from tests.codex.fixtures import CodexHome
from tests.support.codex import MakeCodex


@pytest.fixture
def home(tmp_path: Path) -> CodexHome:
    return CodexHome(tmp_path / "codex-home")


@pytest.fixture
def codex_settings() -> Settings:
    return Settings(resume_jitter_seconds=0, codex_app_server_timeout_seconds=5,
                    codex_confirm_timeout_seconds=5)




@pytest.fixture
def make_codex(home: CodexHome, clock: FakeClock, codex_settings: Settings) -> MakeCodex:
    def _make(settings: Settings | None = None, **env: Any) -> CodexProvider:
        environ = {**os.environ, "CODEX_HOME": str(home.root), **env}
        return CodexProvider(from_settings(settings or codex_settings, environ), clock)

    return _make


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCodex:
    return FakeCodex(tmp_path / "fake", monkeypatch)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)  # codex exec runs only in a git repository
    return path
