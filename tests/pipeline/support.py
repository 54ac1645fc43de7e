"""Helpers for pipeline tests: goal files from step behaviours, fakes for the executor's ports."""

from __future__ import annotations

import asyncio
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.clock import FakeClock
from core.models import PauseReason
from core.providers.pipeline.attempts import Debit
from core.providers.pipeline.checkpoint import CheckpointStore, RunRecord
from core.providers.pipeline.goalfile import GoalFile
from core.providers.pipeline.run import RunDeps, RunExecutor, RunOutcome

FAKE_STEP = str(Path(__file__).with_name("fake_step.py"))


def step(name: str, *behaviours: dict[str, Any], **keys: Any) -> dict[str, Any]:
    """A step table running fake_step.py with ``behaviours`` (default: succeed)."""
    plan = list(behaviours) or [{}]
    return {"name": name, "command": [sys.executable, FAKE_STEP, json.dumps(plan)],
            "timeout": keys.pop("timeout", 20), "backoff": keys.pop("backoff", 1.0), **keys}


def goal(sources: Sequence[dict[str, Any]], stages: Sequence[dict[str, Any]],
         **keys: Any) -> GoalFile:
    return GoalFile.model_validate({"name": keys.pop("name", "digest"), "source": list(sources),
                                    "stage": list(stages), **keys})


@dataclass
class FakeReporter:
    """Records what the executor reports."""

    progress_states: list[str] = field(default_factory=list)
    notes: list[tuple[str, str, dict[str, object]]] = field(default_factory=list)
    limits: list[tuple[tuple[str, ...], datetime | None, str]] = field(default_factory=list)
    blocks: list[tuple[PauseReason, str]] = field(default_factory=list)
    completions: list[str] = field(default_factory=list)

    def progress(self, record: RunRecord) -> None:
        self.progress_states.append(record.state.value)

    def note(self, event: str, reason: str, detail: dict[str, object]) -> None:
        self.notes.append((event, reason, detail))

    def limited(self, windows: tuple[str, ...], until: datetime | None, detail: str) -> None:
        self.limits.append((windows, until, detail))

    def blocked(self, reason: PauseReason, detail: str) -> None:
        self.blocks.append((reason, detail))

    def completed(self, detail: str) -> None:
        self.completions.append(detail)

    def events(self) -> list[str]:
        return [n[0] for n in self.notes]


@dataclass
class FakeQuotas:
    """A quota gate with fixed balances; ``resets`` says when a refused debit fits again."""

    balances: dict[str, float] = field(default_factory=dict)
    resets: dict[str, datetime | None] = field(default_factory=dict)
    debits: list[tuple[str, float]] = field(default_factory=list)

    def problem(self, quota: str, cost: float) -> str | None:
        return None if quota in self.balances else f"quota {quota!r} is not defined"

    async def debit(self, quota: str, cost: float, now: datetime) -> Debit:
        if self.balances[quota] < cost:
            return Debit(False, f"quota:{quota}", self.resets.get(quota),
                         f"quota {quota}: {self.balances[quota]:g} left, {cost:g} needed")
        self.balances[quota] -= cost
        self.debits.append((quota, cost))
        return Debit(True, f"quota:{quota}")


@dataclass
class FakeSecrets:
    values: dict[str, str] = field(default_factory=dict)
    broken: str | None = None

    async def fetch(self, names: Sequence[str]) -> dict[str, str | None]:
        if self.broken:
            raise RuntimeError(self.broken)
        return {n: self.values.get(n) for n in names}


@dataclass
class Harness:
    """An executor factory for one goal and run directory."""

    goal: GoalFile
    run_dir: Path
    clock: FakeClock
    base_dir: Path
    quotas: FakeQuotas = field(default_factory=FakeQuotas)
    secrets: FakeSecrets = field(default_factory=FakeSecrets)
    environ: dict[str, str] = field(default_factory=dict)

    def new_record(self) -> RunRecord:
        now = self.clock.now()
        record = RunRecord(run_id="digest-1", goal=self.goal.goal_id, trigger="manual",
                           trigger_time=now, started_at=now, updated_at=now)
        CheckpointStore(self.run_dir).save(record, now)
        return record

    def executor(self, record: RunRecord | None = None,
                 reporter: FakeReporter | None = None) -> tuple[RunExecutor, FakeReporter]:
        store = CheckpointStore(self.run_dir)
        if record is None:
            record = store.load()
        reporter = reporter or FakeReporter()
        deps = RunDeps(self.clock, random.Random(3), self.quotas, self.secrets,
                       self.environ or _environ(), grace_seconds=0.5)
        return RunExecutor(self.goal, self.base_dir, store, record, deps, reporter), reporter

    async def run(self, record: RunRecord | None = None) -> tuple[RunOutcome, FakeReporter,
                                                                   RunRecord]:
        executor, reporter = self.executor(record)
        outcome = await drive(executor.execute(), self.clock)
        return outcome, reporter, CheckpointStore(self.run_dir).load()


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("GOALKEEPER_")}


async def drive(coro: Any, clock: FakeClock, limit: float = 30.0) -> Any:
    """Await ``coro``, moving the fake clock to each sleeper's wake-up as it sleeps."""
    task = asyncio.ensure_future(coro)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not task.done():
        await asyncio.sleep(0.005)
        nxt = clock.next_wakeup()
        if nxt is not None:
            clock.advance(max(nxt, 0.0) + 0.001)
        if loop.time() > deadline:
            task.cancel()
            raise AssertionError(f"not done within {limit} s")
    return task.result()


def later(clock: FakeClock, seconds: float) -> datetime:
    return clock.now() + timedelta(seconds=seconds)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def toml_text(top: dict[str, Any], sources: Sequence[dict[str, Any]],
              stages: Sequence[dict[str, Any]]) -> str:
    """A goal file's text from plain dicts (what `step` returns)."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in top.items()]
    for table, steps in (("source", sources), ("stage", stages)):
        for item in steps:
            lines += ["", f"[[{table}]]"] + [f"{k} = {_toml_value(v)}" for k, v in item.items()]
    return "\n".join(lines) + "\n"


def write_goal(directory: Path, top: dict[str, Any], sources: Sequence[dict[str, Any]],
               stages: Sequence[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{top['name']}.toml"
    path.write_text(toml_text(top, sources, stages))
    return path
