"""The Claude Code provider: sessions as goals, limit stops as quota pauses, headless resumes.

Which sessions are goals (id ``claude:<session id>``):

* the ones the user chose to keep going (``goalkeeper track``, or the GUI), until untracked;
* with ``claude_track_limit_stopped`` on, any session a limit stopped in the last
  ``claude_track_recent_hours`` (or whose reset is still ahead) — unless the user untracked it.

When the host starts, the newest transcripts are read first (:mod:`~core.providers.claude.startup`:
gauges and goals at once), the rest of the history in the background; then every transcript is
followed every ``claude_poll_seconds`` (:mod:`~core.providers.claude.follow`); a change is
reported as an observation only when what the goal shows changed. Quota readings come from limit
stops, headless runs, the opt-in statusline hook and, as a last resort, ``~/.claude.json``.

Owns: the transcript watcher, one :class:`~core.providers.claude.runner.HeadlessRun` per goal
it runs, the poll task, and ``<data>/claude/`` (tracking file, hook spool).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import shlex
import shutil
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.clock import Clock, LiveZone
from core.commands import Forget
from core.i18n import N_
from core.models import Exactness, Goal, HistoryEvent, PauseReason, QuotaReading
from core.paths import Paths
from core.providers.base import (
    ControlHandler,
    GoalObservation,
    PreparedStart,
    Provider,
    QueuedWork,
    RunnerDeferred,
    RunnerError,
    StartOutcome,
)
from core.providers.claude import config, ops, sessions, startup
from core.providers.claude.events import HookEvents
from core.providers.claude.follow import TranscriptFileState, TranscriptWatcher, read_file
from core.providers.claude.ledger import LimitStopRecord, UsageBlock
from core.providers.claude.live import LiveProcess, LiveSessions
from core.providers.claude.readings import (
    cached_usage_readings,
    limit_stop_reading,
    worth_storing,
)
from core.providers.claude.records import LimitInfo
from core.providers.claude.resets import ParsedLimit, parse_limit
from core.providers.claude.runner import (
    HeadlessRun,
    RunSpec,
    child_env,
    command,
    new_session_command,
)
from core.providers.claude.state import TrackingFile
from core.providers.claude.stream import TurnEnded
from core.retry.policy import RetryPolicy
from core.settings import Settings

log = logging.getLogger(__name__)

#: the history scan waits for the host's start (:meth:`ClaudeProvider.host_started`) this long
HISTORY_DELAY_SECONDS = 2.0
BILLING_NOTICE = N_(
    "Goalkeeper resumes Claude sessions headless (claude -p). Anthropic may bill headless and "
    "Agent SDK use differently from interactive use, and its consumer terms restrict automated "
    "access: check your plan before relying on automatic resumes."
)


class ClaudeProvider(Provider):
    """Claude Code sessions under every config directory. See the module docstring."""

    name = "claude"
    description = "Claude Code sessions (transcripts under ~/.claude/projects)"

    def __init__(self, settings: Settings, paths: Paths, clock: Clock,
                 environ: Mapping[str, str], roots: list[Path] | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.paths = paths
        self.clock = clock
        self.environ = dict(environ)
        self.roots = roots if roots is not None else config.existing_dirs(
            settings.claude_config_dirs, environ)
        self.zone = config.local_zone(settings.claude_timezone, environ,
                                      LiveZone(clock.local_zone))
        self.watcher = TranscriptWatcher(self.roots)
        self.live = LiveSessions(self.roots)
        self.tracking = TrackingFile(paths.data_dir)
        self.events = HookEvents(paths.data_dir, clock)
        self.json_cache = config.JsonCache()
        self.runs: dict[str, HeadlessRun] = {}
        self._readings: dict[str, QuotaReading] = {}
        self.emitted: dict[str, tuple[Any, ...]] = {}
        self._stops_seen = 0
        self._poll_task: asyncio.Task[None] | None = None
        self._scan_task: asyncio.Task[None] | None = None
        #: headless runs being stopped because another process opened their session
        self._yielding: dict[str, asyncio.Task[None]] = {}
        self._host_up = asyncio.Event()

    @property
    def heavy_start(self) -> bool:  # type: ignore[override]
        """Its first pass reads the transcripts' history: heavy when there are any (one
        directory entry looked at per root; an empty config directory is light)."""
        return any(_has_entries(root / "projects") for root in self.roots)

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        now = self.clock.now().timestamp()
        tracking = self.tracking.load()
        first = await asyncio.to_thread(
            startup.read_newest_first, self.watcher, now,
            self.settings.claude_track_recent_hours * 3600.0, {*tracking.tracked, *tracking.auto})
        self.live.refresh()
        self.events.compact_spool()
        self.events.read_spool()
        self.apply_events()
        self._note_new_stops(report=False)
        tails = first.tails
        log.info("claude: newest %d of %d transcripts read (%.1f MiB); tails of %d more from the "
                 "last %.0f days (%.1f MiB; budget %s; %d over it), %d of them limit-stopped; the "
                 "rest in the background", len(first.read), len(self.watcher.files),
                 first.bytes_read / (1 << 20), tails.read, startup.RESET_HORIZON / 86400,
                 tails.bytes_read / (1 << 20), startup.TAIL_BUDGET, tails.left, len(tails.stopped))
        self._host_up = asyncio.Event()
        self._scan_task = asyncio.ensure_future(self._scan_history(first.rest))
        self._scan_task.set_name("claude:history")
        self._poll_task = asyncio.ensure_future(self._poll_loop())
        self._poll_task.set_name("claude:poll")

    async def _scan_history(self, rest: list[TranscriptFileState]) -> None:
        """The full-history scan behind the first pass: read off the loop, taken over on it."""
        workers = self.settings.claude_scan_workers or min(4, os.cpu_count() or 1)
        # the host's start goes first (every provider's, not only this one's first discovery:
        # the scan's workers would take the CPU another provider's start-up read needs); the
        # goals and gauges the host shows are already right
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(HISTORY_DELAY_SECONDS):
                await self._host_up.wait()
        try:
            scanned, exports = await asyncio.to_thread(startup.scan_rest, rest, workers)
        except Exception:
            log.exception("claude: scanning the history failed")
            return
        sessions = self.watcher.adopt_scanned(scanned, exports)
        self._note_new_stops(report=True)
        self.report(sessions)
        log.info("claude: full history scanned: %d transcripts, %d responses, %d limit stops "
                 "under %s", len(self.watcher.files), len(self.watcher.ledger),
                 len(self.watcher.ledger.stops), ", ".join(map(str, self.roots)) or "nothing")

    async def history_scanned(self) -> None:
        """Wait for the background scan of the history (tests, benchmarks)."""
        if self._scan_task is not None:
            await asyncio.shield(self._scan_task)

    async def stop(self) -> None:
        for task in (self._scan_task, self._poll_task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._scan_task = None
        if self._poll_task is not None:
            self._poll_task = None
        # a run giving way is stopped to the end (it is in no other list by then)
        await asyncio.gather(*self._yielding.values(), return_exceptions=True)
        await asyncio.gather(*(run.stop() for run in self.runs.values()),
                             return_exceptions=True)
        self.runs.clear()

    async def _poll_loop(self) -> None:
        while True:
            await self.clock.sleep(self.settings.claude_poll_seconds)
            try:
                self.poll()
                for session_id in self._untracked_goals():
                    await self.forget(session_id, "untracked by the user")
            except Exception:
                log.exception("claude: following transcripts failed")

    def poll(self) -> set[str]:
        """One round of following: files, hook events, the tracking file. Returns the sessions
        whose observation was reported."""
        changed = self.watcher.poll(self.clock.now().timestamp())
        self.live.refresh()
        changed |= self.live.take_changed()
        self._yield_to_other_writers()
        if self.events.read_spool():
            changed |= self.apply_events()
        if changed:
            self._note_new_stops(report=True)
        return self.report(changed | self._tracking_changes())

    # -- which sessions are goals --------------------------------------------------------------

    def goal_states(self, candidates: list[TranscriptFileState]) -> list[TranscriptFileState]:
        """The candidates that are goals; limit-stopped ones become goals (remembered)."""
        tracking = self.tracking.load()
        goals, new = [], []
        for state in candidates:
            if not self.watcher.reportable(state):
                continue  # the background scan has not read it yet
            session_id = state.session_id
            if session_id in tracking.tracked or session_id in tracking.auto:
                goals.append(state)
            elif (session_id not in tracking.untracked
                  and self.settings.claude_track_limit_stopped
                  and self._recently_stopped(state)):
                goals.append(state)
                new.append(session_id)
        if new:
            self.tracking.update(lambda t: t.auto.update(new))
        return goals

    def _recently_stopped(self, state: TranscriptFileState) -> bool:
        stop = sessions.current_stop(state, self._context(state))
        if stop is None:
            return False
        now = self.clock.now()
        recent = now - stop.at <= timedelta(hours=self.settings.claude_track_recent_hours)
        return recent or (stop.resets_at is not None and stop.resets_at > now)

    def _context(self, state: TranscriptFileState) -> sessions.SessionContext:
        tracking = self.tracking.load()
        options = tracking.tracked.get(state.session_id, {})
        return sessions.SessionContext(
            zone=self.zone,
            events=self.events.for_session(state.session_id),
            runner_stop=tracking.runner_stops.get(state.session_id),
            keep_prompting=bool(options.get("keep_prompting", False)),
            live=self.live.live(state.session_id, self.own_pids()),
        )

    def own_pids(self) -> set[int]:
        """The claude processes Goalkeeper runs itself (they are not someone else's)."""
        return {pid for run in self.runs.values() if (pid := run.pid) is not None}

    def observation(self, state: TranscriptFileState) -> GoalObservation:
        return sessions.observe(state, sessions.read_meta(state), self._context(state),
                                self.clock.now())

    def report(self, session_ids: set[str]) -> set[str]:
        """Report the observations of these sessions that changed since last reported."""
        candidates = [s for s in map(self.watcher.session, sorted(session_ids)) if s is not None]
        reported = set()
        for state in self.goal_states(candidates):
            if self._emit(self.observation(state)):
                reported.add(state.session_id)
        return reported

    def _emit(self, obs: GoalObservation, send: bool = True) -> bool:
        session_id = obs.id.split(":", 1)[1]
        key = (obs.state, obs.resets_at, obs.auto_resume_block, obs.pause_detail, obs.title,
               tuple(sorted((k, str(v)) for k, v in obs.data.items())))
        self.watcher.pinned.add(session_id)
        if self.emitted.get(session_id) == key:
            return False
        self.emitted[session_id] = key
        if send:
            self.sink.goal_observed(self.name, obs)
        return True

    def _tracking_changes(self) -> set[str]:
        """Sessions tracked since the last round (e.g. by ``goalkeeper track`` without a host)."""
        tracking = self.tracking.load()
        return {s for s in (*tracking.tracked, *tracking.auto) if s not in self.emitted}

    def _untracked_goals(self) -> list[str]:
        """Sessions reported as goals that the tracking file now says to leave alone (e.g.
        ``goalkeeper untrack`` ran while the host was busy)."""
        untracked = self.tracking.load().untracked
        return [s for s in self.emitted if s in untracked]

    async def forget(self, session_id: str, why: str) -> None:
        """Stop offering a session as a goal: the engine forgets it (runner stopped, row
        removed, history kept, with ``why`` noted first)."""
        self.emitted.pop(session_id, None)
        self.watcher.pinned.discard(session_id)
        goal = sessions.goal_id(session_id)
        self.sink.goal_noted(goal, HistoryEvent.UNTRACKED, why)
        await self.sink.perform(Forget(goal), f"provider:{self.name}")

    async def discover(self) -> list[GoalObservation]:
        result = []
        for state in self.goal_states(list(self.watcher.sessions())):
            obs = self.observation(state)
            self._emit(obs, send=False)  # the engine applies what discovery returns
            result.append(obs)
        return result

    def host_started(self) -> None:
        self._host_up.set()

    # -- quota readings ------------------------------------------------------------------------

    def _note_new_stops(self, report: bool) -> None:
        """Limit stops seen since the last call: the account ran out of that window then.
        Keeps the newest reading per window (a headless run's exact reset wins)."""
        stops = list(self.watcher.ledger.stops.values())
        runner_stops = self.tracking.load().runner_stops
        for stop in stops[self._stops_seen:]:
            parsed = parse_stop(stop, self.zone)
            reading = limit_stop_reading(parsed, stop.at)
            exact = sessions.runner_reset(runner_stops.get(stop.session_id), stop.at)
            if exact is not None:
                reading = reading.model_copy(update={"resets_at": exact,
                                                     "exactness": Exactness.EXACT})
            current = self._readings.get(parsed.window)
            if current is None or current.observed_at < stop.at:
                self._readings[parsed.window] = reading
                if report:
                    self.sink.quota_observed(reading)
        self._stops_seen = len(stops)

    def observe_reading(self, reading: QuotaReading) -> None:
        """A reading from a hook or a run: kept as the window's latest and reported."""
        if not worth_storing(reading, self._readings.get(reading.window_id)):
            return
        self._readings[reading.window_id] = reading
        self.sink.quota_observed(reading)

    async def read_quotas(self, fresh: bool = False) -> list[QuotaReading]:
        readings = dict(self._readings)
        for reading in await asyncio.to_thread(self._cached_usage):
            current = readings.get(reading.window_id)
            if current is None or current.observed_at < reading.observed_at:
                readings[reading.window_id] = reading
        return sorted(readings.values(), key=lambda r: r.window_id)

    def _cached_usage(self) -> list[QuotaReading]:
        result: list[QuotaReading] = []
        for root in self.roots:
            path = config.global_state_path(root, self.environ)
            data = self.json_cache.get(path)
            if data is not None:
                result.extend(cached_usage_readings(data, self.clock.now(), str(path)))
        return result

    def read_problems(self) -> tuple[str, ...]:
        return tuple(f"{path} ({why})" for path, why in sorted(self.json_cache.failed.items()))

    def usage_blocks(self) -> list[UsageBlock]:
        """Tokens per 5-hour block over the whole history (for the usage chart)."""
        return self.watcher.ledger.blocks()

    # -- hook events -----------------------------------------------------------------------------

    def apply_events(self) -> set[str]:
        """Fold new hook events into the sessions they name; returns the sessions touched."""
        touched = set()
        for event in self.events.take_new():
            state = self.watcher.session(event.session_id)
            if state is None:
                self.watcher.poll(self.clock.now().timestamp())
                state = self.watcher.session(event.session_id)
            if state is not None and event.kind == "stop_failure":
                sessions.add_hook_stop(state, event)
            touched.add(event.session_id)
        return touched

    # -- running goals -------------------------------------------------------------------------

    async def start_goal(self, goal: Goal, fence: int) -> StartOutcome:
        return await self._launch(goal, fence)

    async def prepare_start(self, work: QueuedWork) -> PreparedStart:
        """A queued prompt: a new session id, tracked now; :meth:`resume_goal` starts the
        session with ``--session-id`` (only while no transcript of it exists: check, then
        act) and Goalkeeper follows it like any tracked session."""
        session_id = str(uuid.uuid4())
        new_session_command(self.binary(), session_id, work.text)  # refused now, not at 3 am
        since = self.clock.now().isoformat()

        def track(tracking: Any) -> None:
            tracking.tracked.setdefault(session_id, {"since": since})

        self.tracking.update(track)
        return PreparedStart(sessions.goal_id(session_id), work.text.strip().splitlines()[0],
                             {"cwd": work.cwd, "prompt": work.text, "new_session": True})

    async def resume_goal(self, goal: Goal, fence: int) -> StartOutcome:
        state = self._session_state(goal)
        self.live.refresh()
        session_id = sessions.session_of(goal.id)
        live = self.live.live(session_id, self.own_pids()) if session_id else None
        if live is not None:  # never headless behind a live Claude Code's back
            raise RunnerDeferred(N_("{block} (pid {pid}): Goalkeeper waits for that process to "
                                    "exit").format(block=sessions.LIVE_BLOCK, pid=live.pid), 60.0)
        if goal.pause_reason is PauseReason.QUOTA and state is not None:
            read_file(state, self.watcher.ledger)  # check, then act: what happened meanwhile?
            stops = state.facts.stops
            if stops.stop is not None and stops.activity_at is not None:
                return StartOutcome.ALREADY_RUNNING  # someone continued it after the stop
        return await self._launch(goal, fence)

    def _session_state(self, goal: Goal) -> TranscriptFileState | None:
        session_id = sessions.session_of(goal.id)
        return self.watcher.session(session_id) if session_id else None

    async def _launch(self, goal: Goal, fence: int) -> StartOutcome:
        session_id = sessions.session_of(goal.id)
        if session_id is None:
            raise RunnerError(f"{goal.id} is not a Claude session")
        state = self.watcher.session(session_id)
        cwd = goal.data.get("cwd") or (sessions.read_meta(state).cwd if state else None)
        if not cwd or not Path(cwd).is_dir():
            raise RunnerError(f"the session's directory {cwd or '(unknown)'} does not exist")
        config_dir = goal.data.get("config_dir") or (state.config_dir if state else None)
        resume_id = str(goal.data.get("resume_id") or session_id)
        if self._not_started(goal, session_id):  # queued work: its session starts now
            argv = new_session_command(self.binary(), session_id, str(goal.data["prompt"]))
        else:
            argv = command(self.binary(), resume_id, self.settings.claude_continuation_text)
        env = child_env(self.environ, config_dir,
                        config_dir is None or config.is_default_dir(Path(config_dir),
                                                                    self.environ))
        await self._stop_run(goal.id)
        retry = RetryPolicy(retries=self.settings.claude_retry_attempts - 1,
                            backoff_initial=self.settings.claude_retry_backoff_seconds,
                            backoff_max=max(900.0, self.settings.claude_retry_backoff_seconds))
        run = HeadlessRun(RunSpec(goal.id, fence, argv, str(cwd), env,
                                  bool(goal.data.get("keep_prompting")), self.zone, retry,
                                  random.random),
                          self.sink, self.clock, self._on_limited,
                          self.settings.claude_stop_grace_seconds)
        await run.start()
        self.runs[goal.id] = run
        self.watcher.pinned.add(session_id)
        return StartOutcome.STARTED

    def _not_started(self, goal: Goal, session_id: str) -> bool:
        """Queued work whose session Claude has not written yet (looked for afresh)."""
        if not goal.data.get("new_session") or not goal.data.get("prompt"):
            return False
        if self.watcher.session(session_id) is None:
            self.watcher.poll(self.clock.now().timestamp())
        return self.watcher.session(session_id) is None

    def binary(self) -> str:
        """The ``claude`` executable: the ``claude_bin`` setting, else ``claude`` on PATH."""
        configured = self.settings.claude_bin.strip()
        if configured:
            path = Path(configured).expanduser()
            if not path.is_file():
                raise RunnerError(f"claude_bin {configured!r} does not exist")
            return str(path)
        found = shutil.which("claude", path=self.environ.get("PATH"))
        if found is None:
            raise RunnerError("the claude command was not found on PATH "
                              "(set claude_bin or GOALKEEPER_CLAUDE_BIN)")
        return found

    def _on_limited(self, goal_id: str, ended: TurnEnded) -> None:
        session_id = sessions.session_of(goal_id)
        if session_id is None or ended.hit is None:
            return
        resets_at = ended.hit.resets_at
        stopped_at = self.clock.now().isoformat()

        def note(tracking: Any) -> None:
            tracking.runner_stops[session_id] = {
                "stopped_at": stopped_at,
                "resets_at": resets_at.isoformat() if resets_at else "",
            }

        self.tracking.update(note)

    def _yield_to_other_writers(self) -> None:
        """A session Goalkeeper runs headless that another process opened meanwhile — the
        user's TUI above all: the user is at that session — has two writers appending to one
        transcript. Goalkeeper's run gives way: it is stopped as a pause would stop it, and the
        goal is paused (``external``) saying why."""
        own = self.own_pids()
        for goal_id, run in list(self.runs.items()):
            session_id = sessions.session_of(goal_id)
            other = self.live.live(session_id, own) if session_id else None
            if other is not None and goal_id not in self._yielding:
                task = asyncio.ensure_future(self._give_way(goal_id, run, other))
                task.set_name(f"claude:give-way:{goal_id}")
                self._yielding[goal_id] = task

    async def _give_way(self, goal_id: str, run: HeadlessRun, other: LiveProcess) -> None:
        try:
            if self.runs.get(goal_id) is run:
                del self.runs[goal_id]
            was_running = run.running
            await run.stop()
            if was_running:  # a run that ended by itself meanwhile has reported its end
                log.info("%s: stopped the headless run: %s has the session open", goal_id,
                         f"pid {other.pid}")
                self.sink.goal_paused(goal_id, run.spec.fence, PauseReason.EXTERNAL,
                                      sessions.gave_way_detail(other))
        finally:
            self._yielding.pop(goal_id, None)

    async def pause_goal(self, goal: Goal) -> None:
        await self._stop_run(goal.id)

    async def pause_goal_gracefully(self, goal: Goal) -> None:
        """The policy pause: Goalkeeper's headless run finishes the turn in progress (bounded
        by ``claude_turn_end_timeout_seconds``) and starts no other; it stays this goal's run
        meanwhile (its process is Goalkeeper's own, and a resume or pause replaces it as
        usual). Nothing else to stop: a session Goalkeeper does not run is the user's."""
        run = self.runs.get(goal.id)
        if run is None:
            return
        await run.finish_turn(self.settings.claude_turn_end_timeout_seconds)
        if self.runs.get(goal.id) is run:
            del self.runs[goal.id]

    async def cancel_goal(self, goal: Goal) -> None:
        await self._stop_run(goal.id)
        session_id = sessions.session_of(goal.id)
        if session_id and self._not_started(goal, session_id):
            # queued and never started: its session id is dropped (no transcript will come)
            def drop(tracking: Any) -> None:
                tracking.tracked.pop(session_id, None)

            self.tracking.update(drop)

    async def _stop_run(self, goal_id: str) -> None:
        run = self.runs.pop(goal_id, None)
        if run is not None:
            await run.stop()

    def open_command(self, goal: Goal) -> list[str] | None:
        session_id = sessions.session_of(goal.id)
        if session_id is None:
            return None
        try:
            binary = self.binary()
        except RunnerError:
            binary = "claude"
        cwd = goal.data.get("cwd")
        if not cwd:
            return [binary, "--resume", session_id]
        # `claude --resume` looks the session up under the current directory's project
        line = f"cd {shlex.quote(str(cwd))} && exec {shlex.quote(binary)} --resume " + (
            shlex.quote(session_id))
        return ["sh", "-c", line]

    def auto_resume_notice(self, goal: Goal) -> tuple[str, str] | None:
        return ("claude-headless-billing", BILLING_NOTICE)

    def control_ops(self) -> Mapping[str, ControlHandler]:
        return ops.control_ops(self)

    def now(self) -> datetime:
        return self.clock.now()


def parse_stop(stop: LimitStopRecord, zone: Any) -> ParsedLimit:
    """A limit stop of the history, read: its structured window and reset win over its text."""
    info = None
    if stop.rate_limit_type is not None or stop.resets_at is not None:
        info = LimitInfo(stop.rate_limit_type, stop.resets_at, stop.using_overage)
    return parse_limit(stop.text, stop.at, zone, info)


def _has_entries(directory: Path) -> bool:
    try:
        with os.scandir(directory) as entries:
            return next(entries, None) is not None
    except OSError:
        return False
