"""The pipeline's control-socket ops: ``run``, ``pipeline-remove``, ``pipeline-approve`` and
``quota-refill``.

``run`` starts a run through the engine's entry points — ``start_goal`` for an idle goal, the one
resume entry point (with a fresh run) for a paused one — and refuses, saying why, while a run is
unfinished, unless ``new`` is set: then the unfinished run is abandoned (recorded in the history)
and a fresh one starts; a goal file waiting for approval (:mod:`.approval`) is refused, saying
how to approve it. ``pipeline-approve`` records the digest of the text the CLI showed the user.
Replies are :class:`~core.commands.ActionResult` JSON plus ``run_id``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any, Protocol

from core.clock import Clock
from core.commands import ActionResult, Forget, Resume, Start
from core.models import GoalState, Outcome, Trigger
from core.providers.base import ControlHandler, ProviderSink
from core.providers.pipeline.approval import approval_text
from core.providers.pipeline.catalog import CatalogEntry, PipelineCatalog, goal_name
from core.providers.pipeline.checkpoint import CheckpointError, Unfinished
from core.providers.pipeline.coverage import display_state
from core.providers.pipeline.goalfile import GOAL_PREFIX
from core.providers.pipeline.ledger import QuotaLedger, QuotaLedgerError


class PipelineOpsHost(Protocol):
    """What the control ops use of the pipeline provider (:class:`PipelineProvider` is one)."""

    clock: Clock
    catalog: PipelineCatalog
    ledger: QuotaLedger
    last_run: dict[str, str]
    fresh: set[str]
    triggers: dict[str, str]

    @property
    def sink(self) -> ProviderSink: ...

    def active_run(self, goal_id: str) -> tuple[str, int] | None: ...

    def unfinished(self, entry: CatalogEntry) -> Unfinished | None: ...

    def new_run(self, entry: CatalogEntry, trigger: str) -> Unfinished: ...

    def abandon(self, entry: CatalogEntry, why: str) -> str | None: ...

    def launch(self, goal_id: str, fence: int, entry: CatalogEntry,
               unfinished: Unfinished) -> None: ...

    def forget_schedule(self, name: str) -> None: ...

    def is_approved(self, entry: CatalogEntry) -> bool: ...

    async def approve(self, name: str, digest: str) -> bool: ...

    async def stop_task(self, goal_id: str) -> None: ...


class PipelineOps:
    """The handlers, bound to one provider (handed over as a :class:`PipelineOpsHost`)."""

    def __init__(self, provider: PipelineOpsHost) -> None:
        self.p = provider

    def handlers(self) -> Mapping[str, ControlHandler]:
        return {"run": self.run, "pipeline-remove": self.remove,
                "pipeline-approve": self.approve, "quota-refill": self.refill}

    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        name = goal_name(str(request["goal"]))
        goal_id, origin = GOAL_PREFIX + name, str(request.get("origin") or "cli")
        entry = self.p.catalog.get(name)
        if entry is None or entry.goal is None:
            why = ("no goal file is added under that name (`goalkeeper add FILE`)"
                   if entry is None else f"its goal file no longer validates: {entry.error}")
            outcome = Outcome.UNKNOWN_GOAL if entry is None else Outcome.REFUSED
            return ActionResult(goal_id, outcome, why).to_json()
        if not self.p.is_approved(entry):
            return ActionResult(goal_id, Outcome.REFUSED, approval_text(name)).to_json()
        busy = self._unfinished_text(entry, goal_id)
        if busy is not None and not request.get("new"):
            run_id, text = busy
            reply = ActionResult(goal_id, Outcome.REFUSED, (
                f"run {run_id} is unfinished ({text}); `goalkeeper resume {goal_id}` continues "
                f"it, `goalkeeper run {name} --new` abandons it and starts afresh")).to_json()
            return reply | {"run_id": run_id}
        active = self.p.active_run(goal_id)
        if active is not None:
            result = await self._restart(entry, goal_id, active[1])
        else:
            if busy is not None:
                self.p.abandon(entry, "abandoned for a new run (`goalkeeper run --new`)")
            result = await self._start(goal_id, origin)
        return result.to_json() | {"run_id": self.p.last_run.get(goal_id)}

    def _unfinished_text(self, entry: CatalogEntry, goal_id: str) -> tuple[str, str] | None:
        active = self.p.active_run(goal_id)
        if active is not None:
            return active[0], "running"
        unfinished = self.p.unfinished(entry)
        if unfinished is None:
            return None
        store, record = unfinished
        if isinstance(record, CheckpointError):
            return store.run_dir.name, f"its state file cannot be trusted: {record.reason}"
        text = display_state(record)
        if record.waiting_until is not None:
            text += f", waiting for quota until {record.waiting_until.isoformat()}"
        elif record.last_error:
            text += f": {record.last_error}"
        return record.run_id, text

    async def _restart(self, entry: CatalogEntry, goal_id: str, fence: int) -> ActionResult:
        """``--new`` while a run is running here: stop it, abandon it, start afresh (same
        claim: the goal stays running, so the fence stays valid)."""
        await self.p.stop_task(goal_id)
        self.p.abandon(entry, "abandoned for a new run (`goalkeeper run --new`)")
        self.p.launch(goal_id, fence, entry, self.p.new_run(entry, "manual"))
        return ActionResult(goal_id, Outcome.RESUMED, "started a new run", None,
                            GoalState.RUNNING)

    async def _start(self, goal_id: str, origin: str) -> ActionResult:
        self.p.triggers[goal_id] = "manual"
        result = await self.p.sink.perform(Start(goal_id), origin)
        if result.outcome is Outcome.REFUSED and result.state is GoalState.PAUSED:
            # a paused goal has nothing unfinished by now: the one resume entry point, fresh run
            self.p.triggers.pop(goal_id, None)
            self.p.fresh.add(goal_id)
            result = await self.p.sink.perform(
                Resume(goal_id, Trigger.MANUAL, {"new_run": True}), origin)
            self.p.fresh.discard(goal_id)
        elif result.outcome is not Outcome.RESUMED:
            self.p.triggers.pop(goal_id, None)
        return result

    async def remove(self, request: dict[str, Any]) -> dict[str, Any]:
        name = goal_name(str(request["goal"]))
        goal_id, origin = GOAL_PREFIX + name, str(request.get("origin") or "cli")
        if self.p.catalog.get(name) is None:
            return ActionResult(goal_id, Outcome.UNKNOWN_GOAL,
                                "no goal file is added under that name").to_json()
        await self.p.stop_task(goal_id)  # before its run directory moves
        aside = await asyncio.to_thread(self.p.catalog.remove, name, self.p.clock.now())
        self.p.forget_schedule(name)
        with contextlib.suppress(Exception):  # the store is away: the file is gone all the same
            await self.p.approve(name, "")  # a copy put back later waits for approval again
        result = await self.p.sink.perform(Forget(goal_id), origin)
        return result.to_json() | {"moved_to": str(aside) if aside else None}

    async def approve(self, request: dict[str, Any]) -> dict[str, Any]:
        name, digest = goal_name(str(request["goal"])), str(request["digest"])
        try:
            current = await self.p.approve(name, digest)
        except Exception as exc:  # the store takes no writes now
            return {"error": f"the approval was not recorded: {exc}"}
        return {"goal": GOAL_PREFIX + name, "approved": current}

    async def refill(self, request: dict[str, Any]) -> dict[str, Any]:
        quota, now = str(request["quota"]), self.p.clock.now()
        try:
            amount = float(request["amount"])
            left = await asyncio.to_thread(self.p.ledger.refill_blocking, quota, amount, now)
            reading = await asyncio.to_thread(self.p.ledger.reading, quota, now)
        except OverflowError:  # an integer no float holds
            return {"error": "the refill amount must be a positive number, not that large"}
        except (QuotaLedgerError, ValueError, TypeError) as exc:
            return {"error": str(exc)}
        self.p.sink.quota_observed(reading)
        return {"quota": quota, "left": left, "limit": reading.limit}
