"""One step, attempt after attempt, under its retry policy — with the checkpoint kept current.

:class:`StepDriver` debits the step's quota before every attempt, runs the attempt
(:func:`core.providers.pipeline.steps.run_attempt`), asks the
:class:`~core.retry.policy.RetryPolicy`
what the outcome means, waits in process (on the injected clock) when it says so, and ends with
a :class:`StepEnd`: ``ok``, ``wait`` (pause for quota until an instant) or ``fail`` (with whether a
human is needed). Every change of the step's record is saved through the run's ``save`` callback.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from core.clock import Clock
from core.models import HistoryEvent
from core.providers.pipeline.checkpoint import StepRecord, StepStatus
from core.providers.pipeline.goalfile import StepSpec
from core.providers.pipeline.steps import AttemptResult, StepContext, run_attempt
from core.retry.policy import Action, Fault, RetryPolicy


@dataclass(frozen=True)
class Debit:
    """The answer of a quota debit: taken, or refused with when the cost fits again."""

    ok: bool
    window: str
    until: datetime | None = None  # None: no timed reset (a capacity quota: only a refill)
    detail: str = ""


class QuotaGate(Protocol):
    """Debits user quotas atomically (the provider's ledger; a fake in tests)."""

    def problem(self, quota: str, cost: float) -> str | None:
        """Why a step drawing ``cost`` on ``quota`` can never run (unknown quota, too big)."""
        ...

    async def debit(self, quota: str, cost: float, now: datetime) -> Debit: ...


class Ending(StrEnum):
    OK = "ok"
    WAIT = "wait"
    FAIL = "fail"


@dataclass(frozen=True)
class StepEnd:
    ending: Ending
    reason: str = ""
    detail: str = ""
    until: datetime | None = None
    windows: tuple[str, ...] = ()
    no_timed_reset: bool = False
    needs_human: bool = False
    fault: Fault = Fault.NONE


Save = Callable[[], None]
Note = Callable[[HistoryEvent, str, dict[str, object]], None]


class StepDriver:
    """Runs one step to an end. Owns nothing but the step's record it is given."""

    def __init__(self, spec: StepSpec, record: StepRecord, ctx: StepContext, clock: Clock,
                 rng: random.Random, quotas: QuotaGate, save: Save, note: Note,
                 is_source: bool, max_inline_wait: float = 120.0,
                 on_success: Callable[[], None] | None = None) -> None:
        self.spec = spec
        self.record = record
        self.ctx = ctx
        self.clock = clock
        self.rng = rng
        self.quotas = quotas
        self.save = save
        self.note = note
        self.is_source = is_source
        #: applied to the run record in the same checkpoint write as the step's success
        self.on_success = on_success
        self.policy: RetryPolicy = spec.retry_policy(max_inline_wait)

    async def run(self) -> StepEnd:
        attempt = 0
        while True:
            attempt += 1
            refused = await self._debit()
            if refused is not None:
                return refused
            result = await self._attempt(attempt)
            end = await self._after(result, attempt)
            if end is not None:
                return end

    async def _debit(self) -> StepEnd | None:
        if self.spec.quota is None or self.spec.cost == 0:
            return None
        debit = await self.quotas.debit(self.spec.quota, self.spec.cost, self.clock.now())
        if debit.ok:
            return None
        self._set(status=StepStatus.PENDING, reason="quota_exhausted", detail=debit.detail)
        return StepEnd(Ending.WAIT, "quota_exhausted", debit.detail, debit.until,
                       (debit.window,), no_timed_reset=debit.until is None,
                       fault=Fault.QUOTA_EXHAUSTED)

    async def _attempt(self, attempt: int) -> AttemptResult:
        # saved once the process exists, with its pid: one checkpoint write, not two (a host
        # killed before that write leaves a step found by its environment, see steps.py)
        self.record.status, self.record.attempts = StepStatus.RUNNING, attempt
        self.record.pid = self.record.pid_started = None

        async def started(pid: int, when: str | None) -> None:
            self._set(pid=pid, pid_started=when)

        return await run_attempt(self.spec, self.ctx, attempt, self.spec.timeout, started)

    async def _after(self, result: AttemptResult, attempt: int) -> StepEnd | None:
        out = result.outcome
        now = self.clock.now()
        decision = self.policy.decide(out.fault, attempt, now, self.rng.random(),
                                      out.retry_after, out.reset_at)
        common = {"pid": None, "pid_started": None, "reason": out.reason,
                  "detail": out.detail or None, "items": out.items}
        if decision.action is Action.SUCCEED and (short := self._too_few(out.items)):
            failed = StepStatus.MISSING if self.is_source else StepStatus.FAILED
            self._set(status=failed, finished_at=now, **{**common, "reason": "too_few_items",
                                                         "detail": short})
            return StepEnd(Ending.FAIL, "too_few_items", short, fault=Fault.PERMANENT)
        if decision.action is Action.SUCCEED:
            self._change(status=StepStatus.OK, artifact=result.artifact,
                         checksum=result.checksum, finished_at=now, **common)
            if self.on_success is not None:
                self.on_success()
            self.save()
            return StepEnd(Ending.OK, out.reason, out.detail, fault=out.fault)
        if decision.action is Action.RETRY:
            self._set(status=StepStatus.PENDING, **common)
            self.note(HistoryEvent.STEP_RETRY, f"{self.spec.name}: {out.reason}; {decision.why}",
                      {"step": self.spec.name, "attempt": attempt,
                       "wait_seconds": round(decision.delay, 3)})
            await self.clock.sleep(decision.delay)
            return None
        if decision.action is Action.WAIT_QUOTA:
            self._set(status=StepStatus.PENDING, **common)
            return StepEnd(Ending.WAIT, out.reason, out.detail or decision.why, decision.until,
                           fault=out.fault)
        failed = StepStatus.MISSING if self.is_source else StepStatus.FAILED
        self._set(status=failed, finished_at=now, **common)
        return StepEnd(Ending.FAIL, out.reason, out.detail or decision.why,
                       needs_human=decision.action is Action.NEEDS_HUMAN, fault=out.fault)

    def _too_few(self, items: int | None) -> str | None:
        """Why the step's output fails its ``min_items`` condition, or None."""
        wanted = self.spec.min_items
        if wanted is None or (items is not None and items >= wanted):
            return None
        got = "no item count reported" if items is None else f"{items} items"
        return f"too few valid items ({got}, need at least {wanted})"

    def _set(self, **changes: object) -> None:
        self._change(**changes)
        self.save()

    def _change(self, **changes: object) -> None:
        for key, value in changes.items():
            setattr(self.record, key, value)

