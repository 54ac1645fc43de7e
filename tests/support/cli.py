"""CLI test helpers: run ``python -m core`` against a data directory, seed one paused goal."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from core.models import Goal, GoalState, HistoryRow, PauseReason
from core.store import Mutation, SqliteStore
from tests.support.fakes import reading

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def run(home: Path, *args: str, env: dict[str, str] | None = None,
        timeout: float = 60, unset: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items()
                if not k.startswith("GOALKEEPER_") and k not in unset}
    full_env |= {"GOALKEEPER_HOME": str(home), **(env or {})}
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True,
                          text=True, env=full_env, cwd=ROOT, timeout=timeout)


def seed(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(home / "goalkeeper.db")
    goal = Goal(id="fake:g", provider="fake", title="Migrate the tests", state=GoalState.PAUSED,
                pause_reason=PauseReason.QUOTA, auto_resume=True, windows=("fake:5h",),
                next_resume_at=T0, created_at=T0, updated_at=T0)
    store.transact(goal.id, lambda cur: Mutation(goal, None, [
        HistoryRow(at=T0, goal="fake:g", event="paused", reason="quota")]))
    store.save_reading(reading("fake:5h", 100, T0, datetime(2030, 1, 1, tzinfo=UTC)))
    store.close()
