"""A Claude Code session as a Goalkeeper goal: what its transcript says it is doing now.

* The latest limit stop with no work after it → ``paused`` for quota, with the exact reset the
  stop carries (``rate_limit_info.resetsAt``), else the one read from its text against the stop's
  own timestamp (or the exact one a headless run reported).
* Work after the stop (the user typed, Claude's own auto-continue fired) → ``running``, outside
  Goalkeeper.
* Claude's own ``/goal`` met → ``done``.
* No stop → ``idle``: nothing to resume; starting it runs one headless turn.

Claude Code's native "Continue automatically at usage limit" continues a stopped session only
while a live interactive process (a TUI) has it open and has armed its wait; Goalkeeper then only
watches (:func:`native_block`), so the two never both resume it. A session open in a live TUI
that will *not* continue by itself (weekly stop, Esc, …) is never resumed headless behind the
user's back: Goalkeeper waits for that process to exit. A run with ``CLAUDE_CODE_RETRY_WATCHDOG``
(print mode included) writes a retry wait instead of a stop and goes on by itself while its
process lives. Anything else — print mode without it, the TUI gone — is Goalkeeper's to resume.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from core.i18n import N_
from core.models import Exactness, GoalState, PauseReason
from core.providers.base import GoalObservation
from core.providers.claude.follow import TranscriptFileState
from core.providers.claude.live import LiveProcess
from core.providers.claude.records import (
    GoalStatus,
    LimitInfo,
    Record,
    RecordKind,
    classify,
    json_objects,
    title_of,
)
from core.providers.claude.resets import ParsedLimit, parse_limit
from core.providers.claude.wording import WINDOW_5H, WINDOW_7D, is_chosen_wait

NATIVE_BLOCK = N_("Claude will resume itself")
LIVE_BLOCK = N_("open in a live Claude Code session")
#: Claude Code does not wait out a reset further away than this by itself (2.1.328)
NATIVE_HORIZON = timedelta(hours=24)
HEAD_BYTES = 512 * 1024
TAIL_BYTES = 64 * 1024
#: a reset a headless run reported belongs to a transcript stop this close to it
SAME_STOP = timedelta(minutes=5)
#: hook notification kinds after which Claude Code will *not* continue by itself
NATIVE_OFF_EVENTS = ("quota_auto_resume_disabled", "quota_auto_resume_stale")


def find_transcript(roots: Sequence[Path], session_id: str) -> tuple[Path, Path] | None:
    """(transcript, config dir) of a session: ``<dir>/projects/*/<id>.jsonl``, the newest."""
    found = []
    for root in roots:
        for path in (root / "projects").glob(f"*/{session_id}.jsonl"):
            try:
                found.append((path.stat().st_mtime, path, root))
            except OSError:
                continue
    if not found:
        return None
    _, path, root = max(found)
    return path, root


def goal_id(session_id: str) -> str:
    return f"claude:{session_id}"


def session_of(goal: str) -> str | None:
    prefix, _, session = goal.partition(":")
    return session if prefix == "claude" and session else None


@dataclass(frozen=True)
class HookEvent:
    """A StopFailure or Notification hook payload, reduced to what matters."""

    session_id: str
    at: datetime
    kind: str  # "stop_failure" or a notification type
    text: str = ""


@dataclass(frozen=True)
class SessionContext:
    """Everything besides the transcript that decides a session's observation."""

    zone: tzinfo
    events: Sequence[HookEvent] = ()
    runner_stop: dict[str, str] | None = None  # {"stopped_at", "resets_at"} of a headless run
    keep_prompting: bool = False
    live: LiveProcess | None = None  # a running Claude Code process that has the session open


@dataclass
class ClaudeSessionMeta:
    title: str
    cwd: str | None
    branch: str | None


def read_meta(state: TranscriptFileState) -> ClaudeSessionMeta:
    """Title (first prompt), working directory and branch of a session, read cheaply."""
    facts = state.facts
    if facts.first_prompt is None:
        facts.first_prompt = _first_prompt(state.path) or ""  # looked once; "" means none
    if facts.cwd is None or facts.branch is None:
        tail_cwd, tail_branch = _tail_location(state.path)
        facts.cwd, facts.branch = facts.cwd or tail_cwd, facts.branch or tail_branch
    prompt = facts.first_prompt
    title = title_of(prompt) if prompt else f"Claude session {state.session_id[:8]}"
    return ClaudeSessionMeta(title, facts.cwd, facts.branch)


def _lines(path: str, offset: int, size: int) -> list[dict[str, Any]]:
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(size)
    except OSError:
        return []
    return json_objects(data)


def _first_prompt(path: str) -> str | None:
    for obj in _lines(path, 0, HEAD_BYTES):
        record = classify(obj)
        if record.kind is RecordKind.PROMPT and not record.sidechain:
            return record.text
    return None


def _tail_location(path: str) -> tuple[str | None, str | None]:
    try:
        size = os.path.getsize(path)
    except OSError:
        return None, None
    cwd = branch = None
    for obj in _lines(path, max(0, size - TAIL_BYTES), TAIL_BYTES):
        cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else cwd
        branch = obj.get("gitBranch") if isinstance(obj.get("gitBranch"), str) else branch
    return cwd, branch


@dataclass(frozen=True)
class Stopped:
    """A session's current limit stop, read."""

    at: datetime
    parsed: ParsedLimit
    resets_at: datetime | None
    headless: bool
    limit: LimitInfo | None = None
    entrypoint: str | None = None

    @property
    def exact(self) -> bool:
        return self.headless or self.parsed.exactness is Exactness.EXACT


def current_stop(state: TranscriptFileState, ctx: SessionContext) -> Stopped | None:
    """The stop the session is paused at now, or None (no stop, or work went on after it)."""
    stops = state.facts.stops
    stop = stops.stop
    if stop is None or stop.at is None or stops.activity_at is not None:
        return None
    parsed = parse_limit(stop.text or "", stop.at, ctx.zone, stop.limit)
    resets_at, headless = parsed.resets_at, False
    runner = ctx.runner_stop
    if runner and _same_stop(runner, stop.at):
        reported = _instant(runner.get("resets_at"))
        if reported is not None or parsed.exactness is not Exactness.EXACT:
            resets_at, headless = reported, True
    return Stopped(stop.at, parsed, resets_at, headless, stop.limit, stop.entrypoint)


def _same_stop(runner: dict[str, str], stopped_at: datetime) -> bool:
    reported_at = _instant(runner.get("stopped_at"))
    return reported_at is not None and abs(reported_at - stopped_at) <= SAME_STOP


def runner_reset(runner: dict[str, str] | None, stopped_at: datetime) -> datetime | None:
    """The exact reset a headless run reported for the stop at ``stopped_at``, if it did."""
    if not runner or not _same_stop(runner, stopped_at):
        return None
    return _instant(runner.get("resets_at"))


def native_block(state: TranscriptFileState, stop: Stopped, ctx: SessionContext,
                 now: datetime) -> str | None:
    """Why Goalkeeper must not resume this stopped session now (None: it is Goalkeeper's).

    Only a live interactive process can continue a session by itself: with none (print mode,
    the TUI closed or killed during its wait) there is nothing to wait for. With one, Claude
    continues the session when it armed its wait and nothing stood it down since; otherwise the
    user is at that session and Goalkeeper waits for the process to exit.
    """
    live = ctx.live
    native = state.facts.stops.native
    if live is not None and native is not None and native.kind is RecordKind.RETRY_WAIT:
        # any run with the retry watchdog, print mode included: it goes on by itself
        return N_("{block}: Claude Code (pid {pid}) waits out the usage limit inside its "
                  "process (CLAUDE_CODE_RETRY_WATCHDOG)").format(block=NATIVE_BLOCK, pid=live.pid)
    if live is None or not live.interactive:
        return None  # nothing at all, or a print-mode run without the watchdog: it has exited
    why_not = _why_claude_will_not(state, stop, ctx, now)
    if why_not is None:
        text = " ".join((native.text or "").split()) if native is not None else ""
        return N_("{block}: it says “{text}” (Claude Code pid {pid})").format(
            block=NATIVE_BLOCK, text=text, pid=live.pid)
    return N_("{block} (pid {pid}) that will not continue by itself — {why}: Goalkeeper waits "
              "for it to exit").format(block=LIVE_BLOCK, pid=live.pid, why=why_not)


def _why_claude_will_not(state: TranscriptFileState, stop: Stopped, ctx: SessionContext,
                         now: datetime) -> str | None:
    """None while Claude's own wait is armed and holds; else why Claude will not continue."""
    native = state.facts.stops.native
    if native is None or native.kind is not RecordKind.NATIVE_WAITING:
        if native is not None and native.kind is RecordKind.NATIVE_CANCELLED:
            return N_("it says “{text}”").format(text=" ".join((native.text or "").split()))
        return N_("it did not arm its wait for the reset")
    after = [e.kind for e in ctx.events if e.at >= (native.at or stop.at)
             and e.kind != "stop_failure"]
    if after and after[-1] in NATIVE_OFF_EVENTS:
        return N_("Claude Code reported {event}").format(event=after[-1])
    if stop.limit is not None and stop.limit.using_overage:
        return N_("the session was on extra usage")
    chosen = is_chosen_wait(native.text or "")
    if not chosen and stop.resets_at is not None and stop.resets_at - now > NATIVE_HORIZON:
        return N_("the reset is more than 24 hours away")
    return None


def observe(state: TranscriptFileState, meta: ClaudeSessionMeta, ctx: SessionContext,
            now: datetime) -> GoalObservation:
    """The goal observation of a session, as its transcript shows it now."""
    data: dict[str, Any] = {
        "session_id": state.session_id, "cwd": meta.cwd, "branch": meta.branch,
        "transcript": state.path, "config_dir": state.config_dir,
        "keep_prompting": ctx.keep_prompting,
    }
    windows: tuple[str, ...] = (WINDOW_5H, WINDOW_7D)
    goal = state.facts.goal
    if goal is not None:
        data["claude_goal"] = {"condition": goal.condition, "met": goal.met,
                               "failed": goal.failed}
        if goal.reason:
            data["claude_goal"]["reason"] = goal.reason
    stop = current_stop(state, ctx)
    if stop is not None:
        detail = stop.parsed.text + (f" ({stop.parsed.note})" if stop.parsed.note else "")
        data["reset_exactness"] = "exact" if stop.exact else stop.parsed.exactness.value
        if stop.parsed.window not in windows:
            windows += (stop.parsed.window,)
        return GoalObservation(
            id=goal_id(state.session_id), title=meta.title, state=GoalState.PAUSED,
            observed_at=stop.at, pause_reason=PauseReason.QUOTA, pause_detail=detail,
            windows=windows, resets_at=stop.resets_at,
            auto_resume_block=native_block(state, stop, ctx, now), data=data)
    if goal is not None and goal.met and state.facts.goal_at is not None:
        return GoalObservation(id=goal_id(state.session_id), title=meta.title,
                               state=GoalState.DONE, observed_at=state.facts.goal_at,
                               windows=windows, data=data,
                               pause_detail=N_("Claude's goal is met: {condition}").format(
                                   condition=goal.condition))
    if goal is not None and goal.failed and state.facts.goal_at is not None:
        # Claude stopped: the goal is impossible as it stands. Like a Codex goal ``blocked``,
        # it needs the user — paused for an error (never resumed by itself), not done.
        return GoalObservation(id=goal_id(state.session_id), title=meta.title,
                               state=GoalState.PAUSED, observed_at=state.facts.goal_at,
                               pause_reason=PauseReason.ERROR, windows=windows, data=data,
                               pause_detail=failed_goal_detail(goal))
    stops = state.facts.stops
    if stops.stop is not None and stops.activity_at is not None:
        return GoalObservation(id=goal_id(state.session_id), title=meta.title,
                               state=GoalState.RUNNING, observed_at=stops.activity_at,
                               windows=windows, data=data,
                               pause_detail=N_("the session went on after its limit stop"))
    return GoalObservation(id=goal_id(state.session_id), title=meta.title, state=GoalState.IDLE,
                           observed_at=state.facts.last_at or now, windows=windows, data=data)


def gave_way_detail(other: LiveProcess) -> str:
    """Why Goalkeeper stopped its headless run of a session another process opened."""
    who = (N_("you opened this session in Claude Code (pid {pid})").format(pid=other.pid)
           if other.interactive
           else N_("another Claude Code process (pid {pid}, {kind}) resumed this session").format(
               pid=other.pid, kind=other.entrypoint or other.kind))
    return N_("{who} while Goalkeeper ran it headless: Goalkeeper stopped its run so that only "
              "one process writes the session; it is yours now (resume it here when you are "
              "done)").format(who=who)


def failed_goal_detail(goal: GoalStatus) -> str:
    reason = " ".join((goal.reason or "").split())
    if reason:
        return N_("Claude's goal failed: “{condition}” cannot be met — {reason}; give the "
                  "session new directions").format(condition=goal.condition, reason=reason)
    return N_("Claude's goal failed: “{condition}” cannot be met; give the session new "
              "directions").format(condition=goal.condition)


def add_hook_stop(state: TranscriptFileState, event: HookEvent) -> bool:
    """A StopFailure hook said the session stopped on a limit: note it unless the transcript
    already shows that stop (or went on after it). True when it was noted."""
    facts = state.facts
    stop = facts.stops.stop
    if stop is not None and stop.at is not None and stop.at > event.at - SAME_STOP:
        return False  # the transcript has this stop (or a newer one)
    if facts.last_at is not None and facts.last_at > event.at + timedelta(seconds=5):
        return False  # the session went on after the hook fired
    text = event.text or N_("usage limit reached (reported by the StopFailure hook)")
    stop = Record(RecordKind.LIMIT_STOP, event.at, session_id=state.session_id, text=text)
    facts.stops.feed(stop, f"hook:{event.at.isoformat()}")
    return True


def _instant(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None
