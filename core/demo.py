"""The demo session: a host with the demo provider, events printed as they happen.

It starts the demo goals, lets them use up the one-minute quota, and ends when every goal with
auto-resume on is done — showing a real pause for quota and an automatic resume on the way. The
goal with auto-resume off stays paused until someone runs ``goalkeeper resume demo:docs``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from core.clock import Clock
from core.commands import Forget, Start
from core.events import Event, GoalChanged, HistoryRecorded
from core.host import Host
from core.i18n import N_, _, localized
from core.i18n.textfmt import duration, local_time
from core.i18n.words import origin_word, word
from core.models import GoalState, HistoryEvent, HistoryRow
from core.paths import Paths
from core.providers.demo import DemoProvider
from core.settings import Settings, load_settings

#: short margins so the demo resumes seconds after the window resets (file and env still win)
DEMO_SETTINGS: dict[str, Any] = {
    "demo_enabled": True,
    "resume_margin_seconds": 3,
    "resume_jitter_seconds": 2,
    "stable_seconds": 2,
    "relimit_window_seconds": 30,
}

_EVENTS: dict[str, str] = {  # by HistoryEvent; a str key: an unknown name just misses
    HistoryEvent.STARTED: N_("started"),
    HistoryEvent.PAUSED: N_("paused"),
    HistoryEvent.RESUME_SCHEDULED: N_("auto-resume scheduled"),
    HistoryEvent.RESUME_NOT_SCHEDULED: N_("not scheduled"),
    HistoryEvent.GAVE_UP: N_("gave up"),
    HistoryEvent.RESUMED: N_("resumed"),
    HistoryEvent.DONE: N_("done"),
    HistoryEvent.FAILED: N_("failed"),
    HistoryEvent.CANCELLED: N_("cancelled"),
    HistoryEvent.QUOTA_EXHAUSTED: N_("quota exhausted"),
    HistoryEvent.QUOTA_RECOVERED: N_("quota recovered"),
}


def demo_settings(paths: Paths, environ: Mapping[str, str], home_given: bool) -> Settings:
    """The demo's settings. Only a demo on a ``GOALKEEPER_HOME`` of the user's own honours
    ``store_url`` (so two machines can watch one demo); a throw-away demo never writes into
    the user's shared store."""
    settings = load_settings(paths.config_file, environ, DEMO_SETTINGS)
    return settings if home_given else settings.model_copy(update={"store_url": ""})


class DemoSession:
    """Runs the demo on a host and renders its history rows as lines of text."""

    def __init__(self, paths: Paths, settings: Settings, clock: Clock,
                 printer: Callable[[str], None], period: float = 60.0,
                 step: float = 2.0) -> None:
        self.paths = paths
        self.settings = settings
        self.clock = clock
        self.printer = printer
        self.started_at: datetime = clock.now()
        self.provider = DemoProvider(clock, step_seconds=step, period=period)

    def make_host(self) -> Host:
        return Host(self.paths, self.settings, [self.provider], "demo", self.clock)

    async def run(self, host: Host, timeout: float) -> int:
        done = asyncio.get_running_loop().create_future()
        host.engine.bus.subscribe(lambda event: self._on_event(event, host, done))
        await host.start()
        try:
            self.printer(_("Goalkeeper demo — data in {dir}").format(dir=self.paths.data_dir))
            self.printer(_("Quota: 6 units per {period} s; each goal uses one unit every "
                           "{step} s.").format(period=f"{self.provider.quota.period:g}",
                                               step=f"{self.provider.step_seconds:g}"))
            await self.restart_goals(host)
            self._check_done(host, done)
            try:
                await asyncio.wait_for(asyncio.shield(done), timeout)
            except TimeoutError:
                self.printer(_("The demo did not finish within {seconds} s.").format(
                    seconds=f"{timeout:g}"))
                return 1
            self.printer(_("All auto-resume goals are done. demo:docs (auto-resume off) is still "
                           "paused: only you can resume it."))
            return 0
        finally:
            await host.stop()

    async def restart_goals(self, host: Host) -> None:
        """Forget finished demo goals, rediscover them and start every idle one.

        Public because the desktop app's demo reuses it on its own host.
        """
        engine = host.engine
        for goal in list(engine.goals.values()):
            if goal.provider == "demo" and goal.state is not GoalState.IDLE:
                await engine.perform(Forget(goal.id), "demo")
        await engine.refresh()
        await engine.drain()
        for goal in list(engine.goals.values()):
            if goal.provider == "demo" and goal.state is GoalState.IDLE:
                await engine.perform(Start(goal.id), "demo")

    def _on_event(self, event: Event, host: Host, done: asyncio.Future[None]) -> None:
        if isinstance(event, HistoryRecorded):
            line = self.render(event.row)
            if line:
                self.printer(line)
        elif isinstance(event, GoalChanged):
            self._check_done(host, done)

    def _check_done(self, host: Host, done: asyncio.Future[None]) -> None:
        # every host's: a second machine on the same shared store watches the first one's demo
        goals = [g for g in host.engine.reads.goals() if g.provider == "demo" and g.auto_resume]
        if goals and all(g.state is GoalState.DONE for g in goals) and not done.done():
            done.set_result(None)

    def render(self, row: HistoryRow) -> str | None:
        label = _(_EVENTS[row.event]) if row.event in _EVENTS else None
        if label is None:
            if row.event is HistoryEvent.RESUME_REQUESTED and row.origin != "scheduler":
                label = _("resume requested → {outcome}").format(
                    outcome=word(row.outcome) if row.outcome else "?")
            else:
                return None
        elapsed = duration((row.at - self.started_at).total_seconds())
        text = f"[+{elapsed}] {row.goal or '':<14} {label}"
        if row.event is HistoryEvent.RESUME_SCHEDULED and "not_before" in row.detail:
            at = datetime.fromisoformat(row.detail["not_before"])
            text += _(" for {time} (in {duration})").format(
                time=local_time(at), duration=duration((at - row.at).total_seconds()))
        if row.event is HistoryEvent.RESUMED and row.trigger:
            text += _(" ({trigger}, {origin})").format(trigger=word(row.trigger),
                                                       origin=origin_word(row.origin))
        if row.reason and row.event not in (HistoryEvent.RESUMED, HistoryEvent.STARTED):
            text += f" — {localized(row.reason)}"
        return text
