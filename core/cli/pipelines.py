"""``add``, ``approve``, ``remove``, ``run``, ``runs`` and ``quota`` — pipeline goals from the
command line.

``add`` validates the goal file, shows the commands it will run and asks (``--yes`` for scripts),
then stores it and records its approval (no host needed; a running host picks it up at once);
``approve`` does the same for a goal file found in the data directory that was never added or
changed since (:mod:`core.providers.pipeline.approval`),
``run`` goes through the host like every command that changes a goal, ``runs`` reads the run
state files directly, ``quota refill`` goes through the host when one runs (so goals waiting on
the quota wake up) and writes the ledger directly otherwise.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from core.cli.actions import exit_code, render_result
from core.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_UNKNOWN_GOAL,
    EXIT_USAGE,
    CliError,
    Context,
)
from core.cli.render import quota_json
from core.clock import SystemClock
from core.commands import ActionResult
from core.goals.changes import note_row
from core.hosts.lease import host_running
from core.i18n import N_, _, localized
from core.i18n.textfmt import local_time, pad
from core.i18n.words import word
from core.limits import MAX_PAGE
from core.models import GoalState, HistoryEvent, Outcome, PauseReason
from core.providers.pipeline.approval import approval_key, commands_preview
from core.providers.pipeline.catalog import CatalogEntry, PipelineCatalog, goal_name
from core.providers.pipeline.checkpoint import CheckpointError, RunRecord
from core.providers.pipeline.coverage import display_state, run_json, summary
from core.providers.pipeline.envsecrets import move_to_keyring, plain_secrets
from core.providers.pipeline.goalfile import GOAL_PREFIX, GoalFile, GoalFileError
from core.providers.pipeline.ledger import QuotaLedger, QuotaLedgerError
from core.providers.pipeline.schedule import next_fire, parse_schedule
from core.secrets import SecretStore, SecretStoreError

POLL_SECONDS = 0.25


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("add", parents=[common], help=_("add (or update) a pipeline goal file"))
    p.add_argument("file")
    p.add_argument("--yes", action="store_true",
                   help=_("do not ask before adding (the commands are still shown)"))
    p.set_defaults(func=cmd_add)
    p = sub.add_parser("approve", parents=[common],
                       help=_("approve a goal file found in the data directory that was not "
                              "added, or changed since"))
    p.add_argument("name")
    p.add_argument("--yes", action="store_true",
                   help=_("do not ask before approving (the commands are still shown)"))
    p.set_defaults(func=cmd_approve)
    p = sub.add_parser("remove", parents=[common],
                       help=_("remove a pipeline goal (runs are kept)"))
    p.add_argument("name")
    p.set_defaults(func=cmd_remove)
    p = sub.add_parser("run", parents=[common],
                       help=_("run a pipeline goal now (through the host)"))
    p.add_argument("name")
    p.add_argument("--wait", action="store_true",
                   help=_("wait for the run: exit 0 when it completes, 1 when it blocks or fails"))
    p.add_argument("--new", action="store_true",
                   help=_("abandon an unfinished run (kept, recorded in history) and start "
                          "afresh"))
    p.add_argument("--timeout", type=float, default=None,
                   help=_("with --wait: give up waiting after this many seconds"))
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("runs", parents=[common], help=_("a pipeline goal's runs, newest first"))
    p.add_argument("name")
    p.add_argument("--limit", type=int, default=20, help=_("at most N runs (default 20)"))
    p.set_defaults(func=cmd_runs)
    quota = sub.add_parser("quota", help=_("user-defined quotas (config.toml [quotas.*])"))
    qsub = quota.add_subparsers(dest="quota_command", metavar="COMMAND", required=True)
    p = qsub.add_parser("refill", parents=[common], help=_("add N to a capacity quota"))
    p.add_argument("quota")
    p.add_argument("amount", type=float)
    p.set_defaults(func=cmd_quota_refill)
    p = qsub.add_parser("list", parents=[common], help=_("the user quotas and what is left"))
    p.set_defaults(func=cmd_quota_list)


def catalog(ctx: Context) -> PipelineCatalog:
    return PipelineCatalog(ctx.paths.data_dir / "pipelines")


def ledger(ctx: Context) -> QuotaLedger:
    return QuotaLedger(catalog(ctx).root / "quotas.db", ctx.settings.quotas)


def entry_for(ctx: Context, name: str) -> CatalogEntry:
    entry = catalog(ctx).get(goal_name(name))
    if entry is None:
        raise CliError(_("no pipeline goal {name!r} (add one with `goalkeeper add FILE`)").format(
            name=goal_name(name)), EXIT_UNKNOWN_GOAL)
    return entry


# -- add / remove ------------------------------------------------------------------------------


def cmd_add(ctx: Context) -> int:
    path = Path(ctx.args.file).expanduser()
    now = SystemClock().now()
    try:
        goal, created, digest = catalog(ctx).add(path, now, _secrets_to_keyring(path),
                                                 lambda goal: _confirm(ctx, goal))
    except GoalFileError as exc:
        raise CliError(_("the goal file is not valid:") + "\n  " + "\n  ".join(
            localized(p) for p in exc.problems), EXIT_USAGE) from None
    except SecretStoreError as exc:
        raise CliError(_("the goal file sets secrets in `env`, which Goalkeeper keeps only in the "
                         "OS keyring — and {error}; nothing was added").format(
                             error=localized(str(exc))), EXIT_USAGE) from None
    unknown = [q for q in goal.quota_names() if q not in ctx.settings.quotas]
    _record_approval(ctx, goal.name, digest)
    notified = _tell_host(ctx)
    next_run = None
    if goal.schedule:
        next_run = next_fire(parse_schedule(goal.schedule), now, goal.zone())
        next_run = next_run.astimezone(goal.zone() or next_run.tzinfo)  # the file's own zone
    data = {"goal": goal.goal_id, "created": created, "file": str(path.resolve()),
            "schedule": goal.schedule,
            "next_run": next_run.isoformat() if next_run else None,
            "next_run_local": next_run.astimezone().isoformat() if next_run else None,
            "host_notified": notified, "unknown_quotas": unknown,
            "commands": commands_preview(goal)}

    def human() -> str:
        added = (_("added {goal} ({sources} source(s), {stages} stage(s))") if created
                 else _("updated {goal} ({sources} source(s), {stages} stage(s))"))
        lines = [added.format(goal=goal.goal_id, sources=len(goal.source),
                              stages=len(goal.stage))]
        if next_run:
            lines.append("  " + next_run_words(next_run, goal.zone(), goal.timezone))
        if not notified:
            lines.append("  " + _(
                "no host is running: the goal appears when a host starts and finds it "
                "(`goalkeeper daemon` or the desktop app); `resume` and `status` know it from "
                "then on"))
        for name in unknown:
            lines.append("  " + _("warning: quota {name!r} is not defined in config.toml "
                                  "yet").format(name=name))
        return "\n".join(lines)

    ctx.emit(data, human)
    return EXIT_OK


def cmd_approve(ctx: Context) -> int:
    entry = entry_for(ctx, ctx.args.name)
    if entry.goal is None:
        raise CliError(_("the goal file of {goal} is not valid: {error}").format(
            goal=entry.goal_id, error=localized(str(entry.error))), EXIT_USAGE)
    if plain_secrets(entry.goal):
        raise CliError(_("the goal file of {goal} sets secrets in `env`, which Goalkeeper keeps "
                         "only in the OS keyring: add it with `goalkeeper add FILE`, which moves "
                         "them there").format(goal=entry.goal_id), EXIT_USAGE)
    _confirm(ctx, entry.goal)
    _record_approval(ctx, entry.name, entry.digest)
    _tell_host(ctx)
    ctx.emit({"goal": entry.goal_id, "approved": True, "digest": entry.digest,
              "commands": commands_preview(entry.goal)},
             lambda: _("approved {goal}: it runs from now on").format(goal=entry.goal_id))
    return EXIT_OK


def _confirm(ctx: Context, goal: GoalFile) -> None:
    """Show the commands ``goal`` will run and ask; with ``--yes`` only show them (on standard
    error, so that ``--json`` output stays one document). Raises :class:`CliError` on a no."""
    lines = [_("{goal} will run these commands:").format(goal=goal.goal_id)]
    lines += ["  " + line for line in commands_preview(goal)]
    print("\n".join(lines), file=sys.stderr, flush=True)
    if ctx.args.yes:
        return
    if sys.stdin is None or not sys.stdin.isatty():
        raise CliError(_("nothing was changed: there is no terminal to ask in; pass --yes to "
                         "accept these commands without asking"), EXIT_USAGE)
    print(_("Run these commands when the goal runs? [y/N] "), end="", file=sys.stderr,
          flush=True)
    answer = sys.stdin.readline().strip().lower()
    if answer not in {"y", "yes", _("y"), _("yes")}:
        raise CliError(_("nothing was changed"), EXIT_USAGE)


def _record_approval(ctx: Context, name: str, digest: str) -> None:
    """Record the approval in the store: through the host when one runs (it plans the goal's
    schedule at once), directly otherwise."""
    if host_running(ctx.paths) is not None:
        ctx.ask_host({"op": "pipeline-approve", "goal": name, "digest": digest})
        return
    with ctx.store() as store:
        store.set_meta(approval_key(ctx.host_id, name), digest)


def next_run_words(next_run: datetime, zone: tzinfo | None, zone_name: str | None) -> str:
    """The next run in the goal file's zone and in local time (they differ more often than not
    on a server), or in local time alone when the file names no zone."""
    here = next_run.astimezone()
    local = _("{time} local time ({zone})").format(time=local_time(here),
                                                   zone=here.tzname() or "")
    if zone is None or not zone_name:
        return _("next scheduled run: {time}").format(time=local)
    return _("next scheduled run: {time} {zone} = {local}").format(
        time=local_time(next_run, zone), zone=zone_name, local=local)


def _secrets_to_keyring(path: Path) -> Callable[[GoalFile, str], str]:
    def rewrite(goal: GoalFile, text: str) -> str:
        if not plain_secrets(goal):
            return text
        return move_to_keyring(goal, text, path, SecretStore())

    return rewrite


def _tell_host(ctx: Context) -> bool:
    if host_running(ctx.paths) is None:
        return False
    ctx.ask_host({"op": "refresh"})
    return True


def cmd_remove(ctx: Context) -> int:
    entry = entry_for(ctx, ctx.args.name)
    if host_running(ctx.paths) is not None:
        reply = ctx.ask_host({"op": "pipeline-remove", "goal": entry.goal_id})
        moved = reply.get("moved_to")
    else:
        now = SystemClock().now()
        aside = catalog(ctx).remove(entry.name, now)
        moved = str(aside) if aside else None
        row = note_row(entry.goal_id, HistoryEvent.REMOVED, now, origin="cli",
                       reason=N_("goal file removed"), outcome=Outcome.UPDATED)
        with ctx.store() as store:
            store.remove_goal(entry.goal_id, row)
            store.set_meta(approval_key(ctx.host_id, entry.name), "")  # approved no more
    ctx.emit({"goal": entry.goal_id, "removed": True, "moved_to": moved},
             lambda: _("removed {goal}; its runs are kept in {dir}").format(
                 goal=entry.goal_id, dir=moved))
    return EXIT_OK


# -- run ---------------------------------------------------------------------------------------


def cmd_run(ctx: Context) -> int:
    entry = entry_for(ctx, ctx.args.name)
    with ctx.reader() as store:
        known = store is not None and store.get_goal(entry.goal_id) is not None
    if not known:
        ctx.ask_host({"op": "refresh"})  # added while the host runs: let it discover the file
    reply = ctx.ask_host({"op": "run", "goal": entry.goal_id, "new": bool(ctx.args.new)})
    result = ActionResult.from_json(reply)
    run_id = reply.get("run_id")
    code = exit_code(result)
    if not ctx.args.wait or not result.carried_out or not run_id:
        ctx.emit(result.to_json() | {"run_id": run_id},
                 lambda: render_result(result) + (_(" (run {run})").format(run=run_id)
                                                  if run_id else ""))
        return code
    if not ctx.json:
        print(_("{goal}: run {run} started; waiting…").format(goal=entry.goal_id, run=run_id),
              flush=True)
    return _wait(ctx, entry, str(run_id))


def _wait(ctx: Context, entry: CatalogEntry, run_id: str) -> int:
    clock = SystemClock()
    deadline = None if ctx.args.timeout is None else clock.monotonic() + ctx.args.timeout
    told_quota = False
    while True:
        verdict = _verdict(ctx, entry, run_id)
        if verdict is not None:
            return _ended(ctx, run_id, *verdict)
        current = _load(entry, run_id)
        if isinstance(current, RunRecord) and current.waiting_until and not told_quota:
            told_quota = True
            if not ctx.json:
                print("  " + _("waiting for quota until {time}").format(
                    time=local_time(current.waiting_until)), flush=True)
        if deadline is not None and clock.monotonic() > deadline:
            raise CliError(_("run {run} is still going after {seconds} s (`goalkeeper runs "
                             "{name}`)").format(run=run_id, seconds=f"{ctx.args.timeout:g}",
                                                name=entry.name))
        time.sleep(POLL_SECONDS)


def _ended(ctx: Context, run_id: str, code: int, text: str, record: RunRecord | None) -> int:
    data = run_json(record) if record else {"run_id": run_id}
    ctx.emit(data | {"exit": code, "message": text}, lambda: localized(text))
    return code


def _load(entry: CatalogEntry, run_id: str) -> RunRecord | CheckpointError:
    from core.providers.pipeline.checkpoint import CheckpointStore

    try:
        return CheckpointStore(entry.run_dir(run_id)).load()
    except CheckpointError as exc:
        return exc


def _verdict(ctx: Context, entry: CatalogEntry, run_id: str
             ) -> tuple[int, str, RunRecord | None] | None:
    """(exit code, message, record) once the run has ended one way or another."""
    record = _load(entry, run_id)
    # the message is the JSON's too, so English; the human output localizes it
    if isinstance(record, CheckpointError):
        return EXIT_ERROR, N_("run {run}: {reason}").format(run=run_id, reason=record.reason), \
            None
    if record.state.value == "completed":
        return EXIT_OK, N_("run {run} completed: {summary}").format(
            run=run_id, summary=summary(record)), record
    if record.abandoned:
        return EXIT_ERROR, N_("run {run} was abandoned").format(run=run_id), record
    if display_state(record) == "blocked":
        return EXIT_ERROR, N_("run {run} blocked: {error}").format(
            run=run_id, error=record.last_error), record
    with ctx.reader() as store:
        goal = store.get_goal(entry.goal_id) if store is not None else None
    if goal is None:
        return EXIT_ERROR, N_("{goal} was removed").format(goal=entry.goal_id), record
    if goal.state is GoalState.PAUSED and goal.pause_reason not in (PauseReason.QUOTA, None):
        text = N_("run {run} paused ({reason}): {detail}").format(
            run=run_id, reason=goal.pause_reason.value, detail=goal.pause_detail or "")
        return EXIT_ERROR, text.rstrip(": "), record
    if goal.state in (GoalState.CANCELLED, GoalState.FAILED):
        return EXIT_ERROR, N_("{goal} is {state}").format(goal=entry.goal_id,
                                                          state=goal.state.value), record
    return None


# -- runs --------------------------------------------------------------------------------------


def cmd_runs(ctx: Context) -> int:
    if not 1 <= ctx.args.limit <= MAX_PAGE:
        raise CliError(_("--limit must be between 1 and {most}").format(most=MAX_PAGE),
                       EXIT_USAGE)
    entry = entry_for(ctx, ctx.args.name)
    runs = catalog(ctx).runs(entry)[: ctx.args.limit]
    data = [run_json(r) if isinstance(r, RunRecord) else _broken_json(*r) for r in runs]
    ctx.emit(data, lambda: _runs_text(entry, runs))
    return EXIT_OK


def _broken_json(run_id: str, error: CheckpointError) -> dict[str, Any]:
    return {"run_id": run_id, "state": "unreadable", "sources_ok": None, "sources_total": None,
            "missing": [], "items": None, "degraded": None, "started_at": None,
            "updated_at": None, "error": error.reason}


def _runs_text(entry: CatalogEntry, runs: list[RunRecord | tuple[str, CheckpointError]]) -> str:
    if not runs:
        return _("{goal}: no runs yet").format(goal=f"{GOAL_PREFIX}{entry.name}")
    lines = [f"{pad(_('RUN'), 28)} {pad(_('STATE'), 20)} {pad(_('SOURCES'), 8)} "
             f"{_('ITEMS'):>5}  {_('STARTED')}"]
    for item in runs:
        if not isinstance(item, RunRecord):
            lines.append(f"{item[0]:<28} {pad(_('unreadable'), 20)} — "
                         f"{localized(item[1].reason)}")
            continue
        sources = f"{sum(1 for s in item.sources.values() if s.status.value == 'ok')}/" \
                  f"{len(item.sources)}"
        items = "" if item.item_count is None else str(item.item_count)
        lines.append(f"{item.run_id:<28} {pad(word(display_state(item)), 20)} "
                     f"{sources:<8} {items:>5}  {local_time(item.started_at)}")
        if item.degraded or item.last_error:
            lines.append(f"    {localized(item.last_error or summary(item))}")
    return "\n".join(lines)


# -- quotas ------------------------------------------------------------------------------------


def cmd_quota_refill(ctx: Context) -> int:
    if not (math.isfinite(ctx.args.amount) and ctx.args.amount > 0):
        raise CliError(_("the amount must be a positive number"), EXIT_USAGE)
    if host_running(ctx.paths) is not None:
        reply = ctx.ask_host({"op": "quota-refill", "quota": ctx.args.quota,
                              "amount": ctx.args.amount})
        left, limit = reply["left"], reply["limit"]
    else:
        book = ledger(ctx)
        try:
            left = book.refill_blocking(ctx.args.quota, ctx.args.amount, SystemClock().now())
        except QuotaLedgerError as exc:
            raise CliError(localized(str(exc)), EXIT_USAGE) from None
        limit = book.specs[ctx.args.quota].limit  # type: ignore[union-attr]
    ctx.emit({"quota": ctx.args.quota, "left": left, "limit": limit},
             lambda: _("quota {name}: {left} of {limit} left").format(
                 name=ctx.args.quota, left=f"{left:g}", limit=f"{limit:g}"))
    return EXIT_OK


def cmd_quota_list(ctx: Context) -> int:
    readings = ledger(ctx).readings(SystemClock().now())
    ctx.emit([quota_json(r) for r in readings], lambda: "\n".join(
        _quota_line(r) for r in readings) or _("no quotas in config.toml ([quotas.NAME] tables)"))
    return EXIT_OK


def _quota_line(reading: Any) -> str:
    if reading.tokens is not None:
        state = _("{tokens}/{burst} tokens").format(tokens=f"{reading.tokens:g}",
                                                   burst=f"{reading.burst:g}")
    else:
        state = _("{used}/{limit} used").format(used=f"{reading.used:g}",
                                               limit=f"{reading.limit:g}")
    reset = (_(", resets {time}").format(time=local_time(reading.resets_at))
             if reading.resets_at else "")
    flag = _(" (limit reached)") if reading.limit_reached else ""
    return f"  {reading.label:<20} {pad(word(reading.kind), 12)} {state}{reset}{flag}"
