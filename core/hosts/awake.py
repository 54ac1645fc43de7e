"""Keep the machine awake while a resume is due — and say what cannot be held.

While an auto-resume goal of this host waits for a reset due within ``keep_awake_hours``, the
host holds one sleep inhibitor whose reason names the earliest ("demo:refactor resumes at
03:10"), and lets it go the moment nothing is due (resumed, paused by the user, auto-resume
off). Off with ``keep_awake = false``; on battery below ``keep_awake_min_battery_percent`` it
lets go and says so. What the system does anyway (a lid switch that suspends regardless, logind's
idle action while nothing is held, no logind at all) is a health note, with what a resume after
the wake-up will do: the scheduler notices within its longest sleep.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any, Protocol

from core.clock import Clock
from core.goals.scheduler import waiting_for_quota
from core.health import AwakeHealth
from core.i18n import N_
from core.i18n.textfmt import short_time
from core.integration.inhibit import InhibitError, SleepLimits
from core.models import Goal
from core.settings import Settings

log = logging.getLogger("goalkeeper")

#: how often the battery is looked at while a resume is due
BATTERY_CHECK_SECONDS = 60.0


class SleepInhibitor(Protocol):
    """A platform's inhibitor (``core.integration.inhibit``); both calls block."""

    name: str

    def take(self, why: str) -> Callable[[], None]: ...

    def limits(self) -> SleepLimits: ...


@dataclass(frozen=True)
class AwakeParts:
    """What the room is handed: this host's goals, the clock, the settings, the inhibitor, the
    battery's charge (None: on mains), whom to tell when its health changes, and how to run its
    task (the host's ``spawn``: the host owns every task, so a host that dies takes it along)."""

    goals: Mapping[str, Goal]
    clock: Clock
    settings: Settings
    inhibitor: SleepInhibitor
    battery: Callable[[], float | None]
    changed: Callable[[], None]
    zone: tzinfo | None = None
    spawn: Callable[[Coroutine[Any, Any, None], str], asyncio.Task[Any]] | None = None


class KeepAwake:
    """Owns the sleep inhibitor (at most one) and its task. Attributes: ``health``.

    Emits nothing itself; calls ``changed`` when :attr:`health` changes.
    """

    def __init__(self, parts: AwakeParts) -> None:
        self._p = parts
        self._poke = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._release: Callable[[], None] | None = None
        self._held: str | None = None
        self._stopping = False
        self._limits: tuple[float, SleepLimits] | None = None  # (monotonic, asked then)
        self.health = AwakeHealth("idle", horizon_hours=parts.settings.keep_awake_hours)

    def poke(self) -> None:
        """The goals changed: look again."""
        self._poke.set()

    def start(self) -> None:
        if self._task is None:
            self._stopping = False
            if self._p.spawn is not None:
                self._task = self._p.spawn(self._run(), "keep-awake")
            else:
                self._task = asyncio.ensure_future(self._run())
                self._task.set_name("goalkeeper:keep-awake")

    async def stop(self) -> None:
        """Let go. The pass under way is not cancelled: an inhibitor its thread is taking would
        be lost, held until the process ends."""
        self._stopping = True
        self.poke()
        task, self._task = self._task, None
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        await self._hold(None)

    async def _run(self) -> None:
        while not self._stopping:
            self._poke.clear()
            try:
                delay = await self.refresh()
            except Exception:
                log.exception("keep-awake pass failed")
                delay = BATTERY_CHECK_SECONDS
            waiter = asyncio.ensure_future(self._poke.wait())
            tasks: set[asyncio.Future[Any]] = {waiter}
            if delay is not None:
                tasks.add(asyncio.ensure_future(self._p.clock.sleep(delay)))
            try:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in tasks:
                    task.cancel()

    # -- one pass ------------------------------------------------------------------------------

    async def refresh(self) -> float | None:
        """Hold or let go as the goals say now; returns when to look again (None: when poked)."""
        s, now = self._p.settings, self._p.clock.now()
        waiting = sorted((g for g in self._p.goals.values() if waiting_for_quota(g)
                          and g.auto_resume and g.next_resume_at is not None),
                         key=lambda g: (g.next_resume_at, g.id))
        horizon = timedelta(hours=s.keep_awake_hours)
        due = [g for g in waiting if g.next_resume_at is not None
               and g.next_resume_at - now <= horizon]
        if not s.keep_awake or not due:
            await self._hold(None)
            self._set(AwakeHealth("off" if not s.keep_awake else "idle",
                                  horizon_hours=s.keep_awake_hours))
            later = [g.next_resume_at - horizon for g in waiting if g.next_resume_at is not None]
            return (min(later) - now).total_seconds() if later and s.keep_awake else None
        await self._plan(due, now)
        return BATTERY_CHECK_SECONDS

    async def _plan(self, due: list[Goal], now: datetime) -> None:
        s, first = self._p.settings, due[0]
        assert first.next_resume_at is not None
        at = short_time(first.next_resume_at, now, self._p.zone, english=True)
        why = N_("{goal} resumes at {time}").format(goal=first.id, time=at)
        if len(due) > 1:
            why = N_("{why} (and {count} more)").format(why=why, count=len(due) - 1)
        after_wake = N_("after a wake-up, a due resume starts within {seconds} s").format(
            seconds=f"{s.max_sleep_seconds:g}")
        level = self._p.battery()
        notes: list[str] = []
        state, shown = "holding", why
        if level is not None and level < s.keep_awake_min_battery_percent:
            await self._hold(None)
            state, shown = "let_go", N_("on battery at {level} % (below {minimum} %); the "
                                        "resume at {time} waits for the machine to wake").format(
                level=f"{level:g}", minimum=f"{s.keep_awake_min_battery_percent:g}", time=at)
        else:
            failed = await self._hold(why)
            if failed is not None:
                state, shown = "let_go", N_("cannot hold a sleep inhibitor: {error}; the resume "
                                            "at {time} waits for the machine to wake").format(
                    error=failed, time=at)
        limits = await self._system_limits()
        notes.extend(self._notes(limits, at, held=state == "holding"))
        self._set(AwakeHealth(state, shown, s.keep_awake_hours, tuple(notes), after_wake))

    async def _system_limits(self) -> SleepLimits:
        """logind's settings, asked at most once a minute (a pass follows every goal change)."""
        mono = self._p.clock.monotonic()
        if self._limits is None or mono - self._limits[0] >= BATTERY_CHECK_SECONDS:
            self._limits = (mono, await asyncio.to_thread(self._p.inhibitor.limits))
        return self._limits[1]

    @staticmethod
    def _notes(limits: SleepLimits, at: str, held: bool) -> list[str]:
        notes = []
        if limits.lid_sleeps:
            notes.append(N_("the machine will still sleep when the lid closes; the resume at "
                            "{time} will wait for it").format(time=at))
        if limits.idle_action and not held:
            notes.append(N_("logind will {action} after {minutes} min idle; the resume at {time} "
                            "will wait for it").format(action=limits.idle_action,
                                                       minutes=f"{limits.idle_seconds / 60:g}",
                                                       time=at))
        return notes

    async def _hold(self, why: str | None) -> str | None:
        """Hold an inhibitor for ``why`` (None: none). The new one is taken before the old one
        goes, so a change of reason leaves no gap. Returns why it could not be taken."""
        if why == self._held:
            return None
        old = self._release
        self._release, self._held = None, None
        if why is not None:
            try:
                self._release = await asyncio.to_thread(self._p.inhibitor.take, why)
            except InhibitError as exc:
                log.warning("cannot keep the machine awake: %s", exc)
                self._release_old(old)
                return str(exc)
            self._held = why
            log.info("holding a sleep inhibitor: %s", why)
        self._release_old(old)
        return None

    @staticmethod
    def _release_old(release: Callable[[], None] | None) -> None:
        if release is not None:
            try:
                release()
            except OSError as exc:
                log.warning("releasing the sleep inhibitor failed: %s", exc)

    def _set(self, health: AwakeHealth) -> None:
        if health != self.health:
            if health.state != self.health.state and health.state != "holding":
                log.info("%s", health.describe())
            self.health = health
            self._p.changed()
