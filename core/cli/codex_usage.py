"""``codex-usage``: Codex token usage per day and model, read from ``$CODEX_HOME`` (read-only).

The full-history scan of :mod:`core.providers.codex.history`. It needs no running host: it only
reads the session files.

What each rollout held is kept for the next run (:mod:`core.providers.codex.usage_cache`, in
the data directory): only rollouts new or changed since are read.

The run starts first thing (:func:`early`, called by :func:`core.cli.main` before the language,
the parser and the settings load), on the Codex home the ``codex_home`` setting names when read
leniently, the environment's otherwise: where this process may fork, the whole run — the cache,
its own workers, the cache written — in a forked copy of it, so that the run's start-up and
this process's (what every command shares, the settings validated) take both CPUs at once;
elsewhere (another thread running, no fork) in this process, its workers fresh interpreters.
The run's answer is kept when the validated settings name the same home, and the run is ended
otherwise — a settings error still ends the command with its message.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from core.cli.common import Context
    from core.forked import ForkedCall
    from core.providers.codex.history import UsageHistory
    from core.providers.codex.usage_cache import UsageRun

#: below this much history one process is faster than starting workers
PARALLEL_BYTES = 256 << 20


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    from core.i18n import _

    p = sub.add_parser("codex-usage", parents=[common],
                       help=_("Codex tokens per day and model, from the session files"))
    p.add_argument("--since", metavar="YYYY-MM-DD", help=_("only days from this one on"))
    p.add_argument("--workers", type=int, default=0,
                   help=_("processes to scan with (default: one per CPU for large histories)"))
    p.set_defaults(func=cmd_codex_usage, reads_settings_only=True)


class EarlyRun:
    """The run started before the settings load (see the module's docstring): ``asked``
    workers, forked (``forked``: it reports the home it read with its answer, and writes the
    cache after sending it) or here (``here``, on ``home``)."""

    def __init__(self, asked: int, forked: ForkedCall[tuple[Path, UsageHistory] | None] | None
                 = None, here: tuple[Path, UsageRun] | None = None) -> None:
        self.asked, self.forked, self.here = asked, forked, here

    def answer(self, home: Path, asked: int, config_file: Path) -> UsageHistory | None:
        """The run's answer if it read ``home`` with ``asked`` workers, as the validated
        settings and arguments say; else None (:meth:`close` then ends it)."""
        if asked != self.asked:
            return None
        if self.here is not None:
            if self.here[0] != home:
                return None
            run, self.here = self.here[1], None
            return _read(run)
        if self.forked is None or _early_home(config_file) != home:
            return None  # the forked run reads another home: not worth waiting for
        from core.providers.codex import history  # noqa: F401  (to read the answer with)

        found = self.forked.answer()
        return found[1] if found is not None and found[0] == home else None

    def close(self) -> None:
        """Done with the run: one whose answer was taken is waited for (the forked copy
        writing the cache), one whose answer was not is ended."""
        if self.forked is not None:
            self.forked.close()
        if self.here is not None:
            run, self.here = self.here[1], None
            run.cancel()


def early(argv: Sequence[str]) -> EarlyRun | None:
    """The run, started as the command line asks (before anything else loads); None when the
    line's options cannot be told yet (``--help``, a ``--workers`` that is not a number) or
    the run cannot start: it then starts once the settings are validated."""
    asked = _workers_asked(argv)
    if asked is None:
        return None
    from core.forked import ForkedCall, can_fork

    if can_fork():
        job = _ForkedRun(asked)
        try:
            return EarlyRun(asked, forked=ForkedCall(job.answer, then=job.save))
        except OSError:  # no process or pipe to be had: the run starts here, later
            return None
    from core.paths import resolve_paths

    paths = resolve_paths(os.environ)
    home = _early_home(paths.config_file)
    return EarlyRun(asked, here=(home, _start(home, asked, paths.data_dir))) \
        if home.is_dir() else None


def _workers_asked(argv: Sequence[str]) -> int | None:
    """``--workers`` as argparse will read it from ``argv`` (0: not given; any unique prefix
    of the option, its value after ``=`` or as the next word); None for ``--help`` or a value
    that is not a whole number (argparse then says what is wrong)."""
    asked = 0
    words = iter(argv)
    for word in words:
        if word in ("-h", "--help", "--"):
            return None
        name, equals, value = word.partition("=")
        if len(name) > 2 and "--workers".startswith(name):
            try:
                asked = int(value if equals else next(words, ""))
            except ValueError:
                return None
    return asked


def _early_home(config_file: Path) -> Path:
    """The Codex home the settings most likely name: read leniently, before they load."""
    from core.i18n import early_setting
    from core.providers.codex.config import home_from

    return home_from(early_setting(config_file, os.environ, "codex_home"), os.environ)


class _ForkedRun:
    """What the forked copy does: the run (:meth:`answer`), then — the answer sent, while
    this process prints it — the cache written (:meth:`save`)."""

    def __init__(self, asked: int) -> None:
        self.asked = asked
        self.run: UsageRun | None = None

    def answer(self) -> tuple[Path, UsageHistory] | None:
        """(The home it read, its answer); None when there is no such home."""
        from core.paths import resolve_paths

        paths = resolve_paths(os.environ)
        home = _early_home(paths.config_file)
        if not home.is_dir():
            return None
        self.run = _start(home, self.asked, paths.data_dir)
        try:
            return home, self.run.history()
        except BaseException:
            self.run.cancel()  # (ended by SIGTERM: its workers with it)
            raise

    def save(self) -> None:
        if self.run is not None:
            self.run.save()


def _read(run: UsageRun) -> UsageHistory:
    """The run's answer, the cache written."""
    history = run.history()
    run.save()
    return history


def cmd_codex_usage(ctx: Context) -> int:
    from core.cli.common import EXIT_USAGE, CliError
    from core.i18n import _

    early: EarlyRun | None = getattr(ctx.args, "early", None)
    home = _home(ctx)
    if not home.is_dir():
        raise CliError(_("no Codex home at {dir} (set CODEX_HOME or codex_home)").format(
            dir=home), EXIT_USAGE)
    history = None
    if early is not None:
        history = early.answer(home, ctx.args.workers, ctx.paths.config_file)
        early.close()  # (a run not kept is ended before the one that is wanted starts)
    if history is None:
        history = _read(_start(home, ctx.args.workers, ctx.paths.data_dir))
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
    return UsageRun(rollouts(sessions), lambda size: asked or _default_workers(size),
                    data_dir / FILE_NAME, sessions)


def _report(ctx: Context, home: Path, history: UsageHistory) -> int:
    from core.cli.common import EXIT_OK
    from core.clock import iso
    from core.providers.codex.history import EPOCH, MICROSECOND

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
            "quota": {w: [[iso(EPOCH + at * MICROSECOND), used] for at, used in points]
                      for w, points in sorted(history.quota.items())}}
    ctx.emit(data, lambda: _table(rows, total))
    return EXIT_OK


def _default_workers(size: int) -> int:
    """One process per CPU (up to four) for a large history to read (``size`` bytes), else
    this one."""
    return min(4, os.cpu_count() or 1) if size >= PARALLEL_BYTES else 1


def _table(rows: list[dict[str, Any]], total: dict[str, int]) -> str:
    from core.i18n import _
    from core.i18n.textfmt import pad, rpad

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
