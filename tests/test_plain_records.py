"""The read path's records (:mod:`core.models.plain`): what ``status`` reads without pydantic is
what the models would have held — the same fields in the same order, the same defaults, the
same values of the same types — and a row they do not take becomes the model as before."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from core.models import Deferral, Exactness, Goal, GoalState, QuotaReading, Steering
from core.models.plain import (
    REQUIRED,
    PlainBudgetEntry,
    PlainDeferral,
    PlainGoal,
    PlainGoalPolicy,
    PlainLastRun,
    PlainPolicyPause,
    PlainQueuedStart,
    PlainQuotaReading,
    PlainRecord,
    PlainSteering,
)
from core.models.records import BudgetEntry, LastRun, PolicyPause, QueuedStart
from core.policies.goal_policy import GoalPolicy
from core.quota.machine import HysteresisPolicy, effective
from core.store import Mutation, SqliteStore
from core.store.sqlite import open_read_only
from tests.support.status_store import NOW, goals, readings

PAIRS: list[tuple[type[PlainRecord], type[BaseModel]]] = [
    (PlainGoal, Goal), (PlainSteering, Steering), (PlainGoalPolicy, GoalPolicy),
    (PlainDeferral, Deferral), (PlainBudgetEntry, BudgetEntry), (PlainLastRun, LastRun),
    (PlainPolicyPause, PolicyPause), (PlainQueuedStart, QueuedStart),
    (PlainQuotaReading, QuotaReading)]


@pytest.mark.parametrize(("record", "model"), PAIRS)
def test_each_record_has_its_models_fields_order_and_defaults(
        record: type[PlainRecord], model: type[BaseModel]) -> None:
    assert list(record.FIELDS) == list(model.model_fields)
    for name, info in model.model_fields.items():
        default = record.FIELDS[name][1]
        if info.is_required():
            assert default is REQUIRED, name
            continue
        mine = default() if callable(default) else default
        theirs = info.get_default(call_default_factory=True)
        if isinstance(theirs, BaseModel):
            assert mine == type(mine).load(theirs.model_dump(mode="json")), name
        else:
            assert (type(mine), mine) == (type(theirs), theirs), name


def same(record: Any, model: Any) -> None:
    """Field by field: equal values of the same types, nested records like their models."""
    for name in type(model).model_fields:
        mine, theirs = getattr(record, name), getattr(model, name)
        if isinstance(theirs, BaseModel):
            same(mine, theirs)
        elif isinstance(theirs, dict) and theirs and isinstance(
                next(iter(theirs.values())), BaseModel):
            assert mine.keys() == theirs.keys()
            for key in theirs:
                same(mine[key], theirs[key])
        else:
            assert (type(mine), mine) == (type(theirs), theirs), name


def varied_goals() -> list[Goal]:
    deferred = Goal(id="x:deferred", provider="x", title="t" * 900, state=GoalState.PAUSED,
                    next_resume_at=NOW + timedelta(hours=1), created_at=NOW, updated_at=NOW,
                    deferral={"rule": "allowed hours", "until": NOW + timedelta(hours=1)},
                    steering={"no_reset_note": "credits", "resume_slot": True,
                              "last_resume_trigger": "auto", "auto_resume_block": "claude",
                              "policy_pause": {"rule": "reserve", "at": NOW}},
                    pause_detail="why " * 500, hosted=True, resumed_at=NOW, fence=7)
    return [*goals(NOW), deferred]


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "goalkeeper.db"
    store = SqliteStore(path)
    for goal in varied_goals():
        store.transact(goal.id, lambda _cur, g=goal: Mutation(g, None, []))
    for reading in [*readings(NOW), QuotaReading(
            window_id="x:bucket", provider="x", label="bucket", kind="token_bucket",
            rate_per_second=0.5, burst=20, tokens=3, observed_at=NOW, limit_reached=True)]:
        store.save_reading(reading)
    store.close()
    return path


def test_plain_reads_hold_what_the_models_hold(store_path: Path) -> None:
    models, plain = open_read_only(store_path), open_read_only(store_path, plain_reads=True)
    try:
        as_models, as_records = models.list_goals(), plain.list_goals()
        assert [type(g) for g in as_records] == [PlainGoal] * len(as_models)
        for record, model in zip(as_records, as_models, strict=True):
            same(record, model)
            assert record.steering.stored() == model.steering.stored()
            assert list(record.steering.stored()) == list(model.steering.stored())
            assert record.deferred_by == model.deferred_by
        assert any(g.deferred_by for g in as_models)
        read_models, read_records = models.latest_readings(), plain.latest_readings()
        assert [type(r) for r in read_records] == [PlainQuotaReading] * len(read_models)
        policy = HysteresisPolicy(100, 90, 30, 600)
        for record, model in zip(read_records, read_models, strict=True):
            same(record, model)
            for later in (NOW, NOW + timedelta(hours=5), NOW + timedelta(days=9)):
                same(effective(record, later, policy), effective(model, later, policy))
    finally:
        models.close()
        plain.close()


def test_a_record_is_frozen_and_copies_with_changes() -> None:
    reading = PlainQuotaReading.load({"window_id": "a:b", "provider": "a", "label": "b",
                                       "observed_at": "2026-07-07T12:00:00Z"})
    with pytest.raises(AttributeError):
        reading.label = "c"  # type: ignore[misc]
    stale = reading.model_copy(update={"exactness": Exactness.STALE})
    assert (stale.exactness, reading.exactness) == (Exactness.STALE, Exactness.EXACT)


@pytest.mark.parametrize(("column", "value"), [
    ("state", "'weird'"), ("steering", "'{\"unknown\": 1}'"),
    ("policy", "'{\"priority\": \"5\"}'")])
def test_a_row_the_record_does_not_take_becomes_the_model(
        store_path: Path, column: str, value: str) -> None:
    """Said as before: the model's own words (or its lenient reading, for the priority)."""
    con = sqlite3.connect(store_path)
    con.execute(f"UPDATE goals SET {column} = {value} WHERE id = 'claude:sess-1'")
    con.commit()
    con.close()
    plain = open_read_only(store_path, plain_reads=True)
    try:
        if column == "policy":
            found = {g.id: g for g in plain.list_goals()}["claude:sess-1"]
            assert isinstance(found, Goal) and found.policy.priority == 5
        else:
            with pytest.raises(ValidationError):
                plain.list_goals()
    finally:
        plain.close()
