"""``codex-usage``: Codex token usage per day and model, read from ``$CODEX_HOME`` (read-only).

The full-history scan of :mod:`core.providers.codex.history`. It needs no running host: it only
reads the session files.

What each rollout held is kept for the next run (:mod:`core.providers.codex.usage_cache`, in
the data directory): only rollouts new or changed since are read.

The scan starts before what every command shares is loaded (the ``prepare`` step of
:func:`core.cli.main`): on the Codex home the ``codex_home`` setting names when read leniently,
the environment's otherwise. Its workers scan while this process loads and validates the
settings; the scan is kept when the validated settings name the same home, and ended
otherwise — a settings error still ends the command with its message.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.i18n import _
from core.i18n.textfmt import pad, rpad

if TYPE_CHECKING:
    from core.cli.common import Context
    from core.providers.codex.history import UsageHistory
    from core.providers.codex.usage_cache import UsageRun

#: below this much history one process is faster than starting workers
PARALLEL_BYTES = 256 << 20


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("codex-usage", parents=[common],
                       help=_("Codex tokens per day and model, from the session files"))
    p.add_argument("--since", metavar="YYYY-MM-DD", help=_("only days from this one on"))
    p.add_argument("--workers", type=int, default=0,
                   help=_("processes to scan with (default: one per CPU for large histories)"))
    p.set_defaults(func=cmd_codex_usage, prepare=start_early, reads_settings_only=True)


def start_early(args: argparse.Namespace) -> None:
    """Start the run (its scan in worker processes) before the settings load (see the
    module's docstring); ``args.early`` is (the home it reads, the run) or None."""
    from core.i18n import early_setting
    from core.paths import resolve_paths
    from core.providers.codex.config import home_from

    args.early = None
    paths = resolve_paths(os.environ)
    home = home_from(early_setting(paths.config_file, os.environ, "codex_home"), os.environ)
    if home.is_dir():
        args.early = (home, _start(home, args.workers, paths.data_dir))


def cmd_codex_usage(ctx: Context) -> int:
    from core.cli.common import EXIT_USAGE, CliError

    early: tuple[Path, UsageRun] | None = getattr(ctx.args, "early", None)
    try:
        home = _home(ctx)
        if not home.is_dir():
            raise CliError(_("no Codex home at {dir} (set CODEX_HOME or codex_home)").format(
                dir=home), EXIT_USAGE)
        if early is not None and early[0] == home:
            history, early = early[1].history(), None
        else:
            history = _start(home, ctx.args.workers, ctx.paths.data_dir).history()
    finally:
        if early is not None:  # not the validated settings' home, or an error
            early[1].cancel()
    return _report(ctx, home, history)


def _home(ctx: Context) -> Path:
    from core.providers.codex.config import codex_home

    return codex_home(ctx.settings, os.environ)


def _start(home: Path, asked: int, data_dir: Path) -> UsageRun:
    """The run over the rollouts under ``home``: ``--workers`` processes, else one per CPU for
    a large history (the rollouts the cache does not answer for)."""
    from core.providers.codex.history import rollouts
    from core.providers.codex.usage_cache import FILE_NAME, UsageRun

    sessions = home / "sessions"
    return UsageRun(rollouts(sessions), lambda todo: asked or _default_workers(todo),
                    data_dir / FILE_NAME, sessions)


def _report(ctx: Context, home: Path, history: UsageHistory) -> int:
    from core.cli.common import EXIT_OK
    from core.clock import iso

    since = ctx.args.since or ""
    rows: list[dict[str, Any]] = [
        {"date": day, "model": model, "calls": u.calls, "input_tokens": u.input_tokens,
         "cached_input_tokens": u.cached_input_tokens, "output_tokens": u.output_tokens,
         "reasoning_output_tokens": u.reasoning_output_tokens, "total_tokens": u.total_tokens}
        for (day, model), u in sorted(history.daily.items()) if day >= since
    ]
    total = {key: sum(int(row[key]) for row in rows) for key in (
        "calls", "input_tokens", "cached_input_tokens", "output_tokens",
        "reasoning_output_tokens", "total_tokens")}
    data = {"codex_home": str(home), "files": history.files, "bytes": history.size,
            "days": rows, "total": total,
            "quota": {w: [[iso(at), used] for at, used in points]
                      for w, points in sorted(history.quota.items())}}
    ctx.emit(data, lambda: _table(rows, total))
    return EXIT_OK


def _default_workers(todo: list[Path]) -> int:
    """One process per CPU (up to four) for a large history to read, else this one."""
    from core.providers.codex.usage_workers import file_size

    size = sum(file_size(p) for p in todo)
    return min(4, os.cpu_count() or 1) if size >= PARALLEL_BYTES else 1


def _table(rows: list[dict[str, Any]], total: dict[str, int]) -> str:
    if not rows:
        return _("no Codex token usage found")
    header = (f"{pad(_('date'), 10)}  {pad(_('model'), 22)} {rpad(_('calls'), 7)} "
              f"{rpad(_('input'), 15)} {rpad(_('cached'), 15)} {rpad(_('output'), 13)} "
              f"{rpad(_('reasoning'), 12)} {rpad(_('total'), 15)}")
    lines = [header]
    for row in [*rows, {"date": _("total"), "model": "", **total}]:
        lines.append(f"{pad(row['date'], 10)}  {row['model']:<22} {row['calls']:>7,} "
                     f"{row['input_tokens']:>15,} {row['cached_input_tokens']:>15,} "
                     f"{row['output_tokens']:>13,} {row['reasoning_output_tokens']:>12,} "
                     f"{row['total_tokens']:>15,}")
    return "\n".join(lines)
