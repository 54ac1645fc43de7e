"""The one interface every source of goals and quotas plugs in through.

A provider (demo, Codex, Claude Code, pipeline) does four things:

* **discovers** goals and reports what the agent shows for each (:class:`GoalObservation`);
* **reads quota windows** (:class:`~core.models.QuotaReading`), with a forced fresh read that the
  scheduler takes right before an automatic resume;
* **runs** goals: start, resume, pause, cancel — the runner role;
* **reports** what happens to a goal it runs — progress, a limit hit with its reset, done,
  failed — to a :class:`ProviderSink`, always with the fencing token of the claim that started it.

Nothing provider-specific leaks into the engine: it only ever sees these types.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from core.commands import ActionResult, Command
from core.i18n import N_
from core.models import Exactness, Goal, GoalState, HistoryEvent, PauseReason, QuotaReading

#: a control-socket op: request object in, reply object out
ControlHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class GoalObservation:
    """What a provider sees of one goal right now.

    Attributes:
        state: the Goalkeeper state the agent's own status maps onto.
        resets_at: for a quota pause, when the limit lifts, if the provider knows.
        observed_at: when the agent recorded this status (e.g. the rollout line's timestamp);
            an observation older than the goal's last change is ignored.
        auto_resume: the provider's default for a newly found goal (None: the global default).
        auto_resume_block: why Goalkeeper must not auto-resume this goal at all (e.g. "Claude
            will resume itself"); shown as the goal's note.
        no_reset_note: the goal's quota pause is one no clock lifts (credits depleted), in
            words; kept on the goal (``Steering.no_reset_note``) until the window is back.
        data: provider metadata kept with the goal (cwd, session file, progress...).
    """

    id: str
    title: str
    state: GoalState
    observed_at: datetime
    pause_reason: PauseReason | None = None
    pause_detail: str | None = None
    windows: tuple[str, ...] = ()
    resets_at: datetime | None = None
    auto_resume: bool | None = None
    auto_resume_block: str | None = None
    no_reset_note: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LimitHit:
    """A running goal stopped because a quota ran out.

    ``resets_at`` is when the provider says the limit lifts (None: unknown — then the goal is
    never auto-resumed); ``no_timed_reset`` marks limits no clock lifts (credits depleted).
    """

    windows: tuple[str, ...]
    resets_at: datetime | None
    exactness: Exactness = Exactness.EXACT
    detail: str | None = None
    no_timed_reset: bool = False
    readings: tuple[QuotaReading, ...] = ()


@dataclass(frozen=True)
class QueuedWork:
    """New work to prepare now and start after a window's reset (:class:`~core.commands.Queue`).

    Attributes:
        cwd: the working directory (checked to exist).
        text: the objective (Codex) or prompt (Claude).
        thread: an existing thread to use (Codex; empty: a new one).
    """

    cwd: str
    text: str
    thread: str = ""


@dataclass(frozen=True)
class PreparedStart:
    """What a provider made of :class:`QueuedWork`: the goal's id, title and metadata (what its
    :meth:`Provider.resume_goal` reads to start the work)."""

    goal_id: str
    title: str
    data: dict[str, Any] = field(default_factory=dict)


class StartOutcome(StrEnum):
    STARTED = "started"
    ALREADY_RUNNING = "already_running"  # the agent was already working on it
    ALREADY_DONE = "already_done"  # the agent had finished it


class RunnerError(Exception):
    """Starting or resuming failed; the goal goes back to paused with this message."""


class RunnerDeferred(Exception):
    """The goal must not be resumed right now (e.g. another live process owns the thread)."""

    def __init__(self, reason: str, retry_after_seconds: float = 60.0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_seconds = retry_after_seconds


class ProviderSink(Protocol):
    """Where providers report; the engine implements it. Calls come on the event-loop thread.

    Besides the reports, a few engine actions are open to providers whose goals are triggered or
    removed by something the provider owns (a pipeline's schedule, its ``run`` and ``remove``
    control ops): they go through the same entry points as a click, with the provider as origin.
    """

    def goal_observed(self, provider: str, observation: GoalObservation) -> None: ...

    def quota_observed(self, reading: QuotaReading) -> None: ...

    def goal_progress(self, goal_id: str, fence: int, detail: str, data: dict[str, Any]) -> None:
        ...

    def goal_limited(self, goal_id: str, fence: int, hit: LimitHit) -> None: ...

    def goal_finished(self, goal_id: str, fence: int, detail: str | None = None) -> None: ...

    def goal_failed(self, goal_id: str, fence: int, detail: str) -> None: ...

    def goal_paused(self, goal_id: str, fence: int, reason: PauseReason, detail: str) -> None:
        ...

    def goal_rested(self, goal_id: str, fence: int, detail: str | None = None,
                    idle_again: bool = False) -> None:
        """A recurring goal finished one round of work: back to ``idle`` for its next trigger.

        ``idle_again``: no round ran (a resume found nothing to continue); not announced."""
        ...

    def goal_noted(self, goal_id: str, event: HistoryEvent, reason: str,
                   detail: dict[str, Any] | None = None) -> None:
        """Record a milestone of the goal's work in the history (no state change, no fence)."""
        ...

    async def perform(self, command: Command, origin: str = ...) -> ActionResult:
        """Carry out a command on one of this provider's goals through the one door, like a
        click (origin ``provider:<name>``, ``schedule``…)."""
        ...

    async def release(self, goal_id: str, windows: list[str]) -> None:
        """Bring a quota-paused goal's not-before time forward to now: its provider has an
        authoritative reading that ``windows`` are back before the planned reset (an early
        reset). The pre-resume read and the hysteresis still decide."""
        ...

    async def read_meta(self, key: str) -> str | None:
        """A value of the store's ``meta`` table (e.g. a goal file's approval), or None."""
        ...

    async def write_meta(self, key: str, value: str) -> None:
        """Set a value of the store's ``meta`` table; raises when the store takes no writes."""
        ...


class Provider(abc.ABC):
    """Base class of every provider. Subclasses set ``name`` and implement the abstract methods.

    Lifecycle: the engine calls :meth:`attach` once with its sink, :meth:`start` when the host
    starts (begin watching files, etc.), and :meth:`stop` on shutdown; a provider must stop every
    process and task it started.
    """

    name: str = ""
    #: human description of where this provider looks, for the first-run screen
    description: str = ""
    #: its first read holds the host's interpreter for a while (a long history to go through):
    #: a provider started beside one may read its own first pass in a process of its own
    heavy_start: bool = False

    def __init__(self) -> None:
        self._sink: ProviderSink | None = None

    def attach(self, sink: ProviderSink) -> None:
        self._sink = sink

    @property
    def sink(self) -> ProviderSink:
        if self._sink is None:
            raise RuntimeError(f"provider {self.name} is not attached to an engine")
        return self._sink

    def started_beside(self, others: Sequence[Provider]) -> None:  # noqa: B027 - optional hook
        """Told once, before :meth:`start`, which providers the host starts with this one
        (:func:`core.providers.registry.build_providers`). Default: it does not matter."""

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Begin watching (files, processes). Default: nothing to watch."""

    async def stop(self) -> None:  # noqa: B027 - optional hook
        """Stop every task and process this provider started."""

    def attention(self) -> tuple[str, ...]:
        """What the user must act on before this provider can do its work (stored English,
        one sentence each; e.g. a goal file waiting for approval): health problems."""
        return ()

    def read_problems(self) -> tuple[str, ...]:
        """The files this provider could not read — at its start and at its last read — each
        ``PATH (reason)``: the provider's health says them (``status`` and the window), not only
        the log. Default: none."""
        return ()

    def host_started(self) -> None:  # noqa: B027 - optional hook
        """The host has started every provider and stored what each found first (or, for a
        provider that started late, what it found): background work held back so as not to
        slow the host's start (a full-history scan) may begin. Default: nothing held back."""

    @abc.abstractmethod
    async def discover(self) -> list[GoalObservation]:
        """The goals this provider knows about, as the agent shows them now."""

    @abc.abstractmethod
    async def read_quotas(self, fresh: bool = False) -> list[QuotaReading]:
        """Current readings. ``fresh=True``: ask the authority now (taken before auto-resume)."""

    @abc.abstractmethod
    async def start_goal(self, goal: Goal, fence: int) -> StartOutcome:
        """Start an idle goal. Raise :class:`RunnerError` on failure."""

    @abc.abstractmethod
    async def resume_goal(self, goal: Goal, fence: int) -> StartOutcome:
        """Resume a paused goal; idempotent on the agent's side (check, then act).

        Raise :class:`RunnerError` on failure, :class:`RunnerDeferred` when it must wait.
        """

    async def prepare_start(self, work: QueuedWork) -> PreparedStart:
        """Make ``work`` a goal that waits, without running anything yet: its
        :meth:`resume_goal` then starts it — idempotently (check, then act). Raise
        :class:`RunnerError` when it cannot. Default: this provider cannot start new work."""
        raise RunnerError(N_("{provider} cannot start new work").format(provider=self.name))

    @abc.abstractmethod
    async def pause_goal(self, goal: Goal) -> None:
        """Stop working on the goal, leaving it resumable."""

    async def pause_goal_gracefully(self, goal: Goal) -> None:
        """Stop working on the goal at the end of its current turn, leaving it resumable.

        What the resume policies use (the reserve, a budget): the goal is already ``paused`` in
        the store — its fence moved on, so anything the runner still reports is ignored — and
        the agent may finish the turn it is in. A provider whose agent can stop between turns
        overrides this; the default stops it now, like :meth:`pause_goal`.
        """
        await self.pause_goal(goal)

    @abc.abstractmethod
    async def cancel_goal(self, goal: Goal) -> None:
        """Stop working on the goal for good (never destroy the user's own objective)."""

    async def account_identity(self) -> str | None:
        """What tells apart the account this provider's quota belongs to, when the provider
        can say (hosts on one account share its readings: issue 12); None: it cannot."""
        return None

    def next_wake(self, now: datetime) -> datetime | None:
        """When the scheduler should call :meth:`wake` next (None: no timed work of its own).

        Providers with timed work (a pipeline's schedule) ask to be woken this way instead of
        keeping a timer of their own; the scheduler's sleep cap keeps it right across suspends.
        """
        return None

    async def wake(self, now: datetime) -> None:  # noqa: B027 - optional hook
        """Called by the scheduler once :meth:`next_wake` has passed."""

    async def zone_changed(self) -> None:  # noqa: B027 - optional hook
        """The local zone changed while the host runs (the scheduler noticed): plan again what
        was planned in it (a pipeline's daily schedule). Instants already due stay due."""

    def control_ops(self) -> Mapping[str, ControlHandler]:
        """Extra control-socket ops this provider serves (e.g. the pipeline's ``run``)."""
        return {}

    def open_command(self, goal: Goal) -> list[str] | None:
        """A command that opens the goal in the user's terminal, when there is one."""
        return None

    def auto_resume_notice(self, goal: Goal) -> tuple[str, str] | None:
        """(key, text) of something the user must be told the first time they turn auto-resume
        on for a goal of this kind (e.g. a billing caveat); shown once per key."""
        return None
