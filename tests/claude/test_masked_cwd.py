"""A Claude session stored with a masked cwd (issue 19: ``PWD`` was taken for a secret, so a
host started from ``$HOME`` stored ``cwd = "********"``) is repaired from its transcript on the
next discovery, and then resumed in its real directory."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.commands import Resume
from core.logs import setup_logging
from core.models import GoalState, Outcome
from core.paths import Paths
from core.providers.claude.provider import ClaudeProvider
from core.redact import MASK
from core.settings import Settings
from tests.claude.builders import assistant, limit_stop, user, write_session
from tests.claude.plays import allowed
from tests.support.claude import FakeClaude
from tests.support.engine import EngineFactory
from tests.support.fakes import until

SESSION = "5e55e55e-1c2d-4e5f-8a6b-7c8d9e0f1a2b"
GOAL = f"claude:{SESSION}"
MARK = MASK.decode()


def mask_stored_paths(paths: Paths, home: Path) -> dict[str, object]:
    """What the store of a host started from ``$HOME`` held before the fix: ``$HOME`` masked
    in every stored string of the goal's data."""
    with sqlite3.connect(paths.database) as db:
        db.execute("UPDATE goals SET data = replace(data, ?, ?)", (str(home), MARK))
        (raw,) = db.execute("SELECT data FROM goals WHERE id = ?", (GOAL,)).fetchone()
    data: dict[str, object] = json.loads(raw)
    return data


@pytest.mark.asyncio
async def test_a_masked_cwd_is_repaired_from_the_transcript_and_resumed_there(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, tmp_path: Path,
        fake_claude: FakeClaude) -> None:
    home = tmp_path / "home"
    config, repo = home / ".claude", home / "src" / "app"
    repo.mkdir(parents=True)
    environ = {**fake_claude.env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(config),
               "TZ": "UTC", "PWD": str(home), "OLDPWD": str(repo)}
    cwd = str(repo)
    write_session(config, [
        user("Make the integration tests pass", "2026-07-07T11:00:00.000Z", session=SESSION,
             cwd=cwd),
        assistant("msg_w1", "2026-07-07T11:30:00.000Z", request="req_w1", session=SESSION,
                  cwd=cwd),
        limit_stop("You've hit your session limit · resets 2pm (UTC)",
                   "2026-07-07T11:59:00.000Z", session=SESSION, cwd=cwd)])
    setup_logging(None, environ=environ)  # as the daemon does: its secrets are remembered
    settings = Settings(resume_jitter_seconds=0)
    first = await make_engine(ClaudeProvider(settings, paths, clock, environ), settings=settings)
    assert first.goals[GOAL].data["cwd"] == cwd
    await first.stop()
    masked = mask_stored_paths(paths, home)
    assert masked["cwd"] == f"{MARK}/src/app" and str(masked["transcript"]).startswith(MARK)

    provider = ClaudeProvider(settings, paths, clock, environ)
    engine = await make_engine(provider, settings=settings)
    data = engine.goals[GOAL].data
    assert data["cwd"] == cwd and data["config_dir"] == str(config)
    assert str(data["transcript"]).startswith(str(config))
    with sqlite3.connect(paths.database) as db:
        (raw,) = db.execute("SELECT data FROM goals WHERE id = ?", (GOAL,)).fetchone()
    assert MARK not in raw  # repaired in the store, not only in memory
    command = provider.open_command(engine.goals[GOAL])
    assert command is not None and MARK not in " ".join(command)

    fake_claude.play(allowed(cwd=cwd))
    result = await engine.perform(Resume(GOAL), "cli")
    assert result.outcome is Outcome.RESUMED, result.reason
    await until(lambda: engine.goals[GOAL].state is GoalState.DONE, timeout=10)
    [run] = fake_claude.invocations()
    assert run["cwd"] == cwd
