"""Huge inputs: step output past its cap, giant titles and goal files, ``--limit 1000000``."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.limits import MAX_PAGE, MAX_STAGES, MAX_TITLE_CHARS
from core.models import Goal, HistoryRow
from core.providers.pipeline.checkpoint import StepStatus
from core.providers.pipeline.goalfile import GoalFileError, load_goal_file
from core.providers.pipeline.run import RunOutcome
from core.store import Mutation, SqliteStore
from tests.pipeline.support import FakeSecrets, Harness, goal, toml_text
from tests.support.faults import run

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
#: prints 1 MiB, a secret in the middle of it
FLOOD = ("import os, sys; sys.stdout.write('x' * 500000 + os.environ['TOKEN'] + 'x' * 548576); "
         "sys.stdout.flush()")


def harness(tmp_path: Path, clock: FakeClock, g: object, **kw: object) -> Harness:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    h = Harness(g, run_dir, clock, tmp_path, **kw)  # type: ignore[arg-type]
    h.new_record()
    return h


def flood(name: str, **keys: object) -> dict[str, object]:
    return {"name": name, "command": [sys.executable, "-c", FLOOD], "secrets": ["TOKEN"],
            "max_output_mb": 0.25, "retries": 0, **keys}


def reader(name: str, source: str) -> dict[str, object]:
    """A stage that records how much of the source's artifact it was given."""
    code = ("import os, pathlib; d = pathlib.Path(os.environ['GOALKEEPER_RUN_DIR']); "
            f"p = d / '{source}.out'; print(p.stat().st_size if p.exists() else -1)")
    return {"name": name, "command": [sys.executable, "-c", code]}


@pytest.mark.asyncio
async def test_a_stage_past_its_output_cap_fails_never_ok(tmp_path: Path,
                                                          clock: FakeClock) -> None:
    token = "tok-9d8c7b6a5f4e3d2c"
    g = goal([], [flood("big"), reader("next", "big")])
    h = harness(tmp_path, clock, g, secrets=FakeSecrets({"TOKEN": token}))
    outcome, _, rec = await h.run()
    assert outcome is RunOutcome.BLOCKED
    big = rec.stages["big"]
    assert big.status is StepStatus.FAILED and big.reason == "output_too_large"
    assert rec.stages["next"].status is StepStatus.PENDING  # never fed a cut artifact
    assert not (tmp_path / "run" / "big.out").exists()
    kept = tmp_path / "run" / "big.out.truncated"
    assert kept.stat().st_size <= int(0.25 * (1 << 20))
    assert token.encode() not in kept.read_bytes()


@pytest.mark.asyncio
async def test_a_source_past_its_output_cap_degrades_the_run(tmp_path: Path,
                                                             clock: FakeClock) -> None:
    g = goal([flood("big"), {"name": "small", "command": [sys.executable, "-c", "print(1)"]}],
             [reader("next", "big")], min_sources=1)
    h = harness(tmp_path, clock, g, secrets=FakeSecrets({"TOKEN": "tok-9d8c7b6a5f4e3d2c"}))
    outcome, _, rec = await h.run()
    assert outcome is RunOutcome.COMPLETED and rec.degraded
    assert rec.sources["big"].status is StepStatus.MISSING
    assert rec.sources["big"].reason == "output_too_large"
    assert (tmp_path / "run" / "next.out").read_text().strip() == "-1"  # no cut input


@pytest.mark.asyncio
async def test_output_under_the_cap_is_kept_whole(tmp_path: Path, clock: FakeClock) -> None:
    g = goal([], [flood("big", max_output_mb=2)])
    h = harness(tmp_path, clock, g, secrets=FakeSecrets({"TOKEN": "tok-9d8c7b6a5f4e3d2c"}))
    outcome, _, _ = await h.run()
    assert outcome is RunOutcome.COMPLETED
    data = (tmp_path / "run" / "big.out").read_bytes()
    assert len(data) == 500000 + len(b"********") + 548576 and b"tok-" not in data


def test_a_title_past_its_limit_is_a_goal_file_error(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_text(toml_text({"name": "big", "title": "t" * (MAX_TITLE_CHARS + 1)}, [],
                              [{"name": "a", "command": ["true"]}]))
    with pytest.raises(GoalFileError) as err:
        load_goal_file(path)
    assert "title" in err.value.problems[0] and str(MAX_TITLE_CHARS) in err.value.problems[0]


@pytest.mark.parametrize("stages", [MAX_STAGES + 1, 100_000])
def test_too_many_stages_are_refused_before_validation(tmp_path: Path, stages: int) -> None:
    path = tmp_path / "many.toml"
    path.write_text(toml_text({"name": "many"}, [],
                              [{"name": f"s{i}", "command": ["true"]} for i in range(stages)]))
    with pytest.raises(GoalFileError) as err:
        load_goal_file(path)
    assert "at most" in err.value.problems[0]


def test_an_agents_giant_title_is_cut_before_it_is_stored(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "goalkeeper.db")
    huge = "p" * 10_000_000
    goal_row = Goal(id="codex:t", provider="codex", title="short", created_at=T0,
                    updated_at=T0).model_copy(update={"title": huge, "pause_detail": huge})
    committed = store.transact("codex:t", lambda _: Mutation(goal_row, None, [HistoryRow(
        at=T0, goal="codex:t", event="note", reason=huge)]))
    stored = store.get_goal("codex:t")
    assert stored is not None and stored == committed.after
    assert len(stored.title) == MAX_TITLE_CHARS and stored.title.endswith("…")
    assert len(stored.pause_detail or "") <= 4000
    assert len(store.history("codex:t")[0].reason or "") <= 4000
    store.close()


def test_history_limit_is_capped_and_pages(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = SqliteStore(home / "goalkeeper.db")
    for i in range(30):
        store.append_history(HistoryRow(at=T0 + timedelta(seconds=i), goal="g:1",
                                        event=f"e{i}"))
    store.close()
    big = run(home, "history", "--limit", "1000000")
    assert big.returncode == 2 and f"between 1 and {MAX_PAGE}" in big.stderr
    first = json.loads(run(home, "history", "--json", "--limit", "20").stdout)
    second = json.loads(run(home, "history", "--json", "--limit", "20", "--offset",
                            "20").stdout)
    assert [r["event"] for r in first + second] == [f"e{i}" for i in range(29, -1, -1)]
    human = run(home, "history", "--limit", "20").stdout
    assert "… 10 older rows (--offset 20)" in human
