"""Helpers shared by the Codex tests: a goals database, a usage-limited session, an engine
with a goal stopped or hosted through the fake app-server (fixtures: tests/codex/conftest.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from core.commands import Resume
from core.models import Outcome
from core.providers.codex.provider import CodexProvider
from core.settings import Settings
from tests.codex.fakecodex import rl
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    CodexHome,
    epoch,
    five_and_week,
    goal,
    meta,
    token_count,
)
from tests.support.fakes import until as _until


def goals_db(home: CodexHome, rows: list[tuple[str, str, str, int]], name: str = "goals_1.sqlite",
             wal: bool = True) -> Path:
    """A goals database shaped like Codex's: (thread, objective, status, updated epoch s)."""
    path = home.root / name
    con = sqlite3.connect(path)
    if wal:
        con.execute("PRAGMA journal_mode=WAL")
    con.execute("""CREATE TABLE IF NOT EXISTS thread_goals (
        thread_id TEXT PRIMARY KEY NOT NULL, goal_id TEXT NOT NULL, objective TEXT NOT NULL,
        status TEXT NOT NULL, token_budget INTEGER, tokens_used INTEGER NOT NULL DEFAULT 0,
        time_used_seconds INTEGER NOT NULL DEFAULT 0, created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER NOT NULL)""")
    con.executemany("INSERT OR REPLACE INTO thread_goals VALUES (?, ?, ?, ?, NULL, 5, 6, ?, ?)",
                    [(t, f"g-{t[-4:]}", o, s, u * 1000 - 60_000, u * 1000)
                     for t, o, s, u in rows])
    con.commit()
    con.close()
    return path
H = timedelta(hours=1)
M = timedelta(minutes=1)
GID = f"codex:{THREAD_A}"


async def until(predicate, timeout: float = 20.0) -> None:
    """Real processes are involved: give a loaded machine time (the clock itself is fake)."""
    await _until(predicate, timeout)
OBJECTIVE = "Migrate the test suite to pytest and get CI green"


def auto(**kw) -> Settings:
    values = {"resume_jitter_seconds": 0, "auto_resume_default": True, "stable_seconds": 0,
              "codex_app_server_timeout_seconds": 5, "codex_confirm_timeout_seconds": 5, **kw}
    return Settings(**values)


def limited_session(home: CodexHome, repo: Path, rate_limits: dict, at=T0 - 10 * M) -> Path:
    """A session whose goal stopped at the usage limit at ``at``."""
    return home.rollout(THREAD_A, at - H, meta(THREAD_A, at - H, cwd=str(repo)),
                        goal(THREAD_A, "active", at - H, objective=OBJECTIVE),
                        token_count(at, rate_limits),
                        goal(THREAD_A, "usageLimited", at, objective=OBJECTIVE))


def codex_goal(status: str = "usageLimited") -> dict:
    return {THREAD_A: {"objective": OBJECTIVE, "status": status, "tokensUsed": 1000}}


async def requests(engine, goal_id: str = GID):
    rows = await engine.reads.history(goal_id, limit=500)
    return [r for r in rows if r.event == "resume_requested"]


async def stopped(home, repo, fake, make_codex, make_engine, settings: Settings | None = None,
                  **script):
    """An engine with a goal stopped six hours ago (auto-resume off); the fake app-server
    plays ``script`` (by default: that goal, usage-limited, and the quota back)."""
    limited_session(home, repo, five_and_week(100.0, T0 - H, 40.0, T0 + 90 * H), at=T0 - 6 * H)
    fake.script(**{"goals": codex_goal(),
                   "rate_limits": [rl(3, epoch(T0 + 4 * H), 41, epoch(T0 + 90 * H))], **script})
    settings = settings or auto(auto_resume_default=False)
    return await make_engine(make_codex(settings), settings=settings)


async def hosted(home, repo, fake, make_codex, make_engine, settings: Settings | None = None,
                 **script):
    """:func:`stopped`, then resumed by hand through the fake app-server."""
    engine = await stopped(home, repo, fake, make_codex, make_engine, settings, **script)
    assert (await engine.perform(Resume(GID), "cli")).outcome is Outcome.RESUMED
    return engine


#: the ``make_codex`` fixture's type (tests/codex/conftest.py)
MakeCodex = Callable[..., CodexProvider]
