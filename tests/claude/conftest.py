"""Fixtures of the Claude provider's tests: a copy of the fixture config dir, an environment."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.procstat import start_time
from tests.support.jsonl import read_jsonl

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


class FakeClaude:
    """Puts ``tests/claude/fake_claude.py`` on a PATH as ``claude`` and scripts it."""

    def __init__(self, root: Path) -> None:
        import json
        import os
        import sys

        self._json = json
        self.bin_dir = root / "bin"
        self.bin_dir.mkdir(parents=True)
        self.log = root / "claude-invocations.jsonl"
        self.script = root / "claude-script.json"
        exe = self.bin_dir / "claude"
        exe.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = 'claude'\n"
                       f"runpy.run_path({str(Path(__file__).parent / 'fake_claude.py')!r}, "
                       "run_name='__main__')\n")
        exe.chmod(0o755)
        self.env = {"PATH": f"{self.bin_dir}{os.pathsep}/usr/bin:/bin",
                    "FAKE_CLAUDE_LOG": str(self.log), "FAKE_CLAUDE_SCRIPT": str(self.script)}
        self.play([])

    def play(self, *plays: object) -> None:
        self.script.write_text(self._json.dumps({"plays": list(plays) or [{"events": []}]}))
        Path(str(self.script) + ".count").unlink(missing_ok=True)

    def entries(self) -> list[dict[str, object]]:
        return read_jsonl(self.log)

    def invocations(self) -> list[dict[str, object]]:
        return [e for e in self.entries() if "argv" in e]

    def signals(self) -> list[str]:
        return [str(e["signal"]) for e in self.entries() if "signal" in e]


@pytest.fixture
def fake_claude(tmp_path: Path) -> FakeClaude:
    return FakeClaude(tmp_path / "fake-claude")


def live_session(config_dir: Path, session_id: str, pid: int | None = None,
                 kind: str = "interactive", entrypoint: str = "cli") -> Path:
    """``<config>/sessions/<pid>.json`` as a running Claude Code TUI writes it (B0); the pid is
    this test's own (or its parent's), so it is alive."""
    pid = pid or os.getpid()
    start = start_time(pid)
    path = config_dir / "sessions" / f"{pid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "sessionId": session_id, "cwd": "/home/dev/myrepo",
                                "startedAt": 1783400000000, "procStart": start,
                                "version": "2.1.328", "kind": kind, "entrypoint": entrypoint,
                                "status": "idle"}))
    return path
