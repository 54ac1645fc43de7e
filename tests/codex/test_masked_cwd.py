"""A Codex goal stored with a masked cwd and rollout (issue 19: a host started from ``$HOME``
took ``PWD`` for a secret) is repaired from the rollout on the next discovery; "Open in
terminal" and the resume then use the real directory."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.commands import Resume
from core.logs import setup_logging
from core.models import Outcome
from core.paths import Paths
from core.redact import MASK
from core.settings import Settings
from tests.codex.fakecodex import FakeCodex, rl
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
from tests.support.codex import MakeCodex
from tests.support.engine import EngineFactory
from tests.support.fakes import until

GID = f"codex:{THREAD_A}"
OBJECTIVE = "Migrate the test suite to pytest and get CI green"
MARK = MASK.decode()
H = timedelta(hours=1)


@pytest.mark.asyncio
async def test_a_masked_cwd_is_repaired_from_the_rollout_and_used(
        tmp_path: Path, home: CodexHome, make_codex: MakeCodex, make_engine: EngineFactory,
        paths: Paths, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    user_home = tmp_path / "home"
    repo = user_home / "work" / "repo"
    (repo / ".git").mkdir(parents=True)
    fake = FakeCodex(tmp_path / "fake", monkeypatch)
    at = T0 - H / 6
    home.rollout(THREAD_A, at - H, meta(THREAD_A, at - H, cwd=str(repo)),
                 goal(THREAD_A, "active", at - H, objective=OBJECTIVE),
                 token_count(at, five_and_week(100.0, T0 + H, 40.0, T0 + 90 * H)),
                 goal(THREAD_A, "usageLimited", at, objective=OBJECTIVE))
    fake.script(goals={THREAD_A: {"objective": OBJECTIVE, "status": "usageLimited",
                                  "tokensUsed": 1000}},
                rate_limits=[rl(3, epoch(T0 + 4 * H), 41, epoch(T0 + 90 * H))])
    # as the daemon does, started from a terminal in $HOME
    setup_logging(None, environ={"PWD": str(user_home), "OLDPWD": str(repo),
                                 "HOME": str(user_home)})
    settings = Settings(resume_jitter_seconds=0, codex_app_server_timeout_seconds=5,
                        codex_confirm_timeout_seconds=5)
    first = await make_engine(make_codex(settings), settings=settings)
    assert first.goals[GID].data["cwd"] == str(repo)
    await first.stop()
    with sqlite3.connect(paths.database) as db:
        db.execute("UPDATE goals SET data = replace(data, ?, ?)", (str(user_home), MARK))
        db.execute("UPDATE goals SET data = replace(data, ?, ?)", (str(home.root), MARK))
        (raw,) = db.execute("SELECT data FROM goals").fetchone()
    assert json.loads(raw)["cwd"] == f"{MARK}/work/repo"

    provider = make_codex(settings)
    engine = await make_engine(provider, settings=settings)
    data = engine.goals[GID].data
    assert data["cwd"] == str(repo) and str(data["rollout"]).startswith(str(home.root))
    with sqlite3.connect(paths.database) as db:
        (raw,) = db.execute("SELECT data FROM goals").fetchone()
    assert MARK not in raw
    command = provider.open_command(engine.goals[GID])
    assert command is not None and MARK not in " ".join(command)

    result = await engine.perform(Resume(GID), "cli")
    assert result.outcome is Outcome.RESUMED, result.reason
    await until(lambda: any(e["argv"] == ["app-server"] for e in fake.invocations()), 20)
    resume_call = [e for e in fake.invocations() if e["argv"] == ["app-server"]][-1]
    assert resume_call["cwd"] == str(repo)
