"""The Codex provider: live quota gauges and Codex goals from ``$CODEX_HOME``; resume via Codex.

Signals (through the sink): ``quota_observed`` for every window of each newer rate-limit snapshot
(rollout line, app-server read, or a sparse app-server update merged into the last one);
``goal_observed`` for each goal whose status or session changed in a rollout or in the goals
database; and, for goals it runs, ``goal_limited`` / ``goal_finished`` / ``goal_paused`` /
``goal_progress`` with the fence of the claim that started them.

Owns: the rollout index and the follow task that polls it (and the goals database) every
``poll_seconds``; the start index file in Goalkeeper's data directory; and the
:class:`~core.providers.codex.runner.CodexRunner` with every Codex process Goalkeeper started.
Goalkeeper itself never writes into ``$CODEX_HOME`` and never uses the network; the Codex
processes it starts are Codex, doing what Codex does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from core.clock import Clock
from core.models import Goal, HistoryEvent, QuotaReading
from core.providers.base import (
    GoalObservation,
    PreparedStart,
    Provider,
    QueuedWork,
    RunnerDeferred,
    RunnerError,
    StartOutcome,
)
from core.providers.codex import startindex
from core.providers.codex.config import CodexConfig, CodexNotFound
from core.providers.codex.early_reset import EarlyResetPolicy, EarlyResetPoll, looks_recovered
from core.providers.codex.exec_run import ExecRun
from core.providers.codex.follow import Found, RolloutIndex
from core.providers.codex.fresh_read import FreshReadError, read_fresh
from core.providers.codex.goals import GoalRecord, goal_id, observe, thread_of
from core.providers.codex.goals_db import DbGoals, GoalsDbError, read_goals, signature
from core.providers.codex.hosted import RunContext
from core.providers.codex.limits import GOAL_WINDOWS, RateSnapshot, merge
from core.providers.codex.queue import prepare as prepare_queued
from core.providers.codex.readings import to_readings
from core.providers.codex.rollout import (
    Event,
    GoalUpdate,
    RateLine,
    RolloutSessionMeta,
    TurnLimited,
)
from core.providers.codex.runner import CodexRunner
from core.providers.codex.startup import StartupState, session_meta
from core.providers.codex.startup_worker import read_start
from core.providers.codex.state import CodexState
from core.providers.codex.version import VersionCheck, identity, read_version

log = logging.getLogger(__name__)


class CodexProvider(Provider):
    """Codex goals (``codex:<thread-id>``) and quota windows (``codex:5h``, ``codex:weekly``,
    ``codex:monthly``, ``codex:credits``).

    Attributes:
        state: the newest snapshot, the goals and the sessions (:class:`CodexState`).
        index: the :class:`RolloutIndex` of ``$CODEX_HOME/sessions``.
        runner: the runs Goalkeeper hosts.
        early: the early-reset poll (:mod:`.early_reset`): fresh reads while a goal waits.
    """

    name = "codex"

    def __init__(self, config: CodexConfig, clock: Clock, index_file: Path | None = None,
                 rng: random.Random | None = None,
                 early_reset: EarlyResetPolicy | None = None) -> None:
        super().__init__()
        self.config = config
        self.clock = clock
        self._unreadable: dict[str, str] = {}
        self.index_file = index_file
        self.description = f"Codex sessions and goals in {config.home}"
        self.index = RolloutIndex(config.sessions)
        self.state = CodexState()
        self.runner = CodexRunner(RunContext(
            config=config, sink=lambda: self.sink, now=clock.now,
            snapshot=lambda: self.state.snapshot, rate_update=self._rate_update,
            finished=self._run_finished), self._poll_file)
        self.early = EarlyResetPoll(early_reset or EarlyResetPolicy(), rng or random.Random())
        self._version: tuple[tuple[str, int], VersionCheck] | None = None
        self._db_signature: tuple[tuple[str, int, int], ...] = ()
        self._read_apart = False  # a cold first read in a worker (startup_worker)
        self._follow_task: asyncio.Task[None] | None = None
        self._index_task: asyncio.Future[None] | None = None
        self._started_at = 0.0

    @property
    def snapshot(self) -> RateSnapshot | None:
        return self.state.snapshot

    # -- lifecycle -----------------------------------------------------------------------------

    def started_beside(self, others: Sequence[Provider]) -> None:
        """A cold first read goes to a worker only beside a provider whose own first pass holds
        the interpreter (Claude's history): alone, the worker's start would only add to it."""
        self._read_apart = any(other.heavy_start for other in others)

    async def start(self) -> None:
        began = self.clock.monotonic()
        start, cached = await asyncio.to_thread(self._read_start)
        if start.entries != cached:  # for the next start: off the way to the first gauges
            self._index_task = asyncio.ensure_future(
                asyncio.to_thread(startindex.save, self.index_file, start.entries))
        self.state.take_startup(start, self.index.by_thread)
        self._unreadable = dict(start.unreadable)
        self._started_at = self.clock.monotonic()
        log.info("codex: start-up read of %d rollouts in %.2f s: %d goals (%s)",
                 len(start.entries), self._started_at - began,
                 len(start.db.goals) if start.db else len(start.goals),
                 "goals database" if start.db else "from the rollouts")
        self._follow_task = asyncio.ensure_future(self._follow())
        self._follow_task.set_name("codex:follow")

    def read_problems(self) -> tuple[str, ...]:
        problems = {**self._unreadable, **self.index.unreadable}  # at start, and since
        return tuple(f"{path} ({why})" for path, why in sorted(problems.items()))

    def _read_start(self) -> tuple[StartupState, dict[str, startindex.StartIndexEntry]]:
        files = self.index.list_all()
        self._db_signature = signature(self.config.sqlite_home)
        cached = startindex.load(self.index_file)
        return read_start(files, self.config.sqlite_home, cached, self._read_apart), cached

    async def stop(self) -> None:
        if self._index_task is not None:
            await self._index_task  # a start index half written is no index (atomic write)
            self._index_task = None
        if self._follow_task is not None:
            self._follow_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follow_task
            self._follow_task = None
        await self.runner.stop_all()

    async def _follow(self) -> None:
        # the schedule is fixed from start(), so a slow poll or a late first run never drifts it
        due = self._started_at
        while True:
            due += self.config.poll_seconds
            await self.clock.sleep(max(0.0, due - self.clock.monotonic()))
            due = max(due, self.clock.monotonic() - self.config.poll_seconds)
            try:
                await self.poll()
            except Exception:
                log.exception("following the Codex sessions failed")

    # -- following -----------------------------------------------------------------------------

    async def poll(self, full: bool | None = None) -> None:
        """Read what the rollouts and the goals database gained since the last poll."""
        found, db = await asyncio.to_thread(self._poll_files, self.state.goal_threads(), full)
        for item in found:
            await self._handle(item)
        if db is not None:
            for record in self.state.take_db(db, self.index.by_thread):
                self._observed(record)

    def _poll_files(self, goal_threads: list[str], full: bool | None
                    ) -> tuple[list[Found], DbGoals | None]:
        """One worker-thread hop per poll: the rollouts, then the goals database."""
        return self.index.poll(goal_threads, full), self._changed_db()

    async def _poll_file(self, path: Path) -> list[Event]:
        found = await asyncio.to_thread(self.index.poll_file, path)
        for item in found:
            await self._handle(item, route=False)
        return [item.event for item in found]

    def _changed_db(self) -> DbGoals | None:
        current = signature(self.config.sqlite_home)
        if current == self._db_signature:
            return None
        self._db_signature = current
        try:
            return read_goals(self.config.sqlite_home)
        except GoalsDbError as exc:
            log.warning("%s", exc)
            return None

    async def _handle(self, item: Found, route: bool = True) -> None:
        event = item.event
        run = self.runner.runs.get("codex:" + (item.thread_id or ""))
        if route and isinstance(run, ExecRun):
            run.on_event(event)
        if isinstance(event, RateLine):
            if self.state.take_snapshot(event.snapshot):
                self._report_readings()
        elif isinstance(event, GoalUpdate):
            if event.thread_id not in self.state.metas:
                meta = await asyncio.to_thread(session_meta, item.path)
                if meta is not None:
                    self.state.metas[meta.thread_id] = meta
            self._observed(self.state.take_goal(event, item.path))
        elif isinstance(event, RolloutSessionMeta):
            self._observed(self.state.take_meta(event, item.path))
        elif isinstance(event, TurnLimited) and item.thread_id:
            self._observed(self.state.take_turn_limited(item.thread_id, event))

    def _observed(self, record: GoalRecord | None) -> None:
        if record is not None:
            self.sink.goal_observed(self.name, observe(record, self.state.db_seen))

    def _rate_update(self, snapshot: RateSnapshot, sparse: bool) -> None:
        """A snapshot from the app-server: a full read replaces, a sparse update merges."""
        merged = merge(self.state.snapshot, snapshot) if sparse else snapshot
        if self.state.take_snapshot(merged):
            self._report_readings()

    def _report_readings(self) -> None:
        for reading in self.readings():
            self.sink.quota_observed(reading)

    def readings(self) -> list[QuotaReading]:
        snapshot = self.state.snapshot
        if snapshot is None:
            return []
        return to_readings(snapshot, self.clock.now(), self.config.stale_after)

    # -- the early-reset poll ------------------------------------------------------------------

    def _waiting(self) -> list[GoalRecord]:
        return [r for r in self.state.book.records.values() if r.update.status == "usageLimited"]

    def next_wake(self, now: datetime) -> datetime | None:
        return self.early.due_at(now, (r.resets_at for r in self._waiting()))

    async def wake(self, now: datetime) -> None:
        """A fresh read while goals wait; an authoritative recovery wakes them at once."""
        due = self.early.due_at(now, (r.resets_at for r in self._waiting()))
        if due is None or due > now:
            return
        self.early.taken()
        try:
            snapshot = await read_fresh(self.config, now)
        except (FreshReadError, CodexNotFound) as exc:
            log.info("early-reset read failed: %s", exc)
            return
        if self.state.take_snapshot(snapshot):
            self._report_readings()
        if not looks_recovered(snapshot):
            return
        for record in self._waiting():
            log.info("Codex says the quota is back before the scheduled reset: waking %s",
                     record.thread_id)
            await self.sink.release(goal_id(record.thread_id), list(GOAL_WINDOWS))

    # -- the provider interface ----------------------------------------------------------------

    async def account_identity(self) -> str | None:
        """Which account Codex runs under (hosts on one account share its windows)."""
        from core.providers.codex.account import read_identity

        return await read_identity(self.config)

    async def discover(self) -> list[GoalObservation]:
        return [observe(record, self.state.db_seen)
                for record in self.state.book.records.values()]

    async def read_quotas(self, fresh: bool = False) -> list[QuotaReading]:
        """The gauges; ``fresh``: ask ``codex app-server`` now (raises when it cannot)."""
        if not fresh:
            return self.readings()
        try:
            snapshot = await read_fresh(self.config, self.clock.now())
        except CodexNotFound as exc:
            raise FreshReadError(str(exc)) from None
        self.state.take_snapshot(snapshot)
        return self.readings()

    async def start_goal(self, goal: Goal, fence: int) -> StartOutcome:
        raise RunnerError("Codex goals are started in Codex (/goal); Goalkeeper resumes them")

    async def prepare_start(self, work: QueuedWork) -> PreparedStart:
        """A queued goal, set paused in Codex now (:mod:`.queue`); the resume starts it."""
        if work.thread:
            rollout = self.index.path_of(work.thread)
            try:
                await self.runner.check_free(work.thread, rollout)
            except RunnerDeferred as exc:
                raise RunnerError(exc.reason) from None
        return await prepare_queued(self.config, work)

    async def resume_goal(self, goal: Goal, fence: int) -> StartOutcome:
        thread, cwd, rollout = self._where(goal)
        check = await self.version_check()
        if check is not None and check.note:
            self.sink.goal_noted(goal.id, HistoryEvent.CODEX_VERSION, check.note,
                                 {"version": check.text})
        return await self.runner.resume(goal.id, fence, thread, cwd, rollout,
                                        version=check.version if check else None)

    async def version_check(self) -> VersionCheck | None:
        """``codex --version`` against the supported range, read once per executable."""
        try:
            executable = self.config.executable()
        except CodexNotFound:
            return None
        key = identity(executable)
        if self._version is None or self._version[0] != key:
            check = await asyncio.to_thread(read_version, executable, self.config.env)
            self._version = (key, check)
            if check.note:
                log.warning("%s", check.note)
        return self._version[1]

    async def pause_goal(self, goal: Goal) -> None:
        thread, _, rollout = self._where(goal)
        await self.runner.pause(goal.id, thread, rollout)

    async def pause_goal_gracefully(self, goal: Goal) -> None:
        """Paused in Codex at once; the turn in progress may end first (:mod:`.runner`)."""
        thread, _, rollout = self._where(goal)
        await self.runner.pause_gracefully(goal.id, thread, rollout)

    async def cancel_goal(self, goal: Goal) -> None:
        # cancelled in Goalkeeper, paused in Codex: the user's objective is never cleared
        await self.pause_goal(goal)

    def _where(self, goal: Goal) -> tuple[str, str | None, Path | None]:
        thread = thread_of(goal.id)
        record = self.state.book.records.get(thread)
        cwd = (record.cwd if record else None) or goal.data.get("cwd")
        rollout = (record.rollout if record else None) or self.index.path_of(thread)
        if rollout is None and goal.data.get("rollout"):
            rollout = Path(goal.data["rollout"])
        return thread, cwd, rollout

    def _run_finished(self, goal_id: str) -> None:
        self.runner.finished(goal_id)

    def open_command(self, goal: Goal) -> list[str] | None:
        """``codex resume <thread>`` (then ``/goal resume``), to run in the session's cwd."""
        try:
            executable = self.config.executable()
        except CodexNotFound:
            executable = self.config.binary
        return [executable, "resume", thread_of(goal.id)]

    def describe(self) -> dict[str, Any]:
        version = self._version[1] if self._version else None
        return {"home": str(self.config.home), "files": len(self.index.files),
                "goals": len(self.state.book.records), "hosted": sorted(self.runner.runs),
                "codex_version": version.text if version else None,
                "codex_version_note": version.note if version else None}

