"""A data directory with several goals and quota windows, at a fixed instant, for comparing what
``goalkeeper status`` prints (``tests/test_cli_status_output.py``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.models import (
    Exactness,
    Goal,
    GoalState,
    HistoryRow,
    PauseReason,
    QuotaReading,
)
from core.store import Mutation, SqliteStore

#: the instant the store was written and ``status`` is shown
NOW = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
CONFIG = ('resume_margin_seconds = 60\n'
          'auto_resume_hours = "Mon-Sun 00:00-24:00"\n'
          'resume_reserve_by_window = "codex:weekly=10"\n'
          'notify_ntfy_url = "https://ntfy.example/goals"\n'
          'notify_ntfy_min_kind = "needs_attention"\n')


def goals(t0: datetime) -> list[Goal]:
    hour = timedelta(hours=1)
    return [
        Goal(id="codex:019a-aaaa", provider="codex", title="Migrate the tests to pytest",
             state=GoalState.PAUSED, pause_reason=PauseReason.QUOTA, auto_resume=True,
             windows=("codex:5h",), next_resume_at=t0 + 2 * hour, created_at=t0,
             updated_at=t0, attempts=1),
        Goal(id="codex:019a-bbbb", provider="codex", title="Write the docs",
             state=GoalState.RUNNING, windows=("codex:5h", "codex:weekly"), created_at=t0,
             updated_at=t0, state_since=t0 - hour, data={"cwd": "/work/docs"},
             policy={"priority": 5, "budget_percent": 20,
                     "auto_resume_hours": "Mon-Fri 09:00-18:00"}),
        Goal(id="claude:sess-1", provider="claude", title="Refactor the store",
             created_at=t0, updated_at=t0, auto_resume_note="no timed reset: credits depleted"),
        Goal(id="pipeline:nightly", provider="pipeline", title="Nightly pipeline",
             state=GoalState.PAUSED, pause_reason=PauseReason.USER, created_at=t0,
             updated_at=t0, state_since=t0,
             steering={"budget": {"codex:5h": {"spent": 12.5, "until": t0 + 3 * hour}},
                       "last_run": {"seconds": 3600, "ended_at": t0}}),
        Goal(id="codex:019a-cccc", provider="codex", title="Done thing", state=GoalState.DONE,
             created_at=t0, updated_at=t0),
    ]


def readings(t0: datetime) -> list[QuotaReading]:
    series = [QuotaReading(window_id="codex:5h", provider="codex", label="Codex 5 h",
                           used_percent=40 + minutes / 4, resets_at=t0 + timedelta(hours=3),
                           window_seconds=18000, observed_at=t0 - timedelta(minutes=120 - minutes))
              for minutes in range(0, 121, 10)]
    return [*series,
            QuotaReading(window_id="codex:weekly", provider="codex", label="Codex weekly",
                         used_percent=12, resets_at=t0 + timedelta(days=4),
                         window_seconds=604800, observed_at=t0),
            QuotaReading(window_id="claude:5h", provider="claude", label="Claude 5 h",
                         exactness=Exactness.ESTIMATED, observed_at=t0,
                         note="from the statusline")]


def seed_status_home(home: Path, t0: datetime = NOW) -> None:
    """Write ``goalkeeper.db`` and ``config.toml`` into ``home``."""
    home.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(home / "goalkeeper.db")
    for goal in goals(t0):
        store.transact(goal.id, lambda _cur, g=goal: Mutation(g, None, [
            HistoryRow(at=t0, goal=g.id, event="discovered")]))
    for reading in readings(t0):
        store.save_reading(reading)
    store.close()
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
