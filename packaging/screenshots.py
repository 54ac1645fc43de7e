"""Screenshots of the desktop app on the demo data, for the README.

    .venv/bin/python packaging/screenshots.py            # writes docs/screenshots/*.png
    .venv/bin/python packaging/screenshots.py --language zh_CN   # *-zh_CN.png, in Chinese

Runs under Xvfb (re-executing itself through ``xvfb-run`` when there is no display), on a
throw-away data directory with the demo provider. The demo runs on a fake clock that is moved
forward by hand — so the pictures are reproducible and take seconds, not minutes: the main window
40 s in (the goals ran out of the one-minute quota and wait for its reset, with countdowns; the
gauge draws a 10 % reserve), a goal's details with its resume policy, the history and the dark
variant 85 s in (they were resumed automatically after the reset, one at a time, and finished;
the goal with auto-resume off still waits for a person; the gauge forecasts the window), and the
settings dialog's Resuming and Resume policies tabs, each with an inline validation message.
Then ntfy and a webhook are switched on (two small servers on 127.0.0.1: one accepts, one
answers 503) and a resume is scheduled: the window with the failing webhook, and the settings'
Notifications tab.
``--language zh_CN`` takes the main window and the settings instead, in Chinese (install
Debian's ``fonts-noto-cjk`` first: Xvfb has no other font with Chinese glyphs).
``--hosts`` takes only the Hosts dialog (``hosts.png``, with ``--language zh_CN``
``hosts-zh_CN.png``) on a real shared store: a throw-away PostgreSQL server (the tests' own,
from the server binaries), three hosts on it — this one, one online, one that stopped.
``--queue`` takes only Goal → Start at the reset… (``queue-en.png``, ``queue-zh_CN.png``), filled
in for a Codex goal, on the demo with a reading of Codex's 5-hour window.
``--setup`` takes only the set-up assistant (``setup.png``, ``setup-zh_CN.png``) on a fake Codex
home and Claude config directory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
WAITING_AT = 40
RESUMED_AT = 85


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--language", default="en", choices=["en", "zh_CN"],
                        help="en: every English picture; zh_CN: the main window, a goal's "
                             "details, the settings and the notifications in Chinese")
    parser.add_argument("--every-tab", action="store_true",
                        help="also every tab of the settings dialog (settings-tab-N*.png), "
                             "to look at, not for the README")
    parser.add_argument("--hosts", action="store_true",
                        help="only the Hosts dialog on a throw-away shared PostgreSQL store")
    parser.add_argument("--setup", action="store_true",
                        help="only the set-up assistant (setup.png / setup-zh_CN.png) on a "
                             "fake Codex home and Claude config directory")
    parser.add_argument("--queue", action="store_true",
                        help="only Goal → Start at the reset… (queue-en.png / queue-zh_CN.png)")
    args = parser.parse_args()
    if not os.environ.get("DISPLAY") and os.environ.get("QT_QPA_PLATFORM") != "offscreen":
        if not shutil.which("xvfb-run"):
            print("screenshots: needs an X display or xvfb-run (apt install xvfb)",
                  file=sys.stderr)
            return 2
        command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24 -nolisten tcp",
                   sys.executable, __file__, "--out", str(args.out), "--language", args.language,
                   *(["--every-tab"] if args.every_tab else []),
                   *(["--hosts"] if args.hosts else []),
                   *(["--queue"] if args.queue else []),
                   *(["--setup"] if args.setup else [])]
        return subprocess.call(command, env={**os.environ, "QT_QPA_PLATFORM": "xcb"})
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    import qasync

    from gui.app import make_application

    app = make_application()
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        if args.hosts:
            return runner.run(shoot_hosts(args.out, args.language))
        if args.setup:
            return runner.run(shoot_setup(args.out, args.language))
        if args.queue:
            return runner.run(shoot_queue(args.out, args.language))
        if args.language != "en":
            return runner.run(shoot_translated(args.out, args.language, args.every_tab))
        return runner.run(shoot(args.out, args.every_tab))


def demo_session(home: str) -> tuple[Any, Any]:
    """(the app's session on the demo, its fake clock), not started yet."""
    from core.clock import FakeClock
    from core.demo import DEMO_SETTINGS, DemoSession
    from gui.launch import plan_launch
    from gui.notifier import NullBackend
    from gui.session import GuiSession
    from gui.settings_source import SettingsSource

    plan = plan_launch(True, {"GOALKEEPER_HOME": home, "GOALKEEPER_RESUME_RESERVE_PERCENT": "10"})
    clock = FakeClock(datetime.now(UTC).replace(second=0, microsecond=0))
    demo = DemoSession(plan.paths, plan.settings, clock, printer=lambda _line: None)
    session = GuiSession(demo.make_host(), demo, backend=NullBackend(), use_tray=False,
                         source=SettingsSource(plan.paths.config_file, {}, DEMO_SETTINGS))
    session.window.resize(1280, 820)
    return session, clock


def _speak(language: str) -> None:
    """The core's and the app's words in ``language`` (as ``goalkeeper gui`` sets them)."""
    from PySide6.QtWidgets import QApplication

    from core import i18n
    from gui import i18n as gui_i18n

    i18n.use_language(language)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    gui_i18n.install(app, language)


async def shoot_translated(out: Path, language: str, every_tab: bool = False) -> int:
    """In ``language``: the main window while the goals wait for quota, a goal's details with
    its resume policy, the settings' Resuming and Resume policies tabs (each with an inline
    message), the history after the resumes, and the notifications (a failing webhook, the
    Notifications tab)."""
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


    _speak(language)
    out.mkdir(parents=True, exist_ok=True)
    home = tempfile.mkdtemp(prefix="goalkeeper-screenshots-")
    session, clock = demo_session(home)
    window = session.window
    await session.start()
    try:
        await clock.run_for(WAITING_AT, step=0.5)
        session.bridge.flush()
        window.goals_view.select_goal("demo:refactor")
        window.chart_panel.reload()
        await settle()
        session.tick.fire()
        suffix = f"-{language}"
        save(window.grab(), out / f"main-window{suffix}.png")
        await shoot_details(window, out, suffix)
        dialog = session.open_settings()
        dialog.editors["max_auto_attempts"].setText("0")
        await settle()
        save(dialog.grab(), out / f"settings{suffix}.png")
        await shoot_policy_settings(dialog, out, suffix)
        if every_tab:
            await shoot_every_tab(dialog, out, suffix)
        dialog.reject()
        await clock.run_for(RESUMED_AT - WAITING_AT, step=0.5)
        session.bridge.flush()
        window.chart_panel.reload()
        window.tabs.setCurrentWidget(window.history_view)
        window.splitter.setSizes([250, 600])
        window.history_view.scope_combo.setCurrentIndex(0)
        await settle()
        session.tick.fire()
        save(window.grab(), out / f"history{suffix}.png")
        window.tabs.setCurrentWidget(window.chart_panel)
        window.splitter.setSizes([430, 420])
        await notifications(session, clock, out, suffix)
    finally:
        await session.stop()
        shutil.rmtree(home, ignore_errors=True)
    return 0


async def shoot(out: Path, every_tab: bool = False) -> int:
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    from PySide6.QtWidgets import QApplication

    out.mkdir(parents=True, exist_ok=True)
    home = tempfile.mkdtemp(prefix="goalkeeper-screenshots-")
    session, clock = demo_session(home)
    window = session.window
    await session.start()
    try:
        await clock.run_for(WAITING_AT, step=0.5)
        session.bridge.flush()
        window.goals_view.select_goal("demo:refactor")
        window.chart_panel.reload()
        await settle()
        session.tick.fire()  # the fake clock jumped: bring every countdown up to it
        save(window.grab(), out / "main-window.png")
        await shoot_details(window, out)

        await clock.run_for(RESUMED_AT - WAITING_AT, step=0.5)
        session.bridge.flush()
        window.chart_panel.reload()
        await settle()
        session.tick.fire()

        window.tabs.setCurrentWidget(window.history_view)
        window.splitter.setSizes([250, 600])
        window.history_view.scope_combo.setCurrentIndex(0)
        await settle()
        save(window.grab(), out / "history.png")

        window.tabs.setCurrentWidget(window.chart_panel)
        window.splitter.setSizes([430, 420])
        dialog = session.open_settings()
        dialog.editors["max_auto_attempts"].setText("0")  # show an inline validation message
        await settle()
        save(dialog.grab(), out / "settings.png")
        await shoot_policy_settings(dialog, out)
        if every_tab:
            await shoot_every_tab(dialog, out)
        dialog.reject()

        # what a desktop in dark mode hands Qt (Xvfb has no desktop to ask); every colour the
        # app paints itself comes from the palette, so it follows
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        light = app.palette()
        app.setPalette(dark_palette())
        await settle()
        save(window.grab(), out / "main-window-dark.png")
        app.setPalette(light)
        await notifications(session, clock, out)
    finally:
        await session.stop()
        shutil.rmtree(home, ignore_errors=True)
    return 0


async def notifications(session: object, clock: object, out: Path, suffix: str = "") -> None:
    """ntfy accepts, the webhook answers 503: the window shows the failing one."""
    from core.clock import FakeClock
    from core.commands import SetAutoResume
    from core.settings import Settings
    from gui.session import GuiSession

    assert isinstance(session, GuiSession) and isinstance(clock, FakeClock)
    ok, busy = local_server(200), local_server(503)
    try:
        settings = Settings.model_validate({**session.user_settings.model_dump(),
            "notify_ntfy_url": f"http://127.0.0.1:{ok.server_address[1]}/my-goals-7f3a",
            "notify_ntfy_min_kind": "resumed",
            "notify_webhook_url": f"http://127.0.0.1:{busy.server_address[1]}/hooks/goalkeeper"})
        session.source.save(settings)  # as if saved in the dialog
        session._on_settings_saved(settings, False)
        session.bridge.request(SetAutoResume("demo:docs", True))
        for _ in range(200):  # the webhook's retries back off on the fake clock
            await clock.run_for(1, step=0.5)
            if session.window.channels.failing:
                break
        await settle()
        session.window.resize(1280, 820)
        save(session.window.grab(), out / f"notifications-failing{suffix}.png")
        dialog = session.open_settings()
        show_tab_of(dialog, "notify_ntfy_url")
        await settle()
        save(dialog.grab(), out / f"settings-notifications{suffix}.png")
        dialog.reject()
    finally:
        for server in (ok, busy):
            server.shutdown()
            server.server_close()


def local_server(status: int) -> Any:
    """A 127.0.0.1 server answering every POST with ``status`` (never the network)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Answer(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(status)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return server


async def shoot_details(window: object, out: Path, suffix: str = "") -> None:
    """A waiting goal's details, with its own resume policy being edited."""
    dialog = window.open_details("demo:refactor")  # type: ignore[attr-defined]
    dialog.resize(620, 760)
    form = dialog.policy_form
    form.priority.setValue(3)
    form.budget.setText("50")
    form.hours.setText("Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00")
    await settle()
    save(dialog.grab(), out / f"goal-details{suffix}.png")
    dialog.close()


def show_tab_of(dialog: object, setting: str) -> None:
    """Bring up the settings tab that holds ``setting``'s editor (in any language)."""
    tabs = dialog.tabs  # type: ignore[attr-defined]
    editor = dialog.editors[setting]  # type: ignore[attr-defined]
    tabs.setCurrentIndex(next(i for i in range(tabs.count())
                              if tabs.widget(i).isAncestorOf(editor)))


async def shoot_every_tab(dialog: object, out: Path, suffix: str = "") -> None:
    tabs = dialog.tabs  # type: ignore[attr-defined]
    for index in range(tabs.count()):
        tabs.setCurrentIndex(index)
        await settle()
        save(dialog.grab(), out / f"settings-tab-{index}{suffix}.png")


async def shoot_policy_settings(dialog: object, out: Path, suffix: str = "") -> None:
    """The Resume policies tab, one value still wrong."""
    show_tab_of(dialog, "resume_reserve_percent")
    editors = dialog.editors  # type: ignore[attr-defined]
    editors["max_auto_attempts"].setText("3")
    editors["resume_reserve_percent"].setText("20")
    editors["resume_reserve_by_window"].setText("codex:5h=30, claude:7d=10")
    editors["auto_resume_hours"].setText("Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00")
    editors["auto_resume_timezone"].setText("Europe/Berln")  # an inline validation message
    await settle()
    save(dialog.grab(), out / f"settings-policies{suffix}.png")


async def shoot_setup(out: Path, language: str) -> int:
    """The set-up assistant as a first start shows it: a Codex home with two goals and a
    Claude config directory with three sessions (no hooks yet), nothing ticked but the phone's
    notifications, whose URL is being typed."""
    import random

    from core.clock import SystemClock
    from core.engine import Engine
    from core.paths import resolve_paths
    from core.settings import Settings
    from gui.bridge import Bridge
    from gui.dialogs.setup_dialog import SetupDialog
    from tests.support.setup import agent_homes

    if language != "en":
        _speak(language)
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="goalkeeper-screenshots-"))
    user = root / "me"
    homes = agent_homes(user, codex_dir=".codex", claude_dir=".claude", xdg_dir=".config")
    os.environ.update({"HOME": str(user), **homes.env, "GOALKEEPER_HOME": str(root / "gk")})
    engine = Engine(resolve_paths(os.environ), Settings(), [], SystemClock(), random.Random(1))
    await engine.start()
    bridge = Bridge(engine)
    try:
        dialog = SetupDialog(bridge)
        dialog.boxes["ntfy"].setChecked(True)
        dialog.ntfy_url.setText("https://ntfy.sh/my-goals")
        dialog.show()
        dialog.ntfy_url.deselect()
        await settle()
        suffix = "" if language == "en" else f"-{language}"
        save(dialog.grab(), out / f"setup{suffix}.png")
        dialog.reject()
    finally:
        await bridge.close()
        await engine.stop()
        shutil.rmtree(root, ignore_errors=True)
    return 0


async def shoot_queue(out: Path, language: str) -> int:
    """Goal → Start at the reset…, filled in for a Codex goal whose 5-hour window resets in
    2 h 14 min (a reading recorded on the demo's host)."""
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    from datetime import timedelta

    from core.models import QuotaReading

    if language != "en":
        _speak(language)
    out.mkdir(parents=True, exist_ok=True)
    home = tempfile.mkdtemp(prefix="goalkeeper-screenshots-")
    session, clock = demo_session(home)
    await session.start()
    try:
        now = clock.now()
        await session.host.engine.quota_intake.record_reading(QuotaReading(
            window_id="codex:5h", provider="codex", label="Codex · 5 h", used_percent=93.0,
            resets_at=now + timedelta(hours=2, minutes=14), window_seconds=18000,
            observed_at=now))
        session.bridge.flush()
        await settle()
        dialog = session.window.open_queue()
        dialog.directory.setText("/home/you/src/webapp")
        dialog.text.setPlainText("Migrate the test suite to pytest and make it pass; keep "
                                 "the public API unchanged.")
        dialog.window_box.setCurrentIndex(dialog.window_box.findData("codex:5h"))
        await settle()
        save(dialog.grab(), out / f"queue-{language}.png")
        dialog.reject()
    finally:
        await session.stop()
        shutil.rmtree(home, ignore_errors=True)
    return 0


async def shoot_hosts(out: Path, language: str) -> int:
    """The Hosts dialog of host ``laptop`` on a shared store with ``desk`` (online, another
    account) and ``build-box`` (stopped a moment ago)."""
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")

    from core.clock import SystemClock
    from core.engine import Engine
    from core.paths import resolve_paths
    from core.settings import Settings
    from gui.bridge import Bridge
    from gui.dialogs.hosts import HostsDialog
    from tests.support.fakes import FakeProvider
    from tests.support.postgres import PgServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        print("screenshots: --hosts needs the PostgreSQL server binaries", file=sys.stderr)
        return 2
    if language != "en":
        _speak(language)
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="goalkeeper-screenshots-"))
    server = PgServer(bindir).init()
    clock = SystemClock()
    engines: list[Engine] = []

    async def host(host_id: str, kind: str, account: str, goals: int) -> Engine:
        fake = FakeProvider(clock, name="codex")
        for n in range(goals):
            fake.observe(f"fake:{host_id}-{n}", title=f"goal {n}")
        settings = Settings(store_url=server.url(server.create_database()) if not engines
                            else engines[0].settings.store_url, host_id=host_id,
                            account=account)
        engine = Engine(resolve_paths({"GOALKEEPER_HOME": str(home / host_id)}), settings,
                        [fake], clock, fenced=True)
        engine.host_registry.kind = kind
        await engine.start()
        engines.append(engine)
        return engine

    try:
        laptop = await host("laptop", "gui", "alice", 3)
        await host("desk", "daemon", "alice", 2)
        build = await host("build-box", "daemon", "ci", 1)
        await asyncio.sleep(1.5)  # every host has beaten once
        await build.stop()
        bridge = Bridge(laptop)
        dialog = HostsDialog(bridge)
        dialog.resize(900, 260)
        dialog.show()
        await asyncio.sleep(1.0)
        dialog.reload()
        await settle()
        suffix = "" if language == "en" else f"-{language}"
        save(dialog.grab(), out / f"hosts{suffix}.png")
        await dialog.shutdown()
        await bridge.close()
    finally:
        for engine in engines:
            if engine is not build:
                await engine.stop()
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
    return 0


def dark_palette() -> object:
    from PySide6.QtGui import QColor, QPalette

    palette = QPalette()
    role = QPalette.ColorRole
    for name, colour in ((role.Window, "#2b2d30"), (role.WindowText, "#dfe1e5"),
                         (role.Base, "#1e1f22"), (role.AlternateBase, "#26282b"),
                         (role.Text, "#dfe1e5"), (role.Button, "#393b40"),
                         (role.ButtonText, "#dfe1e5"), (role.Highlight, "#2f65ca"),
                         (role.HighlightedText, "#ffffff"), (role.Mid, "#4e5157"),
                         (role.Midlight, "#43454a"), (role.Dark, "#1a1b1e"),
                         (role.Light, "#55585e"), (role.ToolTipBase, "#393b40"),
                         (role.ToolTipText, "#dfe1e5"), (role.PlaceholderText, "#8c8f94"),
                         (role.Link, "#6ea6ff")):
        palette.setColor(name, QColor(colour))
    for name in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, name, QColor("#6f737a"))
    return palette


async def settle() -> None:
    for _ in range(6):
        await asyncio.sleep(0.05)


def save(pixmap: object, path: Path) -> None:
    from PySide6.QtGui import QPixmap

    assert isinstance(pixmap, QPixmap)
    if not pixmap.save(str(path)):
        raise OSError(f"could not write {path}")
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} "
          f"({pixmap.width()}×{pixmap.height()})")


if __name__ == "__main__":
    sys.exit(main())
