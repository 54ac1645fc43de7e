"""``daemon`` (the headless host), ``demo`` and ``gui``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shlex
import signal
import sys
import tempfile
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from core.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CliError, Context, warn
from core.clock import SystemClock
from core.host import Host
from core.hosts.lease import HostAlreadyRunning
from core.i18n import _, localized
from core.logs import remove_handlers, setup_logging
from core.paths import resolve_paths
from core.providers.registry import build_providers
from core.settings import SettingsError
from core.store import StoreError

log = logging.getLogger("goalkeeper")

def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("daemon", parents=[common],
                       help=_("run the headless host (logs to stdout; stop with Ctrl-C)"))
    p.set_defaults(func=cmd_daemon)
    p = sub.add_parser("demo", parents=[common],
                       help=_("watch a pause for quota and an automatic resume in about a minute"))
    p.add_argument("--headless", action="store_true", help=_("no window: print events instead"))
    p.add_argument("--timeout", type=float, default=300.0,
                   help=_("give up after this many seconds (default 300)"))
    # faster demo for tests: the quota window's period and the time per unit of work
    p.add_argument("--period", type=float, default=60.0, help=argparse.SUPPRESS)
    p.add_argument("--step", type=float, default=2.0, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_demo)
    p = sub.add_parser("gui", parents=[common], help=_("open the desktop app"))
    p.set_defaults(func=cmd_gui)


def find_frontend() -> Callable[[list[str]], int] | None:
    """The desktop app's entry point, if installed (so that ``core`` never imports ``gui``)."""
    for ep in entry_points(group="goalkeeper.frontends"):
        if ep.name == "gui":
            try:
                main: Callable[[list[str]], int] = ep.load()
            except ImportError as exc:
                warn(_("the desktop app cannot start: {error}").format(error=exc))
                return None
            return main
    return None


def cmd_gui(ctx: Context) -> int:
    frontend = find_frontend()
    if frontend is None:
        raise CliError(_("the desktop app is not available in this installation; run "
                         "`goalkeeper daemon` for the headless host"), EXIT_USAGE)
    return frontend([])


async def serve_until_signal(host: Host, until: asyncio.Future[Any] | None = None) -> None:
    """Run ``host`` until SIGINT/SIGTERM (or ``until`` completes), then stop it cleanly."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await host.start()
    try:
        waiters: list[asyncio.Future[Any]] = [asyncio.ensure_future(stop.wait())]
        if until is not None:
            waiters.append(asyncio.ensure_future(until))
        if host.ended is not None:
            waiters.append(host.ended)
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for waiter in waiters:
            waiter.cancel()
    finally:
        await host.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def _run_host(make: Callable[[], Host], body: Callable[[Host], Any]) -> int:
    try:
        host = make()
        return int(asyncio.run(body(host)) or 0)
    except HostAlreadyRunning as exc:
        raise CliError(str(exc)) from None
    except StoreError as exc:
        raise CliError(localized(str(exc))) from None
    except OSError as exc:  # e.g. a read-only runtime directory: no control socket
        raise CliError(_("the host cannot start: {error}").format(error=exc)) from None


def cmd_daemon(ctx: Context) -> int:
    settings = ctx.settings
    handlers = setup_logging(ctx.paths.log_file, stdout=True)
    log.info("daemon starting (pid %d)", os.getpid())
    try:
        clock = SystemClock()
        providers = build_providers(settings, ctx.paths, clock, os.environ)

        async def body(host: Host) -> int:
            await serve_until_signal(host)
            if host.ended is not None and host.ended.done() and not host.ended.cancelled():
                warn(_("stopped: {reason}").format(reason=localized(str(host.ended.result()))))
                return EXIT_ERROR
            return EXIT_OK

        return _run_host(lambda: Host(ctx.paths, settings, providers, "daemon", clock), body)
    finally:
        remove_handlers(handlers)


def has_display(environ: dict[str, str] | os._Environ[str]) -> bool:
    """Whether a window can be opened (macOS always can; Linux needs X11 or Wayland)."""
    if sys.platform == "darwin" or environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def program(argv0: str | None = None) -> str:
    """How to run this Goalkeeper again: the path it was started by (``.venv/bin/goalkeeper``
    after the Quick start, not on ``PATH``), else ``goalkeeper``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if os.path.basename(argv0) == "goalkeeper" and os.sep in argv0:
        return shlex.quote(argv0)
    return "goalkeeper"


def cmd_demo(ctx: Context) -> int:
    if not ctx.args.headless:
        frontend = find_frontend()
        if frontend is not None and has_display(os.environ):
            return frontend(["--demo"])
        if frontend is not None:
            print(_("No display to open a window on: running the demo headless."), flush=True)
    from core.demo import DemoSession, demo_settings  # not on the daemon's start path

    given = os.environ.get("GOALKEEPER_HOME")
    home = given or tempfile.mkdtemp(prefix="goalkeeper-demo-")
    paths = resolve_paths({**os.environ, "GOALKEEPER_HOME": home})
    try:
        settings = demo_settings(paths, os.environ, bool(given))
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    handlers = setup_logging(paths.log_file)
    try:
        clock = SystemClock()
        session = DemoSession(paths, settings, clock, printer=_print_line,
                              period=ctx.args.period, step=ctx.args.step)

        async def body(host: Host) -> int:
            return await session.run(host, ctx.args.timeout)

        code = _run_host(lambda: session.make_host(), body)
    finally:
        remove_handlers(handlers)
    prog, where = program(), shlex.quote(home)
    print(_("Demo data kept in {dir}: `GOALKEEPER_HOME={dir} {prog} history` shows what "
            "happened. To resume demo:docs yourself, run the demo on it again "
            "(`GOALKEEPER_HOME={dir} {prog} demo --headless`) and, while it runs, "
            "`GOALKEEPER_HOME={dir} {prog} resume demo:docs` in another terminal.").format(
        dir=where, prog=prog))
    return code if code in (EXIT_OK, EXIT_ERROR) else EXIT_ERROR


def _print_line(text: str) -> None:
    print(text, flush=True)
    sys.stdout.flush()
