"""One run of a pipeline, phase by phase through the run state machine, checkpointed throughout.

:class:`RunExecutor` walks ``idle → triggered → source_check → fetching → stages → completed`` (or
``blocked → idle``), skipping every source and stage the checkpoint says is done — which is all a
resume is: after a crash, a quota pause, a user pause or a fixed credential, the same walk
continues where the state file says it stopped, reusing finished artifacts.

It reports through a :class:`RunReporter` (the provider turns that into fenced sink reports):
progress on every phase change, history notes (retries, missing sources, degradation), a quota
wait, a block (the alert: the goal pauses for ``auth`` or ``error``), completion.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from core.atomic import atomic_write_bytes
from core.clock import Clock
from core.i18n import N_
from core.models import HistoryEvent, PauseReason
from core.providers.pipeline.attempts import Ending, QuotaGate, StepDriver, StepEnd
from core.providers.pipeline.checkpoint import CheckpointStore, RunRecord, StepRecord, StepStatus
from core.providers.pipeline.coverage import coverage_json, sources_ok, summary
from core.providers.pipeline.goalfile import GoalFile, StepSpec
from core.providers.pipeline.machine import (
    RunEvent,
    RunState,
    enter_event,
    next_run_state,
    stage_phase,
)
from core.providers.pipeline.preflight import Problem, check_step
from core.providers.pipeline.steps import (
    StepContext,
    stop_leftover,
    stop_run_leftovers,
)
from core.redact import Redactor, remember, secret_environment


class RunReporter(Protocol):
    def progress(self, record: RunRecord) -> None: ...

    def note(self, event: HistoryEvent, reason: str, detail: dict[str, object]) -> None: ...

    def limited(self, windows: tuple[str, ...], until: datetime | None, detail: str) -> None: ...

    def blocked(self, reason: PauseReason, detail: str) -> None: ...

    def completed(self, detail: str) -> None: ...


class SecretSource(Protocol):
    async def fetch(self, names: Sequence[str]) -> dict[str, str | None]:
        """Values by name (None: not stored); raise an exception when no keyring is usable."""
        ...


@dataclass
class RunDeps:
    clock: Clock
    rng: random.Random
    quotas: QuotaGate
    secrets: SecretSource
    environ: Mapping[str, str]
    grace_seconds: float = 5.0
    max_inline_wait: float = 120.0


class RunOutcome(StrEnum):
    COMPLETED = "completed"
    BLOCKED = "blocked"
    WAITING = "waiting"  # paused for quota


class RunExecutor:
    """Drives one run. Owns its :class:`RunRecord` and writes it through the checkpoint store."""

    def __init__(self, goal: GoalFile, base_dir: Path, store: CheckpointStore,
                 record: RunRecord, deps: RunDeps, reporter: RunReporter) -> None:
        self.goal = goal
        self.store = store
        self.record = record
        self.deps = deps
        self.reporter = reporter
        # a step's output is masked of its secrets and of the host's own secret-looking
        # environment (which every step inherits)
        self.redactor = Redactor(secret_environment(deps.environ))
        self.secret_problems: dict[str, Problem] = {}
        self.ctx = StepContext(store.run_dir, record.run_id, base_dir, deps.environ,
                               deps.clock.now, deps.grace_seconds, redactor=self.redactor)

    # -- the walk ------------------------------------------------------------------------------

    async def execute(self) -> RunOutcome:
        """Continue the run until it completes, blocks or must wait for quota."""
        try:
            problem = await self._prepare()
            if problem is not None:
                self.reporter.blocked(PauseReason.ERROR, problem)
                return RunOutcome.BLOCKED
            while True:
                outcome = await self._step_once()
                if outcome is not None:
                    return outcome
        except asyncio.CancelledError:
            self._interrupted()
            raise

    async def _step_once(self) -> RunOutcome | None:
        state = self.record.state
        if state is RunState.COMPLETED:
            return self._complete()
        if state is RunState.BLOCKED:
            return self._alert()
        if state is RunState.IDLE:
            self._trigger()
        elif state is RunState.TRIGGERED:
            self._move(RunEvent.START)
        elif state is RunState.SOURCE_CHECK:
            self._source_check()
        elif state is RunState.FETCHING:
            return await self._fetch()
        else:
            return await self._stage()
        return None

    def save(self) -> None:
        self.store.save(self.record, self.deps.clock.now())

    def _move(self, event: RunEvent) -> None:
        self.record.state = next_run_state(self.record.run_id, self.record.state, event)
        self.save()
        self.reporter.progress(self.record)

    # -- preparing a (re)start -----------------------------------------------------------------

    async def _prepare(self) -> str | None:
        """Sync the steps with the goal file, check artifacts, stop leftovers, load secrets."""
        self._sync_steps()
        problem = self.store.verify_artifacts(self.record)
        if problem is not None:
            return (f"run {self.record.run_id}: {problem}; completed work is not re-run "
                    f"blindly — restore it, or start afresh with `goalkeeper run "
                    f"{self.goal.name} --new`")
        await self._stop_leftovers()
        self.record.waiting_until = None
        await self._load_secrets()
        self.save()
        return None

    async def _stop_leftovers(self) -> None:
        """Steps a crashed host left running: stopped, and run again (never two at once)."""
        grace = self.deps.grace_seconds
        for name, step in self._all_steps():
            if step.status is StepStatus.RUNNING:
                killed = await stop_leftover(step.pid, step.pid_started, grace)
                step.status, step.pid, step.pid_started = StepStatus.PENDING, None, None
                self.reporter.note(HistoryEvent.STEP_INTERRUPTED,
                                   f"{name}: interrupted; it runs again",
                                   {"step": name, "leftover_stopped": killed})
        for name in await stop_run_leftovers(self.store.run_dir, grace):
            self.reporter.note(HistoryEvent.STEP_INTERRUPTED,
                               f"{name}: a leftover process was stopped",
                               {"step": name, "leftover_stopped": True})

    def _sync_steps(self) -> None:
        """Steps added to the goal file since the run began are pending; removed ones dropped."""
        for table, specs in ((self.record.sources, self.goal.source),
                             (self.record.stages, self.goal.stage)):
            names = [s.name for s in specs]
            for name in list(table):
                if name not in names:
                    del table[name]
            for name in names:
                table.setdefault(name, StepRecord())

    def _all_steps(self) -> list[tuple[str, StepRecord]]:
        return [*self.record.sources.items(), *self.record.stages.items()]

    async def _load_secrets(self) -> None:
        wanted = sorted({n for spec in self._specs() if not self._done(spec)
                         for n in spec.secret_names()})
        if not wanted:
            return
        try:
            values = await self.deps.secrets.fetch(wanted)
        except Exception as exc:
            problem = Problem("config_error", f"secrets unavailable: {exc}")
            self.secret_problems = dict.fromkeys(wanted, problem)
            return
        for name in wanted:
            value = values.get(name)
            if value is None:
                self.secret_problems[name] = Problem(
                    "auth_failed", f"secret {name} is not in the keyring "
                                   f"(`goalkeeper secret set {name}`)")
            else:
                self.ctx.secrets[name] = value
                self.redactor.add(value)
                remember([value])  # and masked in the store and the logs, too

    def _specs(self) -> list[StepSpec]:
        return [*self.goal.source, *self.goal.stage]

    def _done(self, spec: StepSpec) -> bool:
        return self.record.step(spec.name).status is StepStatus.OK

    def _interrupted(self) -> None:
        for _, step in self._all_steps():
            if step.status is StepStatus.RUNNING:
                step.status, step.pid, step.pid_started = StepStatus.PENDING, None, None
        self.save()

    # -- phases --------------------------------------------------------------------------------

    def _trigger(self) -> None:
        again = self.record.blocked_in is not None
        for _, step in self._all_steps():
            if step.status in (StepStatus.MISSING, StepStatus.FAILED):
                step.status, step.attempts, step.reason, step.detail = (
                    StepStatus.PENDING, 0, None, None)
        self.record.last_error = self.record.blocked_reason = None
        self.record.blocked_in = None
        self.record.degraded = False
        self._move(RunEvent.TRIGGER)
        self.reporter.note(HistoryEvent.RUN_CONTINUED if again else HistoryEvent.RUN_STARTED,
                           f"run {self.record.run_id} ({self.record.trigger})",
                           {"run_id": self.record.run_id, "trigger": self.record.trigger})

    def _source_check(self) -> None:
        for spec in self.goal.source:
            step = self.record.sources[spec.name]
            if step.status is StepStatus.OK:
                continue
            problem = self._check(spec)
            if problem is not None:
                step.status, step.reason, step.detail = (StepStatus.MISSING, problem.reason,
                                                         problem.detail)
                self.reporter.note(HistoryEvent.SOURCE_MISSING, f"{spec.name}: {problem.detail}",
                                   {"step": spec.name, "reason": problem.reason})
        for stage in self.goal.stage:
            if not self._done(stage) and (problem := self._check(stage)) is not None:
                self.record.stages[stage.name].status = StepStatus.FAILED
                self.record.stages[stage.name].reason = problem.reason
                self._fail(_pause_reason([problem.reason]),
                           f"stage {stage.name}: {problem.detail}")
                return
        usable = sum(1 for s in self.record.sources.values()
                     if s.status in (StepStatus.OK, StepStatus.PENDING))
        if usable < self.goal.required_sources:
            self._too_few(usable, "usable")
        else:
            self._move(RunEvent.SOURCES_READY)

    def _check(self, spec: StepSpec) -> Problem | None:
        return check_step(spec, self.ctx.base_dir, self.deps.environ, self.secret_problems,
                          self.deps.quotas.problem)

    def _too_few(self, count: int, what: str) -> None:
        reasons = [s.reason or "" for s in self.record.sources.values()
                   if s.status is StepStatus.MISSING]
        template = (N_("too few sources usable: {count} of {total}, need {need}")
                    if what == "usable" else
                    N_("too few sources answered: {count} of {total}, need {need}"))
        text = template.format(count=count, total=len(self.goal.source),
                               need=self.goal.required_sources) + "; " + summary(self.record)
        self._fail(_pause_reason(reasons), text)

    async def _fetch(self) -> RunOutcome | None:
        pending = [s for s in self.goal.source
                   if self.record.sources[s.name].status is StepStatus.PENDING]
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(self._drive(s, True)) for s in pending]
        waits: list[StepEnd] = []
        for spec, task in zip(pending, tasks, strict=True):
            end = task.result()
            if end.ending is Ending.WAIT and not spec.wait_for_quota:
                self._give_up_waiting(spec.name, end)
            elif end.ending is Ending.WAIT:
                waits.append(end)
            elif end.ending is Ending.FAIL:
                self.reporter.note(HistoryEvent.SOURCE_MISSING, f"{spec.name}: {end.reason}"
                                   + (f" — {end.detail}" if end.detail else ""),
                                   {"step": spec.name, "reason": end.reason,
                                    "attempts": self.record.sources[spec.name].attempts})
        if waits:
            return self._wait(waits)
        self._after_fetch()
        return None

    def _give_up_waiting(self, name: str, end: StepEnd) -> None:
        step = self.record.sources[name]
        step.status, step.reason = StepStatus.MISSING, end.reason
        step.detail = f"not waited for (wait_for_quota = false): {end.detail}"
        self.save()

    def _after_fetch(self) -> None:
        ok, total = sources_ok(self.record), len(self.goal.source)
        if ok < self.goal.required_sources:
            self._too_few(ok, "answered")
            return
        self.record.degraded = ok < total
        self.record.item_count = self._item_count()
        atomic_write_bytes(self.store.run_dir / "coverage.json", coverage_json(self.record))
        if self.record.degraded:
            self.reporter.note(HistoryEvent.RUN_DEGRADED, summary(self.record),
                               {"sources_ok": ok, "sources_total": total})
        self._move(RunEvent.SOME_FETCHED if self.record.degraded else RunEvent.ALL_FETCHED)

    async def _stage(self) -> RunOutcome | None:
        count = len(self.goal.stage)
        index = next((i for i, s in enumerate(self.goal.stage) if not self._done(s)), None)
        if index is None:
            self._move(RunEvent.FINISH)
            return None
        phase = stage_phase(index, count, self.record.degraded)
        if phase is not self.record.state:  # a crash between a stage's end and the next move
            self._move(enter_event(phase))
        spec = self.goal.stage[index]
        last = index + 1 == count
        event = RunEvent.FINISH if last else enter_event(
            stage_phase(index + 1, count, self.record.degraded))

        def advance() -> None:  # saved with the stage's success: one write, not two
            self.record.item_count = self._item_count()
            self.record.state = next_run_state(self.record.run_id, self.record.state, event)

        end = await self._drive(spec, False, advance)
        if end.ending is Ending.WAIT:
            return self._wait([end])
        if end.ending is Ending.FAIL:
            self._fail(_pause_reason([end.reason]), f"stage {spec.name}: {end.reason}"
                       + (f" — {end.detail}" if end.detail else ""))
            return None
        self.reporter.progress(self.record)
        return None

    def _item_count(self) -> int | None:
        """The count of the latest completed stage that reported one, else the sources' sum."""
        for spec in reversed(self.goal.stage):
            step = self.record.stages[spec.name]
            if step.status is StepStatus.OK and step.items is not None:
                return step.items
        return _sum_items(self.record.sources.values())

    async def _drive(self, spec: StepSpec, is_source: bool,
                     on_success: Callable[[], None] | None = None) -> StepEnd:
        record = self.record.step(spec.name)
        driver = StepDriver(spec, record, self.ctx, self.deps.clock, self.deps.rng,
                            self.deps.quotas, self._save_step(spec.name),
                            self.reporter.note, is_source, self.deps.max_inline_wait,
                            on_success)
        return await driver.run()

    def _save_step(self, name: str) -> Callable[[], None]:
        def save() -> None:
            done = self.record.step(name).status is StepStatus.OK
            if done and name not in self.record.completed:
                self.record.completed.append(name)
            elif not done and name in self.record.completed:
                self.record.completed.remove(name)
            self.save()

        return save

    # -- endings -------------------------------------------------------------------------------

    def _wait(self, ends: list[StepEnd]) -> RunOutcome:
        instants = [e.until for e in ends]
        until = None if any(i is None for i in instants) else max(
            i for i in instants if i is not None)
        windows = tuple(sorted({w for e in ends for w in e.windows}))
        self.record.waiting_until = until
        self.save()
        self.reporter.limited(windows, until, "; ".join(
            sorted({e.detail or e.reason for e in ends})))
        return RunOutcome.WAITING

    def _fail(self, reason: PauseReason, text: str) -> None:
        self.record.blocked_in = self.record.state
        self.record.last_error = self.redactor.text(text)
        self.record.blocked_reason = reason.value
        self._move(RunEvent.FAIL)

    def _alert(self) -> RunOutcome:
        reason = PauseReason(self.record.blocked_reason or PauseReason.ERROR.value)
        detail = N_("run {run} blocked in {state}: {error}").format(
            run=self.record.run_id, state=_state_name(self.record.blocked_in),
            error=self.record.last_error)
        self.reporter.blocked(reason, detail)
        self._move(RunEvent.ALERTED)
        return RunOutcome.BLOCKED

    def _complete(self) -> RunOutcome:
        text = N_("run {run} completed: {summary}").format(run=self.record.run_id,
                                                           summary=summary(self.record))
        self.reporter.completed(text)
        return RunOutcome.COMPLETED


def _pause_reason(reasons: Sequence[str]) -> PauseReason:
    """A block needs a credential fixed (auth) when any cause was an auth failure."""
    return PauseReason.AUTH if "auth_failed" in reasons else PauseReason.ERROR


def _state_name(state: RunState | None) -> str:
    return state.value if state is not None else "?"


def _sum_items(steps: Iterable[StepRecord]) -> int | None:
    counts = [s.items for s in steps if s.status is StepStatus.OK and s.items is not None]
    return sum(counts) if counts else None
