"""Start-up and shutdown: one host per data directory, a second launch raises the first window,
a daemon is named with its pid, quitting releases the lease and leaves goals recoverable."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from core.clock import FakeClock
from core.commands import Start
from core.host import Host
from core.hosts.lease import host_running
from core.models import GoalState
from core.paths import Paths
from core.settings import Settings
from gui import app
from gui.launch import (
    already_hosted_text,
    ask_to_show_window,
    display_problem,
    plan_launch,
)
from gui.main_window import MainWindow
from gui.session import GuiSession
from tests.support.fakes import FakeProvider, until
from tests.support.foreign_files import CASES, COMMENT, Case, expected


def top_level(kind: type) -> list[Any]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]


def test_plan_launch_normal_and_demo(tmp_path: Path) -> None:
    env = {"GOALKEEPER_HOME": str(tmp_path / "home")}
    plan = plan_launch(False, env)
    assert plan.kind == "gui" and not plan.demo
    assert plan.paths.data_dir == tmp_path / "home"
    demo = plan_launch(True, env)
    assert demo.demo and demo.kind == "demo" and demo.settings.demo_enabled
    assert demo.settings.resume_margin_seconds == 3  # the demo's short margins
    fresh = plan_launch(True, {})
    assert fresh.paths.data_dir.name.startswith("goalkeeper-demo-")
    fresh.paths.data_dir.rmdir()


def test_display_problem_names_the_headless_alternatives() -> None:
    assert display_problem({"DISPLAY": ":0"}) is None
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    text = display_problem({})
    assert text is not None and "goalkeeper daemon" in text


CONFIG, KEY = COMMENT + "resume_margin_seconds = 30\n", "codex_continuation_text"
REFUSED = [case for case in CASES if case.expected is not None]


def test_a_config_toml_with_a_utf8_bom_is_read(paths: Paths) -> None:
    next(c for c in CASES if c.expected is None).write(paths.config_file, CONFIG, KEY)
    assert plan_launch(False).settings.resume_margin_seconds == 30


@pytest.mark.asyncio
@pytest.mark.parametrize("case", REFUSED, ids=[case.name for case in REFUSED])
async def test_a_config_toml_that_cannot_be_read_is_said_in_a_dialog(paths: Paths, case: Case,
                                                                     qtbot: Any) -> None:
    case.write(paths.config_file, CONFIG, KEY)
    task = asyncio.ensure_future(app.amain(argparse.Namespace(demo=False)))
    try:
        await until(lambda: bool(top_level(QMessageBox)) or task.done())
        box = top_level(QMessageBox)[0]
        assert expected(case, paths.config_file, CONFIG, KEY) in box.text()
        assert "Traceback" not in box.text() and len(box.text()) < 2000
        box.button(QMessageBox.StandardButton.Ok).click()
        assert await task == app.EXIT_USAGE
        assert not top_level(MainWindow) and not paths.database.exists()
    finally:  # an app that started after all is stopped, not left to the next test
        if not task.done():
            task.cancel()
        with contextlib.suppress(BaseException):
            await task


@pytest.mark.asyncio
async def test_a_linked_runtime_fallback_is_refused_in_a_dialog(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qtbot: Any) -> None:
    import os
    import tempfile

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / f"goalkeeper-{os.getuid()}").symlink_to(tmp_path / "elsewhere")
    for name in ("GOALKEEPER_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("CONFIG", "DATA", "STATE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    task = asyncio.ensure_future(app.amain(argparse.Namespace(demo=False)))
    try:
        await until(lambda: bool(top_level(QMessageBox)) or task.done())
        box = top_level(QMessageBox)[0]
        assert "is not a directory (a link or a file): refusing to use it" in box.text()
        box.button(QMessageBox.StandardButton.Ok).click()
        assert await task == app.EXIT_ERROR
        assert not any((tmp_path / "elsewhere").iterdir())
    finally:
        if not task.done():
            task.cancel()
        with contextlib.suppress(BaseException):
            await task


def make_host(paths: Paths, clock: FakeClock, kind: str, fake: FakeProvider) -> Host:
    return Host(paths, Settings(resume_jitter_seconds=0), [fake], kind, clock, random.Random(3))


@pytest.mark.asyncio
async def test_second_launch_raises_the_running_window(paths: Paths, clock: FakeClock,
                                                        fake: FakeProvider, qtbot: Any,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    fake.observe("fake:a", GoalState.RUNNING, title="Refactor the parser")
    session = GuiSession(make_host(paths, clock, "gui", fake))
    await session.start()
    try:
        info = host_running(paths)
        assert info is not None and info.kind == "gui"
        session.window.hide()
        assert await asyncio.to_thread(ask_to_show_window, info, paths)
        assert session.window.isVisible()

        code = await app.amain(argparse.Namespace(demo=False))
        assert code == 0
        assert "already open" in capsys.readouterr().out
    finally:
        await session.stop()
    assert host_running(paths) is None
    assert not paths.host_file.exists()


@pytest.mark.asyncio
async def test_a_daemon_host_is_named_with_its_pid(paths: Paths, clock: FakeClock,
                                                   fake: FakeProvider, qtbot: Any) -> None:
    daemon = make_host(paths, clock, "daemon", fake)
    info = await daemon.start()
    try:
        assert not await asyncio.to_thread(ask_to_show_window, info, paths)
        text = already_hosted_text(info, paths)
        assert f"a Goalkeeper daemon (pid {info.pid}" in text
        assert str(paths.data_dir) in text and "will not start a second one" in text

        task = asyncio.ensure_future(app.amain(argparse.Namespace(demo=False)))
        await until(lambda: bool(top_level(QMessageBox)))
        box = top_level(QMessageBox)[0]
        assert f"pid {info.pid}" in box.text()
        box.button(QMessageBox.StandardButton.Ok).click()
        assert await task == app.EXIT_ERROR
        assert not top_level(MainWindow)  # no window, no second host
    finally:
        await daemon.stop()


@pytest.mark.asyncio
async def test_quit_releases_the_lease_and_leaves_running_goals_recoverable(
        paths: Paths, clock: FakeClock, fake: FakeProvider, qtbot: Any) -> None:
    fake.observe("fake:a", GoalState.IDLE, title="Refactor the parser")
    session = GuiSession(make_host(paths, clock, "gui", fake))
    await session.start()
    result = await session.bridge.perform(Start("fake:a"))
    assert result.outcome.value == "resumed"
    runner = asyncio.ensure_future(session.run())
    session.window.quit_requested.emit()
    await asyncio.wait_for(runner, 5)
    await session.stop()
    assert host_running(paths) is None
    assert session.bridge.host_state == "stopped"

    # the next host finds the goal interrupted and resumes it (start-up recovery)
    nxt = make_host(paths, clock, "gui", fake)
    await nxt.start()
    try:
        goal = nxt.engine.goals["fake:a"]
        assert goal.state is GoalState.RUNNING
        rows = await nxt.engine.reads.history("fake:a", limit=20)
        assert any(r.event == "paused" and r.reason and "host stopped" in r.reason for r in rows)
        assert any(r.trigger is not None and r.trigger.value == "startup" for r in rows)
    finally:
        await nxt.stop()


@pytest.mark.asyncio
async def test_closing_the_window_without_a_tray_quits(paths: Paths, clock: FakeClock,
                                                        fake: FakeProvider, qtbot: Any) -> None:
    session = GuiSession(make_host(paths, clock, "gui", fake))
    await session.start()
    runner = asyncio.ensure_future(session.run())
    session.window.close()
    await asyncio.wait_for(runner, 5)
    await session.stop()
    assert host_running(paths) is None


def test_an_outside_quit_still_stops_the_host_cleanly(qapp: Any, paths: Paths) -> None:
    """A session manager (or anything) calling app.quit() ends Qt's loop under qasync; the app
    runs the loop once more so that the host is stopped and the lease released."""
    from PySide6.QtCore import QTimer

    QTimer.singleShot(400, qapp.quit)
    assert app.main([]) == app.EXIT_OK
    assert host_running(paths) is None and not paths.host_file.exists()
