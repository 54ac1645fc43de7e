"""Fixtures for the install tests: the validators Linux distributions use, where installed.

``desktop-file-validate`` (Debian: desktop-file-utils), ``appstreamcli`` (appstream) and
``systemd-analyze`` (systemd). Where one is missing the test skips with the reason — except
under ``CI=true``, where ``.ci/run`` installs them and a missing one fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.integration import Tool, runner


@pytest.fixture(scope="session")
def desktop_file_validate() -> Tool:
    return runner("desktop-file-validate")


@pytest.fixture(scope="session")
def appstreamcli() -> Tool:
    return runner("appstreamcli")


@pytest.fixture(scope="session")
def systemd_analyze() -> Tool:
    return runner("systemd-analyze")


@pytest.fixture
def xdg_env(tmp_path: Path) -> dict[str, str]:
    """A private HOME and XDG base directories (nothing reaches the developer's own)."""
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"),
           "XDG_CONFIG_HOME": str(home / ".config")}
    home.mkdir()
    return env
