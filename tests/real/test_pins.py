"""The pinned CLIs are installed at exactly their pinned versions."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.real.pins import PINS


@pytest.mark.parametrize("name", sorted(PINS))
def test_pinned_cli_reports_its_pinned_version(name: str, request: pytest.FixtureRequest) -> None:
    binary: Path = request.getfixturevalue(f"{name}_bin")
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL, check=True)
    assert PINS[name].version_text in out.stdout
