"""The pinned CLIs are installed at exactly their pinned versions."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.real.pins import PINS


@pytest.mark.parametrize("name", sorted(PINS))
def test_pinned_cli_reports_its_pinned_version(name: str, request: pytest.FixtureRequest,
                                               tmp_path: Path) -> None:
    binary: Path = request.getfixturevalue(f"{name}_bin")
    env = {**os.environ, "CODEX_HOME": str(tmp_path)}  # never the user's real Codex home
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL, check=True, env=env)
    assert PINS[name].version_text in out.stdout
