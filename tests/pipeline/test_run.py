"""One run through the machine with real step processes: retries, degradation, blocks, resumes."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.models import PauseReason
from core.providers.pipeline.checkpoint import CheckpointStore, StepStatus
from core.providers.pipeline.machine import RunState
from core.providers.pipeline.run import RunOutcome
from tests.pipeline.support import FakeQuotas, FakeSecrets, Harness, drive, goal, step

pytestmark = pytest.mark.asyncio


def harness(tmp_path: Path, clock: FakeClock, g: object, **kw: object) -> Harness:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    h = Harness(g, run_dir, clock, tmp_path, **kw)  # type: ignore[arg-type]
    h.new_record()
    return h


def effects(tmp_path: Path) -> list[str]:
    path = tmp_path / "effects.log"
    return path.read_text().split() if path.exists() else []


def fx(tmp_path: Path, **extra: object) -> dict[str, object]:
    return {"effect": str(tmp_path / "effects.log"), **extra}


async def test_a_clean_run_walks_every_phase(tmp_path: Path, clock: FakeClock) -> None:
    g = goal([step("github", fx(tmp_path, stdout='["a","b"]', items=2)),
              step("rss", fx(tmp_path, items=3))],
             [step("aggregate", fx(tmp_path, items=5)), step("filter", fx(tmp_path, items=5)),
              step("deliver", fx(tmp_path))])
    outcome, rep, rec = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.COMPLETED
    assert rep.progress_states == ["triggered", "source_check", "fetching", "aggregating",
                                   "filtering", "delivering", "completed"]
    assert sorted(effects(tmp_path)) == sorted(["github", "rss", "aggregate", "filter",
                                                "deliver"])
    assert rec.state is RunState.COMPLETED and not rec.degraded and rec.item_count == 5
    assert rec.completed == ["github", "rss", "aggregate", "filter", "deliver"] or set(
        rec.completed) == {"github", "rss", "aggregate", "filter", "deliver"}
    assert (tmp_path / "run" / "github.out").read_text().strip() == '["a","b"]'
    assert rec.sources["github"].checksum and rec.sources["github"].artifact == "github.out"
    cov = json.loads((tmp_path / "run" / "coverage.json").read_text())
    assert cov["sources_used"] == "2/2" and cov["degraded"] is False
    assert "sources 2/2" in rep.completions[0] and "DEGRADED" not in rep.completions[0]


async def test_the_run_variables_reach_the_step(tmp_path: Path, clock: FakeClock) -> None:
    script = ("import os; print(os.environ['GOALKEEPER_RUN_ID'], os.environ['GOALKEEPER_STEP'], "
              "os.path.isdir(os.environ['GOALKEEPER_RUN_DIR']), "
              "os.environ['GOALKEEPER_REPORT'].endswith('env.json'), os.getcwd())")
    import sys

    (tmp_path / "sub").mkdir()
    g = goal([], [{"name": "env", "command": [sys.executable, "-c", script], "cwd": "sub"}])
    outcome, _, _ = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.COMPLETED
    out = (tmp_path / "run" / "env.out").read_text().split()
    assert out == ["digest-1", "env", "True", "True", str((tmp_path / "sub").resolve())]


async def test_partial_failure_degrades_explicitly(tmp_path: Path, clock: FakeClock) -> None:
    g = goal([step("github", {"exit": 77}), step("rss", {"items": 4}),
              step("aihot", {"sleep": 5}, timeout=0.3, retries=1)],
             [step("aggregate", {"items": 4}), step("deliver")], min_sources=1)
    outcome, rep, rec = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.COMPLETED
    assert "partial_aggregating" in rep.progress_states and "aggregating" not in (
        rep.progress_states)
    assert rec.degraded
    cov = json.loads((tmp_path / "run" / "coverage.json").read_text())
    assert cov["sources_used"] == "1/3" and cov["items_possibly_incomplete"] is True
    assert {(m["name"], m["reason"], m["attempts"]) for m in cov["missing"]} == {
        ("github", "auth_failed", 1), ("aihot", "timeout", 2)}
    assert "DEGRADED" in rep.completions[0] and "github: auth_failed ×1" in rep.completions[0]
    assert "run_degraded" in rep.events() and rep.events().count("step_retry") == 1


async def test_too_few_sources_block_and_alert(tmp_path: Path, clock: FakeClock) -> None:
    g = goal([step("github", {"exit": 77}), step("rss", {"exit": 3}), step("hn")],
             [step("aggregate")], min_sources=2)
    outcome, rep, rec = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.BLOCKED
    assert rep.progress_states[-2:] == ["blocked", "idle"]
    assert rep.blocks[0][0] is PauseReason.AUTH
    assert "too few sources answered: 1 of 3, need 2" in rep.blocks[0][1]
    assert rec.state is RunState.IDLE and rec.blocked_in is RunState.FETCHING
    assert rec.sources["rss"].attempts == 1  # a permanent failure is not retried


async def test_a_short_rate_limit_is_waited_in_process(tmp_path: Path, clock: FakeClock) -> None:
    g = goal([step("github", {"report": {"status": "rate_limited", "retry_after": 30}},
                   {"items": 1})], [step("aggregate")])
    start = clock.now()
    outcome, _rep, rec = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.COMPLETED
    waited = (clock.now() - start).total_seconds()
    assert 30 <= waited <= 32
    assert rec.sources["github"].attempts == 2


async def test_a_400_digit_retry_after_is_ignored_as_malformed(tmp_path: Path,
                                                               clock: FakeClock) -> None:
    g = goal([step("github", {"report": {"status": "rate_limited", "retry_after": 10 ** 400,
                                         "items": 10 ** 400}},
                   {"items": 1})], [step("aggregate")])
    outcome, _rep, rec = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.COMPLETED  # retried by backoff, not "internal error"
    assert rec.sources["github"].attempts == 2


async def test_a_long_rate_limit_pauses_for_quota_and_resume_reuses_finished_work(
        tmp_path: Path, clock: FakeClock) -> None:
    g = goal([step("github", fx(tmp_path, report={"status": "rate_limited",
                                                   "retry_after": "600"}), fx(tmp_path)),
              step("rss", fx(tmp_path))], [step("aggregate", fx(tmp_path))])
    h = harness(tmp_path, clock, g)
    outcome, rep, rec = await h.run()
    assert outcome is RunOutcome.WAITING
    assert rep.limits == [((), clock.now() + timedelta(seconds=600), "rate limited for 600 s")]
    assert rec.state is RunState.FETCHING and rec.sources["rss"].status is StepStatus.OK
    assert rec.sources["github"].status is StepStatus.PENDING
    clock.advance(600)
    outcome, _, rec = await h.run()
    assert outcome is RunOutcome.COMPLETED
    assert sorted(effects(tmp_path)) == ["aggregate", "github", "github", "rss"]


async def test_quota_exhausted_with_a_reset_waits_until_it(tmp_path: Path,
                                                           clock: FakeClock) -> None:
    g = goal([], [step("deliver", {"report": {"status": "quota_exhausted",
                                              "reset_at": "2026-07-08T00:00:00Z"}})])
    outcome, rep, _ = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.WAITING
    assert rep.limits[0][1] is not None and rep.limits[0][1].isoformat().startswith("2026-07-08")


async def test_a_stage_auth_failure_blocks_and_resume_reruns_only_that_stage(
        tmp_path: Path, clock: FakeClock) -> None:
    g = goal([step("github", fx(tmp_path))],
             [step("aggregate", fx(tmp_path)), step("deliver", {"exit": 77}, fx(tmp_path))])
    h = harness(tmp_path, clock, g)
    outcome, rep, rec = await h.run()
    assert outcome is RunOutcome.BLOCKED and rep.blocks[0][0] is PauseReason.AUTH
    assert "blocked in delivering" in rep.blocks[0][1]
    assert rec.stages["deliver"].attempts == 1 and rec.stages["deliver"].reason == "auth_failed"
    assert (tmp_path / "run" / "aggregate.out").exists()  # the result is kept
    outcome, rep, rec = await h.run()  # the credential was fixed: resume
    assert outcome is RunOutcome.COMPLETED
    assert rep.progress_states[0] == "triggered" and "run_continued" in rep.events()
    assert sorted(effects(tmp_path)) == ["aggregate", "deliver", "github"]


async def test_too_few_items_block_the_filter(tmp_path: Path, clock: FakeClock) -> None:
    g = goal([step("github")], [step("aggregate", {"items": 9}),
                                step("filter", {"items": 3}, min_items=5), step("deliver")])
    outcome, rep, rec = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.BLOCKED and rep.blocks[0][0] is PauseReason.ERROR
    assert "too few valid items (3 items, need at least 5)" in rep.blocks[0][1]
    assert rec.blocked_in is RunState.FILTERING and rec.stages["filter"].attempts == 1


async def test_user_quota_debits_and_waits(tmp_path: Path, clock: FakeClock) -> None:
    reset = clock.now() + timedelta(hours=3)
    quotas = FakeQuotas({"api": 1.0}, {"api": reset})
    g = goal([step("a", quota="api"), step("b", quota="api")], [step("aggregate")])
    outcome, rep, rec = await harness(tmp_path, clock, g, quotas=quotas).run()
    assert outcome is RunOutcome.WAITING
    assert rep.limits[0][0] == ("quota:api",) and rep.limits[0][1] == reset
    assert quotas.debits == [("api", 1.0)]
    assert sorted(s.status for s in rec.sources.values()) == [StepStatus.OK, StepStatus.PENDING]


async def test_secrets_are_injected_only_where_named(tmp_path: Path, clock: FakeClock) -> None:
    import sys

    show = "import os; print(os.environ.get('TOKEN', '-'))"
    g = goal([{"name": "with", "command": [sys.executable, "-c", show], "secrets": ["TOKEN"]},
              {"name": "without", "command": [sys.executable, "-c", show]}], [step("agg")])
    h = harness(tmp_path, clock, g, secrets=FakeSecrets({"TOKEN": "s3cr3t-value"}))
    outcome, _, _ = await h.run()
    assert outcome is RunOutcome.COMPLETED
    assert (tmp_path / "run" / "with.out").read_text().strip() == "********"  # masked
    assert (tmp_path / "run" / "without.out").read_text().strip() == "-"


async def test_a_missing_secret_makes_the_source_missing(tmp_path: Path,
                                                         clock: FakeClock) -> None:
    g = goal([step("github", secrets=["GITHUB_TOKEN"]), step("rss")], [step("agg")],
             min_sources=1)
    outcome, _rep, rec = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.COMPLETED and rec.degraded
    assert rec.sources["github"].reason == "auth_failed"
    assert "goalkeeper secret set GITHUB_TOKEN" in (rec.sources["github"].detail or "")
    assert rec.sources["github"].attempts == 0


async def test_a_stage_that_cannot_start_blocks_at_source_check(tmp_path: Path,
                                                                clock: FakeClock) -> None:
    g = goal([step("github", fx(tmp_path))],
             [{"name": "deliver", "command": ["no-such-program-here"]}])
    outcome, rep, rec = await harness(tmp_path, clock, g).run()
    assert outcome is RunOutcome.BLOCKED and rep.blocks[0][0] is PauseReason.ERROR
    assert rec.blocked_in is RunState.SOURCE_CHECK and effects(tmp_path) == []
    assert "'no-such-program-here' is not on PATH" in rep.blocks[0][1]


async def test_cancelling_stops_the_step_and_resume_runs_it_again(tmp_path: Path,
                                                                  clock: FakeClock) -> None:
    g = goal([step("github", fx(tmp_path))],
             [step("aggregate", {"sleep": "forever", "marker": "started"}, fx(tmp_path))])
    h = harness(tmp_path, clock, g)
    executor, _ = h.executor()
    task = asyncio.ensure_future(executor.execute())
    marker = tmp_path / "run" / "started"
    for _ in range(400):
        if marker.exists():
            break
        await asyncio.sleep(0.01)
    pid = int(marker.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the whole step was stopped
    rec = CheckpointStore(tmp_path / "run").load()
    assert rec.state is RunState.AGGREGATING and rec.stages["aggregate"].status is (
        StepStatus.PENDING)
    outcome, _, _ = await h.run()
    assert outcome is RunOutcome.COMPLETED
    assert sorted(effects(tmp_path)) == ["aggregate", "github"]


async def test_a_changed_artifact_refuses_to_continue(tmp_path: Path, clock: FakeClock) -> None:
    g = goal([step("github", {"stdout": "data"})], [step("deliver", {"exit": 1})])
    h = harness(tmp_path, clock, g)
    outcome, _, _ = await h.run()
    assert outcome is RunOutcome.BLOCKED
    (tmp_path / "run" / "github.out").write_text("tampered")
    before = (tmp_path / "run" / "state.json").read_bytes()
    outcome, rep, _ = await h.run()
    assert outcome is RunOutcome.BLOCKED
    assert "changed since it finished" in rep.blocks[0][1] and "--new" in rep.blocks[0][1]
    assert (tmp_path / "run" / "state.json").read_bytes() == before


async def test_drive_helper_is_not_needed_without_sleeps(tmp_path: Path,
                                                         clock: FakeClock) -> None:
    g = goal([], [step("only")])
    h = harness(tmp_path, clock, g)
    executor, rep = h.executor()
    assert await drive(executor.execute(), clock) is RunOutcome.COMPLETED
    assert rep.progress_states == ["triggered", "source_check", "fetching", "aggregating",
                                   "completed"]


async def test_a_leftover_step_without_a_recorded_pid_is_found_and_stopped(
        tmp_path: Path, clock: FakeClock) -> None:
    import subprocess
    import sys

    from core.providers.pipeline.steps import stop_run_leftovers

    env = {**os.environ, "GOALKEEPER_RUN_DIR": str(tmp_path / "run-9"),
           "GOALKEEPER_STEP": "deliver"}
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env,
                              start_new_session=True)
    try:
        for _ in range(100):
            if b"GOALKEEPER_STEP=deliver" in Path(f"/proc/{orphan.pid}/environ").read_bytes():
                break
            await asyncio.sleep(0.01)
        assert await stop_run_leftovers(tmp_path / "run-8", 0.5) == []
        assert await stop_run_leftovers(tmp_path / "run-9", 0.5) == ["deliver"]
        assert orphan.wait(5) is not None
    finally:
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()


async def test_a_continued_run_keeps_the_item_count_of_its_stages(tmp_path: Path,
                                                                  clock: FakeClock) -> None:
    g = goal([step("a", {"items": 9}), step("b", {"items": 5})],
             [step("filter", {"items": 6}), step("deliver", {"exit": 77}, {})])
    h = harness(tmp_path, clock, g)
    outcome, _, rec = await h.run()
    assert outcome is RunOutcome.BLOCKED and rec.item_count == 6
    outcome, _, rec = await h.run()
    assert outcome is RunOutcome.COMPLETED and rec.item_count == 6


async def test_a_secret_cut_by_the_detail_limit_is_still_masked(tmp_path: Path,
                                                                clock: FakeClock) -> None:
    # the report's detail is cut to 500 characters: masking after the cut would leave the
    # secret's first half (no longer a whole secret) in the state file and the history
    import sys

    token = "tok-5e1f0c2a9b7d4e63"
    write = ("import json, os; json.dump({'status': 'auth_failed', 'detail': 'x' * 490 + "
             "os.environ['TOKEN']}, open(os.environ['GOALKEEPER_REPORT'], 'w'))")
    g = goal([{"name": "leaky", "command": [sys.executable, "-c", write], "secrets": ["TOKEN"]},
              step("rss")], [step("agg")], min_sources=1)
    h = harness(tmp_path, clock, g, secrets=FakeSecrets({"TOKEN": token}))
    outcome, rep, rec = await h.run()
    assert outcome is RunOutcome.COMPLETED and rec.sources["leaky"].reason == "auth_failed"
    assert (rec.sources["leaky"].detail or "").startswith("x" * 490)
    assert token[:10] not in (tmp_path / "run" / "state.json").read_text()
    assert all(token[:10] not in reason for _, reason, _ in rep.notes)


async def test_a_secret_cut_by_the_capture_limit_is_still_masked(
        tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from core.providers.pipeline import steps

    monkeypatch.setattr(steps, "MAX_CAPTURE_BYTES", 100)
    token = "tok-5e1f0c2a9b7d4e63"
    show = "import os, sys; sys.stdout.write('y' * 90 + os.environ['TOKEN'])"
    g = goal([{"name": "src", "command": [sys.executable, "-c", show], "secrets": ["TOKEN"]}],
             [{"name": "agg", "command": [sys.executable, "-c", show], "secrets": ["TOKEN"],
               "output": "agg.txt"}])
    h = harness(tmp_path, clock, g, secrets=FakeSecrets({"TOKEN": token}))
    outcome, _, _ = await h.run()
    assert outcome is RunOutcome.BLOCKED  # agg.txt was never written: that is fine here
    artifact = (tmp_path / "run" / "src.out").read_text()
    assert artifact.startswith("y" * 90) and token[:8] not in artifact
    assert token[:8] not in (tmp_path / "run" / "logs" / "agg.log").read_text()
