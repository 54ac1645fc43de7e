"""The pipeline provider: added goal files become goals ``pipeline:<name>``, runs become their work.

* **discover** lists the goal files added with ``goalkeeper add`` (idle goals); a goal file whose
  text was never approved (:mod:`.approval`) is listed too, but runs nothing and is a health
  problem (:meth:`attention`) until ``goalkeeper approve`` records it;
* **read_quotas** reports the user quotas of ``config.toml`` from the ledger;
* **start_goal** starts a new run (or continues an unfinished one); **resume_goal** continues the
  unfinished run from its checkpoint — after a quota pause, a user pause, a block once the cause is
  fixed, or a crash (the engine resumes interrupted goals when a host starts) — or, after
  ``run --new``, starts a fresh one;
* **pause_goal** stops the running step (SIGTERM, then SIGKILL after the grace period); the step
  runs again on resume; **cancel_goal** also abandons the run;
* **next_wake / wake**: scheduled goals ask the core scheduler to wake them at their next instant;
* **control_ops**: ``run``, ``pipeline-remove``, ``quota-refill`` (see :mod:`.ops`).

Owns one task per running goal (strong references, stopped on :meth:`stop`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.atomic import private_dir, tighten
from core.clock import Clock
from core.commands import Start
from core.identity import host_id_of
from core.models import Goal, GoalState, HistoryEvent, PauseReason, QuotaReading
from core.paths import Paths
from core.providers.base import (
    ControlHandler,
    GoalObservation,
    Provider,
    RunnerError,
    StartOutcome,
)
from core.providers.pipeline.approval import approval_key, approval_text, approve_command
from core.providers.pipeline.catalog import CatalogEntry, PipelineCatalog, goal_name
from core.providers.pipeline.checkpoint import (
    CheckpointError,
    CheckpointStore,
    RunRecord,
    Unfinished,
)
from core.providers.pipeline.ledger import QuotaLedger
from core.providers.pipeline.ops import PipelineOps
from core.providers.pipeline.reporter import SinkReporter
from core.providers.pipeline.run import RunDeps, RunExecutor, SecretSource
from core.providers.pipeline.schedule import next_fire, parse_schedule
from core.quota.user import WINDOW_PREFIX, window_id
from core.redact import remember
from core.secrets import SecretStore
from core.settings import Settings

#: how long the host's start waits for the keyring (it may be locked or hung)
LEARN_SECRETS_SECONDS = 5.0

log = logging.getLogger(__name__)


@dataclass
class _Active:
    task: asyncio.Task[None]
    fence: int
    run_id: str


class PipelineProvider(Provider):
    """Runs pipeline goals. Attributes: ``catalog``, ``ledger``, ``last_run`` (goal → run id)."""

    name = "pipeline"
    description = "your own multi-step jobs, declared in goal files (`goalkeeper add FILE`)"

    def __init__(self, settings: Settings, paths: Paths, clock: Clock,
                 environ: Mapping[str, str], secrets: SecretSource | None = None,
                 rng: random.Random | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.clock = clock
        self.environ = dict(environ)
        self.catalog = PipelineCatalog(paths.data_dir / "pipelines")
        self.ledger = QuotaLedger(self.catalog.root / "quotas.db", settings.quotas)
        self.secrets: SecretSource = secrets or SecretStore()
        self.rng = rng or random.Random()
        self.last_run: dict[str, str] = {}
        self._active: dict[str, _Active] = {}
        #: goals whose next resume starts a fresh run (``run --new`` on a paused goal)
        self.fresh: set[str] = set()
        #: the trigger recorded by the next new run of a goal (manual / schedule)
        self.triggers: dict[str, str] = {}
        self._due: dict[str, datetime] = {}
        self.host_id = host_id_of(settings.host_id, paths.data_dir)
        #: goal name → the digest of its approved goal file, as last read from the store
        self.approved: dict[str, str] = {}
        #: goal files found in the data directory that wait for the user's approval
        self.waiting: set[str] = set()

    # -- lifecycle and discovery ---------------------------------------------------------------

    async def start(self) -> None:
        entries = await asyncio.to_thread(self.catalog.entries)
        # first, before the other providers store what they read: learning a secret only masks
        # it, so every file's, approved or not
        await self._learn_secrets(entries)
        await self._read_approvals(entries)
        self._plan_schedules(entries)

    async def _read_approvals(self, entries: list[CatalogEntry]) -> None:
        """Which goal files are approved, from the store (unchanged when it cannot be read)."""
        approved: dict[str, str] = {}
        try:
            for entry in entries:
                value = await self.sink.read_meta(approval_key(self.host_id, entry.name))
                if value:
                    approved[entry.name] = value
        except Exception as exc:  # the store is away: keep what was known
            log.info("pipeline approvals not read (%s)", type(exc).__name__)
            return
        self.approved = approved
        self.waiting = {e.name for e in entries if e.goal is not None and not self.is_approved(e)}

    def is_approved(self, entry: CatalogEntry) -> bool:
        return bool(entry.digest) and self.approved.get(entry.name) == entry.digest

    def attention(self) -> tuple[str, ...]:
        return tuple(approval_text(name) for name in sorted(self.waiting))

    async def approve(self, name: str, digest: str) -> bool:
        """Record that the user approved goal file ``name`` with text digest ``digest``; True
        when that is the file's text now (else it still waits: it changed meanwhile)."""
        await self.sink.write_meta(approval_key(self.host_id, name), digest)
        self.approved[name] = digest
        entries = await asyncio.to_thread(self.catalog.entries)
        self.waiting = {e.name for e in entries if e.goal is not None and not self.is_approved(e)}
        self._plan_schedules(entries)
        return name not in self.waiting

    async def _learn_secrets(self, entries: list[CatalogEntry]) -> None:
        """Read the keyring secrets the goal files name, so that the store and the logs mask
        them from the start — also where another provider meets them (an agent's prompt)."""
        names = sorted({n for e in entries if e.goal is not None
                        for spec in [*e.goal.source, *e.goal.stage] for n in spec.secret_names()})
        if not names:
            return
        try:
            async with asyncio.timeout(LEARN_SECRETS_SECONDS):
                values = await self.secrets.fetch(names)
        except Exception as exc:  # no keyring now: a run will say so when it needs one
            log.info("pipeline secrets not read at start (%s)", type(exc).__name__)
            return
        remember(v for v in values.values() if v)

    async def stop(self) -> None:
        for goal_id in list(self._active):
            await self.stop_task(goal_id)

    async def discover(self) -> list[GoalObservation]:
        entries = await asyncio.to_thread(self.catalog.entries)
        await self._read_approvals(entries)
        self._plan_schedules(entries)
        now = self.clock.now()
        found = []
        for entry in entries:
            if entry.goal is None:
                log.warning("pipeline %s: its goal file no longer validates: %s", entry.name,
                            entry.error)
                continue
            goal = entry.goal
            data: dict[str, Any] = {"file": entry.source, "schedule": goal.schedule,
                                    "timezone": goal.timezone}
            if entry.name in self.waiting:
                data["needs_approval"] = approve_command(entry.name)
            found.append(GoalObservation(
                id=entry.goal_id, title=goal.title or f"pipeline {goal.name}",
                state=GoalState.IDLE, observed_at=now,
                windows=tuple(window_id(q) for q in goal.quota_names()),
                auto_resume=goal.auto_resume, data=data))
        return found

    async def read_quotas(self, fresh: bool = False) -> list[QuotaReading]:
        return await asyncio.to_thread(self.ledger.readings, self.clock.now())

    def quota_readings(self, windows: tuple[str, ...]) -> tuple[QuotaReading, ...]:
        now = self.clock.now()
        return tuple(self.ledger.reading(w.removeprefix(WINDOW_PREFIX), now) for w in windows)

    # -- the runner role -----------------------------------------------------------------------

    async def start_goal(self, goal: Goal, fence: int) -> StartOutcome:
        entry = self._entry(goal.id)
        unfinished = None if goal.id in self.fresh else self.unfinished(entry)
        self.fresh.discard(goal.id)
        if unfinished is None:
            unfinished = self.new_run(entry, self.triggers.pop(goal.id, "manual"))
        self.launch(goal.id, fence, entry, unfinished)
        return StartOutcome.STARTED

    async def resume_goal(self, goal: Goal, fence: int) -> StartOutcome:
        entry = self._entry(goal.id)
        if goal.id in self.fresh:
            self.fresh.discard(goal.id)
            self.launch(goal.id, fence, entry, self.new_run(entry, "manual"))
            return StartOutcome.STARTED
        unfinished = self.unfinished(entry)
        if unfinished is None:
            # nothing left to continue (e.g. an idle pipeline the user had paused): idle again
            self.sink.goal_rested(goal.id, fence, "no unfinished run to continue",
                                  idle_again=True)
            return StartOutcome.STARTED
        self.launch(goal.id, fence, entry, unfinished)
        return StartOutcome.STARTED

    async def pause_goal(self, goal: Goal) -> None:
        await self.stop_task(goal.id)

    async def cancel_goal(self, goal: Goal) -> None:
        await self.stop_task(goal.id)
        entry = self.catalog.get(goal_name(goal.id))
        if entry is not None:
            self.abandon(entry, "the goal was cancelled")

    def control_ops(self) -> Mapping[str, ControlHandler]:
        return PipelineOps(self).handlers()

    # -- runs ----------------------------------------------------------------------------------

    def _entry(self, goal_id: str) -> CatalogEntry:
        entry = self.catalog.get(goal_name(goal_id))
        if entry is None:
            raise RunnerError(f"no goal file is added for {goal_id} (`goalkeeper add FILE`)")
        if entry.goal is None:
            raise RunnerError(f"the goal file of {goal_id} no longer validates: {entry.error}")
        if not self.is_approved(entry):
            self.waiting.add(entry.name)
            raise RunnerError(approval_text(entry.name))
        return entry

    def unfinished(self, entry: CatalogEntry) -> Unfinished | None:
        """The unfinished run's store and record (or why its state file is untrustworthy)."""
        run_id = self.catalog.current(entry)
        if run_id is None:
            return None
        store = CheckpointStore(entry.run_dir(run_id))
        try:
            record = store.load()
        except CheckpointError as exc:
            return store, exc
        if record.finished:
            self.catalog.set_current(entry, None)
            return None
        return store, record

    def new_run(self, entry: CatalogEntry, trigger: str) -> Unfinished:
        assert entry.goal is not None
        now = self.clock.now()
        day = now.astimezone(entry.goal.zone() or self.clock.local_zone()).date().isoformat()
        run_id = self.catalog.new_run_id(entry, day)
        run_dir = entry.run_dir(run_id)
        private_dir(run_dir.parent)
        run_dir.mkdir()  # a new run's own: it must not exist yet
        tighten(run_dir)
        record = RunRecord(run_id=run_id, goal=entry.goal_id, trigger=trigger, trigger_time=now,
                           started_at=now, updated_at=now)
        store = CheckpointStore(run_dir)
        store.save(record, now)
        self.catalog.set_current(entry, run_id)
        return store, record

    def abandon(self, entry: CatalogEntry, why: str) -> str | None:
        """Mark the unfinished run abandoned (kept on disk, recorded in history)."""
        unfinished = self.unfinished(entry)
        self.catalog.set_current(entry, None)
        if unfinished is None:
            return None
        store, record = unfinished
        run_id = store.run_dir.name
        if isinstance(record, RunRecord):
            record.abandoned = True
            record.last_error = why
            store.save(record, self.clock.now())
        self.sink.goal_noted(entry.goal_id, HistoryEvent.RUN_ABANDONED,
                             f"run {run_id} abandoned: {why}", {"run_id": run_id})
        return run_id

    def launch(self, goal_id: str, fence: int, entry: CatalogEntry, unfinished: Unfinished) -> None:
        store, record = unfinished
        self.last_run[goal_id] = store.run_dir.name
        task = asyncio.ensure_future(self._execute(goal_id, fence, entry, store, record))
        task.set_name(f"pipeline:{goal_id}")
        self._active[goal_id] = _Active(task, fence, store.run_dir.name)
        task.add_done_callback(lambda done: self._finished(goal_id, done))

    def _finished(self, goal_id: str, task: asyncio.Task[None]) -> None:
        active = self._active.get(goal_id)
        if active is not None and active.task is task:
            del self._active[goal_id]
        if not task.cancelled() and task.exception() is not None:
            log.error("pipeline run of %s crashed", goal_id, exc_info=task.exception())

    def is_active(self, goal_id: str) -> bool:
        return goal_id in self._active

    def active_run(self, goal_id: str) -> tuple[str, int] | None:
        """(run id, fence) of the goal's running run, if one is running here."""
        active = self._active.get(goal_id)
        return (active.run_id, active.fence) if active else None

    def forget_schedule(self, name: str) -> None:
        self._due.pop(name, None)

    async def stop_task(self, goal_id: str) -> None:
        active = self._active.pop(goal_id, None)
        if active is None or active.task.done():
            return
        active.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await active.task

    async def _execute(self, goal_id: str, fence: int, entry: CatalogEntry, store: CheckpointStore,
                       record: RunRecord | CheckpointError) -> None:
        if isinstance(record, CheckpointError):
            self.sink.goal_paused(goal_id, fence, PauseReason.ERROR,
                                  checkpoint_message(entry, store, record))
            return
        assert entry.goal is not None
        reporter = SinkReporter(self.sink, goal_id, fence, self.quota_readings,
                                lambda: self.catalog.set_current(entry, None))
        deps = RunDeps(self.clock, self.rng, self.ledger, self.secrets, self.environ,
                       self.settings.pipeline_stop_grace_seconds,
                       self.settings.pipeline_max_inline_wait_seconds)
        try:
            await RunExecutor(entry.goal, entry.base_dir, store, record, deps, reporter).execute()
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            log.exception("pipeline run %s failed inside Goalkeeper", record.run_id)
            self.sink.goal_paused(goal_id, fence, PauseReason.ERROR,
                                  f"run {record.run_id} stopped by an internal error: {exc}")

    # -- schedules -----------------------------------------------------------------------------

    def _plan_schedules(self, entries: list[CatalogEntry]) -> None:
        now = self.clock.now()
        due: dict[str, datetime] = {}
        for entry in entries:
            if entry.goal is None or entry.goal.schedule is None or not self.is_approved(entry):
                continue
            since = entry.last_fire or entry.added_at or now
            due[entry.name] = next_fire(parse_schedule(entry.goal.schedule), since,
                                        entry.goal.zone() or self.clock.local_zone())
        self._due = due

    def next_wake(self, now: datetime) -> datetime | None:
        return min(self._due.values(), default=None)

    async def zone_changed(self) -> None:
        """Schedules without a ``timezone`` of their own are in the local zone: planned again
        from their last fire, as a restart would plan them."""
        self._plan_schedules(await asyncio.to_thread(self.catalog.entries))

    async def wake(self, now: datetime) -> None:
        for name, due in sorted(self._due.items()):
            if due > now:
                continue
            entry = self.catalog.get(name)
            if (entry is None or entry.goal is None or entry.goal.schedule is None
                    or not self.is_approved(entry)):
                self._due.pop(name, None)
                continue
            await asyncio.to_thread(self.catalog.set_last_fire, name, now)
            self._due[name] = next_fire(parse_schedule(entry.goal.schedule), now,
                                        entry.goal.zone() or self.clock.local_zone())
            await self._fire(entry, due)

    async def _fire(self, entry: CatalogEntry, due: datetime) -> None:
        goal_id = entry.goal_id
        unfinished = self.unfinished(entry)
        if unfinished is not None or self.is_active(goal_id):
            run_id = unfinished[0].run_dir.name if unfinished else self._active[goal_id].run_id
            self.sink.goal_noted(goal_id, HistoryEvent.SCHEDULE_SKIPPED,
                                 f"scheduled run of {due.isoformat()} skipped: run {run_id} is "
                                 "unfinished", {"due": due.isoformat(), "run_id": run_id})
            return
        self.triggers[goal_id] = "schedule"
        result = await self.sink.perform(Start(goal_id), "schedule")
        if result.outcome.value != "resumed":
            self.triggers.pop(goal_id, None)
            self.sink.goal_noted(goal_id, HistoryEvent.SCHEDULE_SKIPPED,
                                 f"scheduled run of {due.isoformat()} skipped: {result.reason}",
                                 {"due": due.isoformat()})

    def describe(self) -> dict[str, Any]:
        return {"active": {g: a.run_id for g, a in self._active.items()},
                "due": {n: d.isoformat() for n, d in self._due.items()}}


def checkpoint_message(entry: CatalogEntry, store: CheckpointStore, error: CheckpointError) -> str:
    """The precise pause reason for an untrustworthy state file, with what the user can do."""
    text = (f"run {store.run_dir.name}: {error.reason} ({error.path}); completed work is not "
            "re-run blindly.")
    generation = store.previous_generation()
    if generation is not None:
        text += (f" The previous good generation ({generation}) is kept at {store.previous}: "
                 f"copy it over {store.path} and resume to continue from it, or")
    else:
        text += " You can"
    return text + f" start afresh with `goalkeeper run {entry.name} --new`."
