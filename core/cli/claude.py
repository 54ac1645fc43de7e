"""Claude Code commands: ``hook claude-statusline``, ``hook claude-stop-failure``,
``hooks install|uninstall claude``, ``track``, ``untrack``.

The two ``hook`` commands are what Claude Code runs once the hooks are installed; they talk to
the running host when there is one and otherwise write to Goalkeeper's own files (see
:mod:`core.providers.claude.hook_commands`). ``track``/``untrack`` go through the host like every
goal change; with no host running they update the tracking file and the store directly, through
the same pure intake code the host uses.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import sys
from pathlib import Path
from typing import Any

from core.cli.common import (
    EXIT_OK,
    EXIT_UNKNOWN_GOAL,
    EXIT_USAGE,
    CliError,
    Context,
)
from core.clock import SystemClock, iso
from core.goals.auto_resume import AutoResumePolicy
from core.goals.changes import note_row
from core.goals.intake import IntakeContext, decide_observation
from core.hosts.control import NoHostRunning, send_request
from core.hosts.lease import host_running
from core.i18n import N_, _, localized
from core.i18n.words import word
from core.models import HistoryEvent, Outcome
from core.paths import check_socket
from core.providers.claude import config, hook_commands, hooks, sessions, stop_hook
from core.providers.claude.follow import TranscriptFileState, read_file
from core.providers.claude.ledger import UsageLedger
from core.providers.claude.live import LiveSessions
from core.providers.claude.readings import worth_storing
from core.providers.claude.state import Tracking, TrackingFile, spool_path
from core.store import open_store

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    hook = sub.add_parser("hook", parents=[common], help=_("commands agents' hooks run"))
    hook_sub = hook.add_subparsers(dest="hook", metavar="HOOK", required=True)
    p = hook_sub.add_parser("claude-statusline", parents=[common],
                            help=_("Claude Code statusline: records quota, runs --chain"))
    p.add_argument("--chain", help=_("your own statusline command (its output passes through)"))
    p.set_defaults(func=cmd_statusline)
    p = hook_sub.add_parser("claude-stop-failure", parents=[common],
                            help=_("Claude Code StopFailure/Notification hook: records limit "
                                   "stops"))
    p.set_defaults(func=cmd_stop_failure)
    manage = sub.add_parser("hooks", parents=[common], help=_("install or remove agent hooks"))
    manage_sub = manage.add_subparsers(dest="hooks_action", metavar="ACTION", required=True)
    for action, text in (("install", _("add Goalkeeper's statusline, StopFailure and "
                                        "Notification hooks")),
                         ("uninstall", _("remove them, restoring what was there"))):
        p = manage_sub.add_parser(action, parents=[common], help=text)
        p.add_argument("agent", choices=["claude"])
        p.add_argument("--config-dir", action="append", type=Path,
                       help=_("this Claude config dir only (repeatable; default: every one "
                              "found)"))
        p.set_defaults(func=cmd_hooks, action=action)
    p = sub.add_parser("track", parents=[common], help=_("keep a Claude session going"))
    p.add_argument("goal", help="claude:<session id>")  # i18n: ignore (the syntax)
    p.add_argument("--keep-prompting", action=argparse.BooleanOptionalAction, default=None,
                   help=_("after a normal end of turn, prompt again (default: stop)"))
    p.set_defaults(func=cmd_track)
    p = sub.add_parser("untrack", parents=[common], help=_("stop watching a Claude session"))
    p.add_argument("goal", help="claude:<session id>")  # i18n: ignore (the syntax)
    p.set_defaults(func=cmd_untrack)


# -- the hook commands ---------------------------------------------------------------------------


def _try_host(ctx: Context, request: dict[str, Any], timeout: float = 2.0) -> bool:
    """Send ``request`` to the running host; False when there is none (or it cannot take it)."""
    info = host_running(ctx.paths)
    if info is None:
        return False
    socket_path = Path(info.socket) if info.socket else ctx.paths.socket_path
    try:
        check_socket(ctx.paths, socket_path)  # an unsafe one (UnsafeDirectory): not connected
        reply = send_request(socket_path, {**request, "origin": "hook"}, timeout=timeout)
    except (NoHostRunning, OSError, ValueError):
        return False
    return "error" not in reply


def cmd_statusline(ctx: Context) -> int:
    stdin = sys.stdin.buffer.read()
    code = hook_commands.run_chain(ctx.args.chain, stdin, sys.stdout.buffer)
    with contextlib.suppress(Exception):  # the statusline must keep working whatever happens
        _record_statusline(ctx, stdin)
    return code


def _record_statusline(ctx: Context, stdin: bytes) -> None:
    now = SystemClock().now()
    payload = hook_commands.parse_payload(stdin)
    readings = hook_commands.readings_of(stdin, now)
    if payload is None or not readings:
        return
    if _try_host(ctx, {"op": "claude.statusline", "payload": payload}):
        return
    store, _ = open_store(ctx.paths.database, now)
    try:
        latest = {r.window_id: r for r in store.latest_readings()}
        for reading in readings:
            if worth_storing(reading, latest.get(reading.window_id)):
                store.save_reading(reading)
    finally:
        store.close()


def cmd_stop_failure(ctx: Context) -> int:
    with contextlib.suppress(Exception):  # a hook must never get in Claude's way
        hook_commands.spool_payload(sys.stdin.buffer.read(),
                                    str(spool_path(ctx.paths.data_dir)), SystemClock().now())
    return EXIT_OK


# -- hooks install / uninstall -------------------------------------------------------------------


def cmd_hooks(ctx: Context) -> int:
    dirs = [d.expanduser().absolute() for d in ctx.args.config_dir or []]
    if not dirs:
        dirs = config.existing_dirs(ctx.settings.claude_config_dirs, os.environ)
    if not dirs:
        looked = ", ".join(str(d) for d in config.candidate_dirs(
            ctx.settings.claude_config_dirs, os.environ))
        raise CliError(_("no Claude config directory found (looked in {dirs})").format(
            dirs=looked), EXIT_USAGE)
    program = hooks.program_command(os.environ, sys.argv[0], sys.executable)
    stop_command = hooks.stop_failure_command(
        sys.executable, Path(stop_hook.__file__).resolve(), spool_path(ctx.paths.data_dir))
    results = []
    for directory in dirs:
        if not directory.is_dir():
            raise CliError(_("{dir} is not a directory").format(dir=directory), EXIT_USAGE)
        try:
            if ctx.args.action == "install":
                change = hooks.install(directory, ctx.paths.data_dir, program,
                                       SystemClock().now(), stop_command)
            else:
                change = hooks.uninstall(directory, ctx.paths.data_dir)
        except hooks.HookError as exc:
            raise CliError(localized(str(exc))) from None
        results.append(change)
    data = [{"settings": str(c.settings), "changes": c.changes,
             "backup": str(c.backup) if c.backup else None} for c in results]
    ctx.emit(data, lambda: "\n".join(_hook_lines(c, ctx.args.action) for c in results))
    return EXIT_OK


def _hook_lines(change: hooks.HookChange, action: str) -> str:
    if not change.changes:
        return (_("{file}: nothing to install") if action == "install"
                else _("{file}: nothing to uninstall")).format(file=change.settings)
    lines = [f"{change.settings}:"] + [f"  {localized(text)}" for text in change.changes]
    if change.backup:
        lines.append("  " + _("backup of the previous file: {file}").format(file=change.backup))
    return "\n".join(lines)


# -- track / untrack -----------------------------------------------------------------------------


def _session(goal: str) -> str:
    session = goal.removeprefix("claude:")
    if not _SESSION_ID.match(session):
        raise CliError(_("not a Claude session: {goal!r} (expected claude:<session id>)").format(
            goal=goal), EXIT_USAGE)
    return session


def cmd_track(ctx: Context) -> int:
    session = _session(ctx.args.goal)
    with ctx.store() as store:
        existing = store.get_goal(sessions.goal_id(session))
    reopen = existing is not None and existing.state.terminal
    request = {"op": "claude.track", "session": session, "reopen": reopen,
               "keep_prompting": ctx.args.keep_prompting}
    info = host_running(ctx.paths)
    reply = ctx.ask_host(request) if info is not None else _track_offline(ctx, session, reopen)
    ctx.emit(reply, lambda: _tracked_text(reply))
    return EXIT_OK


def _tracked_text(reply: dict[str, Any]) -> str:
    text = _("{goal}: tracked — {title}").format(goal=reply["goal"], title=reply.get("title") or "")
    text += f"\n  {word(str(reply.get('state')))}"
    if reply.get("cwd"):
        text += f" · {reply['cwd']}" + (f" ({reply['branch']})" if reply.get("branch") else "")
    if reply.get("auto_resume_block"):
        text += f"\n  {localized(str(reply['auto_resume_block']))}"
    if reply.get("offline"):
        text += "\n  " + _("(no host is running: it will be watched when one starts)")
    return text


def _track_offline(ctx: Context, session: str, reopen: bool) -> dict[str, Any]:
    settings, now = ctx.settings, SystemClock().now()
    roots = config.existing_dirs(settings.claude_config_dirs, os.environ)
    found = sessions.find_transcript(roots, session)
    if found is None:
        where = ", ".join(map(str, roots)) or _("no Claude config directory")
        raise CliError(_("no transcript of session {session} under {where}").format(
            session=session, where=where), EXIT_UNKNOWN_GOAL)
    keep = ctx.args.keep_prompting

    def change(tracking: Tracking) -> None:
        entry = tracking.tracked.setdefault(session, {"since": iso(now)})
        if keep is not None:
            entry["keep_prompting"] = bool(keep)
        tracking.untracked.discard(session)

    tracking = TrackingFile(ctx.paths.data_dir).update(change)
    path, root = found
    state = TranscriptFileState(str(path), str(root), session, False)
    read_file(state, UsageLedger(), bulk=True)
    live = LiveSessions([root])
    live.refresh()
    context = sessions.SessionContext(
        zone=config.local_zone(settings.claude_timezone, os.environ),
        runner_stop=tracking.runner_stops.get(session),
        keep_prompting=bool(tracking.tracked[session].get("keep_prompting", False)),
        live=live.live(session))
    obs = sessions.observe(state, sessions.read_meta(state), context, now)
    intake = IntakeContext(now, AutoResumePolicy.from_settings(settings), random.random,
                           settings.auto_resume_for("claude"))
    goal = sessions.goal_id(session)
    with ctx.store() as store:
        if reopen:
            store.remove_goal(goal, note_row(goal, HistoryEvent.REMOVED, now, origin="cli",
                                             reason=N_("tracked again"), outcome=Outcome.UPDATED))
        store.transact(goal, lambda current: decide_observation(current, "claude", obs, intake))
    return {"ok": True, "goal": goal, "title": obs.title, "state": obs.state.value,
            "cwd": obs.data.get("cwd"), "branch": obs.data.get("branch"),
            "auto_resume_block": obs.auto_resume_block, "offline": True}


def cmd_untrack(ctx: Context) -> int:
    session = _session(ctx.args.goal)
    goal = sessions.goal_id(session)
    if host_running(ctx.paths) is not None:
        reply = ctx.ask_host({"op": "claude.untrack", "session": session})
    else:
        def change(tracking: Tracking) -> None:
            tracking.tracked.pop(session, None)
            tracking.auto.discard(session)
            tracking.untracked.add(session)

        TrackingFile(ctx.paths.data_dir).update(change)
        now = SystemClock().now()
        with ctx.store() as store:
            if store.get_goal(goal) is not None:
                store.remove_goal(goal, note_row(goal, HistoryEvent.REMOVED, now, origin="cli",
                                                 reason=N_("untracked by the user"),
                                                 outcome=Outcome.UPDATED))
        reply = {"ok": True, "goal": goal}
    ctx.emit(reply, lambda: _("{goal}: untracked (never tracked again automatically)").format(
        goal=goal))
    return EXIT_OK
