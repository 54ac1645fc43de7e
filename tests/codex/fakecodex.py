"""Putting the fake ``codex`` (tests/codex/fake_codex.py) on PATH and reading what it saw."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.jsonl import read_jsonl

SOURCE = Path(__file__).with_name("fake_codex.py")


class FakeCodex:
    """The fake's script, state and invocation log, in a private directory."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.dir = root
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        exe = self.bin / "codex"
        exe.write_text(f"#!{sys.executable}\n" + SOURCE.read_text())
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setenv("FAKE_CODEX_DIR", str(root))
        self.script()

    def script(self, **plan: Any) -> None:
        (self.dir / "script.json").write_text(json.dumps(plan))

    def log(self) -> list[dict[str, Any]]:
        return read_jsonl(self.dir / "log.jsonl")

    def invocations(self) -> list[dict[str, Any]]:
        """Every Codex session started (``codex --version`` checks left out)."""
        return [e for e in self.log() if "argv" in e and e["argv"] != ["--version"]]

    def received(self, method: str, **params: Any) -> list[dict[str, Any]]:
        """Requests the fake received for ``method`` whose params include ``params``."""
        found = []
        for entry in self.log():
            message = entry.get("recv") or {}
            if message.get("method") == method and all(
                    (message.get("params") or {}).get(k) == v for k, v in params.items()):
                found.append(message)
        return found

    def activations(self) -> list[dict[str, Any]]:
        """Every ``thread/goal/set {status: active}`` — one per real resume."""
        return self.received("thread/goal/set", status="active")

    def goal_status(self, thread: str) -> str | None:
        try:
            state = json.loads((self.dir / "state.json").read_text())
        except OSError:
            return None
        goal = state.get("goals", {}).get(thread)
        return goal.get("status") if goal else None


def rl(used5: float, reset5: int, used7: float, reset7: int,
       reached: str | None = None) -> dict[str, Any]:
    """An app-server RateLimitSnapshot (camelCase; ``usedPercent`` is an integer there, as in
    0.169.0) with a 5-hour and a weekly window."""
    snap: dict[str, Any] = {
        "limitId": "codex", "limitName": None, "normalModelSlug": None,
        "primary": {"usedPercent": round(used5), "windowDurationMins": 300, "resetsAt": reset5},
        "secondary": {"usedPercent": round(used7), "windowDurationMins": 10080,
                      "resetsAt": reset7},
        "credits": {"hasCredits": False, "unlimited": False, "balance": "0"},
        "individualLimit": None, "spendControlReached": None,
        "planType": "plus", "rateLimitReachedType": None,
    }
    if reached:
        snap["rateLimitReachedType"] = reached
    return snap
