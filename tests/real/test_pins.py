"""The pinned CLIs are installed at exactly their pinned versions, at both ends of each range."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.real.pins import RANGES, Pin, group_counts, selected


def _reports(binary: Path, pin: Pin, tmp_path: Path) -> None:
    env = {**os.environ, "CODEX_HOME": str(tmp_path)}  # never the user's real Codex home
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL, check=True, env=env)
    assert pin.version_text in out.stdout


def test_the_codex_pin_reports_its_version(codex_pin: Pin, codex_bin: Path,
                                           tmp_path: Path) -> None:
    _reports(codex_bin, codex_pin, tmp_path)


def test_the_claude_pin_reports_its_version(claude_pin: Pin, claude_bin: Path,
                                            tmp_path: Path) -> None:
    _reports(claude_bin, claude_pin, tmp_path)


def test_both_ends_of_each_range_are_tested_by_default(monkeypatch) -> None:
    monkeypatch.delenv("GOALKEEPER_REAL_CLI_ENDS", raising=False)
    for name, rng in RANGES.items():
        monkeypatch.delenv(f"GOALKEEPER_REAL_{name.upper()}_VERSION", raising=False)
        assert [p.version for p in selected(name)] == [rng.oldest, rng.newest]
    monkeypatch.setenv("GOALKEEPER_REAL_CODEX_VERSION", "9.9.9")
    assert [p.version_text for p in selected("codex")] == ["codex-cli 9.9.9"]


def test_latest_prints_one_line_per_group(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite>'
        '<testcase classname="tests.real.test_codex_contract" name="a"/>'
        '<testcase classname="tests.real.test_codex_contract" name="b"><failure/></testcase>'
        '<testcase classname="tests.real.test_pins" name="c"><skipped/></testcase>'
        '</testsuite></testsuites>')
    counts = group_counts(junit)
    assert counts["test_codex_contract"] == {"passed": 1, "failed": 1}
    assert counts["test_pins"] == {"skipped": 1}
