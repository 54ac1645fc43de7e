"""The state file: atomic generations, precise refusals, the previous good generation kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.providers.pipeline.checkpoint import (
    CheckpointError,
    CheckpointStore,
    RunRecord,
    StepRecord,
    StepStatus,
    file_sha256,
)
from core.providers.pipeline.machine import RunState


def record(clock: FakeClock) -> RunRecord:
    now = clock.now()
    return RunRecord(run_id="digest-2026-07-10", goal="pipeline:digest", trigger="schedule",
                     trigger_time=now, started_at=now, updated_at=now,
                     sources={"github": StepRecord()}, stages={"aggregate": StepRecord()})


def test_round_trip_with_the_seed_fields(tmp_path: Path, clock: FakeClock) -> None:
    store = CheckpointStore(tmp_path)
    rec = record(clock)
    store.save(rec, clock.now())
    rec.state = RunState.FETCHING
    rec.sources["github"].status = StepStatus.OK
    rec.item_count = 18
    clock.advance(5)
    store.save(rec, clock.now())
    loaded = CheckpointStore(tmp_path).load()
    assert loaded == rec and loaded.generation == 2 and loaded.updated_at == clock.now()
    data = json.loads((tmp_path / "state.json").read_text())
    for key in ("run_id", "trigger_time", "state", "completed", "sources", "item_count",
                "last_error", "updated_at", "checksum", "generation"):
        assert key in data
    assert json.loads((tmp_path / "state.prev.json").read_text())["generation"] == 1


def corrupt_cases() -> list[tuple[str, object]]:
    return [
        ("truncated", lambda raw: raw[: len(raw) // 2]),
        ("empty", lambda raw: b""),
        ("checksum", lambda raw: raw.replace(b'"item_count": 18', b'"item_count": 19')),
        ("no checksum", lambda raw: json.dumps(
            {k: v for k, v in json.loads(raw).items() if k != "checksum"}).encode()),
    ]


@pytest.mark.parametrize(("case", "damage"), corrupt_cases())
def test_a_damaged_state_file_is_refused_precisely_and_nothing_is_overwritten(
        tmp_path: Path, clock: FakeClock, case: str, damage: object) -> None:
    store = CheckpointStore(tmp_path)
    rec = record(clock)
    rec.item_count = 18
    store.save(rec, clock.now())
    store.save(rec, clock.now())
    raw = (tmp_path / "state.json").read_bytes()
    prev = (tmp_path / "state.prev.json").read_bytes()
    (tmp_path / "state.json").write_bytes(damage(raw))  # type: ignore[operator]
    fresh = CheckpointStore(tmp_path)
    with pytest.raises(CheckpointError) as info:
        fresh.load()
    assert {"truncated": "truncated", "empty": "empty", "checksum": "fails its checksum",
            "no checksum": "no checksum"}[case] in info.value.reason
    assert (tmp_path / "state.prev.json").read_bytes() == prev
    assert fresh.previous_generation() == 1


def test_a_missing_state_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="missing"):
        CheckpointStore(tmp_path).load()


def test_artifacts_of_completed_steps_are_verified(tmp_path: Path, clock: FakeClock) -> None:
    store = CheckpointStore(tmp_path)
    rec = record(clock)
    (tmp_path / "github.out").write_text("[1, 2, 3]")
    rec.sources["github"] = StepRecord(status=StepStatus.OK, artifact="github.out",
                                       checksum=file_sha256(tmp_path / "github.out"))
    assert store.verify_artifacts(rec) is None
    (tmp_path / "github.out").write_text("[1, 2]")
    assert "changed since it finished" in (store.verify_artifacts(rec) or "")
    (tmp_path / "github.out").unlink()
    assert "missing" in (store.verify_artifacts(rec) or "")
