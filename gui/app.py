"""Bootstrap: ``goalkeeper`` / ``goalkeeper gui`` / ``goalkeeper demo`` open the desktop app here.

One loop: a ``QApplication`` driven by a qasync event loop (``asyncio.Runner`` with a qasync loop
factory), on which the core engine, its scheduler and the widgets all run. Registered as the
``goalkeeper.frontends`` entry point ``gui`` so that ``core`` never imports ``gui``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence

import qasync
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from core import i18n
from core.clock import SystemClock
from core.demo import DEMO_SETTINGS, DemoSession
from core.host import Host
from core.hosts.lease import HostAlreadyRunning, HostInfo
from core.i18n import _, localized
from core.logs import remove_handlers, setup_logging
from core.paths import UnsafeDirectory, resolve_paths
from core.providers.registry import build_providers
from core.settings import SettingsError
from core.store import StoreError
from gui import i18n as gui_i18n
from gui.i18n import tr
from gui.launch import (
    LaunchPlan,
    already_hosted_text,
    ask_to_show_window,
    display_problem,
    existing_host,
    plan_launch,
    settings_problem,
)
from gui.session import GuiSession
from gui.settings_source import SettingsSource
from gui.theme import app_icon

APP_ID = "io.github.goalkeeper.Goalkeeper"
EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="goalkeeper gui", description=_("the desktop app"))
    parser.add_argument("--demo", action="store_true",
                        help=_("run the demo on a throw-away data directory (or "
                               "GOALKEEPER_HOME)"))
    return parser.parse_args(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    # the language first: the setting (the user's config.toml, even for the demo) or the system's
    i18n.setup(resolve_paths(os.environ).config_file, os.environ)
    args = parse_args(sys.argv[1:] if argv is None else argv)
    problem = display_problem()
    if problem:
        # no window to show a bad config.toml in: say it here, before the display, since it
        # is what to fix first (and what `goalkeeper daemon` would say next)
        if not args.demo:
            problem = settings_problem() or problem
        print(f"goalkeeper: {problem}", file=sys.stderr)
        return EXIT_USAGE
    app = make_application()
    gui_i18n.install(app)
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        started: list[asyncio.Task[int]] = []

        async def root() -> int:
            task = asyncio.current_task()
            assert task is not None
            started.append(task)
            return await amain(args)

        try:
            return runner.run(root())
        except RuntimeError:
            # Qt's loop was ended from outside (the session manager, app.quit()): amain has been
            # told to quit (aboutToQuit); run the loop again so it can stop the host cleanly
            if not started or started[0].done():
                raise
            return runner.run(_finish(started[0]))


async def _finish(task: asyncio.Task[int]) -> int:
    return await task


def make_application() -> QApplication:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Goalkeeper")
    app.setApplicationDisplayName("Goalkeeper")
    app.setDesktopFileName(APP_ID)
    # the theme icon `goalkeeper desktop install` put in place, else the one drawn here
    app.setWindowIcon(QIcon.fromTheme(APP_ID, app_icon()))
    app.setQuitOnLastWindowClosed(False)  # the session decides when to quit (tray or not)
    return app


async def amain(args: argparse.Namespace) -> int:
    try:
        plan = plan_launch(args.demo)
    except SettingsError as exc:
        return await fail(tr("Goalkeeper cannot read its settings:\n\n{error}").format(error=exc),
                          EXIT_USAGE)
    info = existing_host(plan.paths)
    if info is not None:
        return await defer_to(info, plan)
    handlers = setup_logging(plan.paths.log_file)
    try:
        return await run_session(plan)
    finally:
        remove_handlers(handlers)
        if plan.demo:
            print(tr("Demo data kept in {dir} (GOALKEEPER_HOME={dir} goalkeeper history)")
                  .format(dir=plan.paths.data_dir))


async def defer_to(info: HostInfo, plan: LaunchPlan) -> int:
    """Another host holds the lease: raise its window if it is an app, else say who it is."""
    if await asyncio.to_thread(ask_to_show_window, info, plan.paths):
        print(tr("Goalkeeper is already open (pid {pid}); its window was brought to the "
                 "front.").format(pid=info.pid))
        return EXIT_OK
    return await fail(already_hosted_text(info, plan.paths), EXIT_ERROR)


async def run_session(plan: LaunchPlan) -> int:
    clock = SystemClock()
    demo: DemoSession | None = None
    if plan.demo:
        demo = DemoSession(plan.paths, plan.settings, clock, printer=lambda _line: None)
        host = demo.make_host()
    else:
        providers = build_providers(plan.settings, plan.paths, clock, os.environ)
        host = Host(plan.paths, plan.settings, providers, plan.kind, clock)
    defaults = DEMO_SETTINGS if plan.demo else {}
    session = GuiSession(host, demo, source=SettingsSource(plan.paths.config_file, os.environ,
                                                           defaults),
                         offer_setup=not plan.demo)
    try:
        await session.start()
    except HostAlreadyRunning as exc:
        session.window.hide()
        if exc.info is not None:
            return await fail(already_hosted_text(exc.info, plan.paths), EXIT_ERROR)
        return await fail(str(exc), EXIT_ERROR)
    except UnsafeDirectory as exc:  # the /tmp runtime fallback is a link or someone else's
        session.window.hide()
        return await fail(str(exc), EXIT_ERROR)
    except StoreError as exc:
        session.window.hide()
        return await fail(tr("Goalkeeper cannot open its database:\n\n{error}").format(
            error=localized(str(exc))), EXIT_ERROR)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, session.request_quit)
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(session.request_quit)
    try:
        await session.run()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await session.stop()
    return EXIT_OK


async def fail(text: str, code: int) -> int:
    """Say ``text`` on stderr and in a message box (the app may have been started from a menu)."""
    print(f"goalkeeper: {text}", file=sys.stderr)
    box = QMessageBox(QMessageBox.Icon.Warning, "Goalkeeper", text)  # i18n: ignore
    await wait_closed(box)
    return code


async def wait_closed(box: QMessageBox) -> None:
    """Open a dialog and wait for it without a nested event loop (``exec()`` would stall)."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def _finished(*_: object) -> None:
        if not done.done():
            done.set_result(None)

    box.finished.connect(_finished)
    box.open()
    try:
        await done
    finally:
        box.deleteLater()
