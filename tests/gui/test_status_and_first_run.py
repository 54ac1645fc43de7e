"""The status bar (host, last refresh, next wake) and the first-run page."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import SetAutoResume
from core.engine import Engine
from core.models import GoalState, PauseReason
from core.paths import Paths
from core.providers.pipeline.provider import PipelineProvider
from core.settings import Settings
from gui.bridge import Bridge
from gui.main_window import MainWindow
from gui.tick import DisplayTick
from tests.pipeline.support import FakeSecrets, step, toml_text
from tests.support.fakes import FakeProvider, until
from tests.support.gui import RecordingLauncher


@pytest.mark.asyncio
async def test_status_bar_shows_host_refresh_and_next_wake(window: MainWindow, engine: Engine,
                                                          fake: FakeProvider,
                                                          clock: FakeClock) -> None:
    status = window.status
    window.bridge.set_host_state("running")
    assert status.host.text() == "Host: test host"
    assert status.refresh.text().startswith("Providers read ")
    await engine.perform(SetAutoResume("fake:a", True))
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(seconds=30), title="Refactor the parser")
    await engine.refresh()
    await until(lambda: status.next_wake is not None)
    assert status.wake.text().startswith("Next wake in ")
    assert status.needs_tick()
    window.bridge.set_host_state("stopping")
    assert status.host.text() == "Stopping the host…"


@pytest.mark.asyncio
async def test_idle_scheduler_says_so(window: MainWindow) -> None:
    window.status._on_bridge_scheduler_woke(None)
    assert window.status.wake.text() == "Scheduler idle: nothing pending"
    assert not window.status.needs_tick()


@pytest.mark.asyncio
async def test_first_run_page_when_nothing_is_found(make_engine: Any, clock: FakeClock,
                                                    qtbot: Any) -> None:
    empty = FakeProvider(clock)
    engine: Engine = await make_engine(empty)
    bridge = Bridge(engine)
    launcher = RecordingLauncher()
    win = MainWindow(bridge, launcher, DisplayTick(bridge.now))  # type: ignore[arg-type]
    qtbot.addWidget(win)
    bridge.sync()
    assert win.stack.currentWidget() is win.main_page  # not before the host runs
    bridge.set_host_state("running")
    assert win.stack.currentWidget() is win.first_run
    text = win.first_run.looked_for_text()
    assert "looked for goals and quota windows" in text and "the built-in demo" in text
    win.first_run.demo_button.click()
    assert launcher.demos == 1
    assert "own window" in win.banner.text

    empty.observe("fake:new", GoalState.RUNNING, title="Found later")
    await engine.refresh()
    await until(lambda: win.stack.currentWidget() is win.main_page)
    await bridge.close()


@pytest.mark.asyncio
async def test_status_bar_says_store_unavailable_and_host_not_running(window: MainWindow,
                                                                     engine: Engine) -> None:
    status = window.status
    assert status.problem.isHidden()
    engine.report_queue.failed("database or disk is full (SQLITE_FULL)")
    assert not status.problem.isHidden()
    assert status.problem.text().startswith("store unavailable: database or disk is full")
    assert "since" in status.problem.toolTip()
    engine.report_queue.succeeded()
    assert status.problem.isHidden()
    window.bridge.set_host_state("replaced")
    assert status.host.text().startswith("Host not running: another Goalkeeper host")


@pytest.mark.asyncio
async def test_status_bar_says_a_goal_file_waits_for_approval(
        make_engine: Any, clock: FakeClock, paths: Paths, tmp_path: Path, qtbot: Any) -> None:
    directory = paths.data_dir / "pipelines" / "dropped"  # not added with `goalkeeper add`
    directory.mkdir(parents=True)
    (directory / "goal.toml").write_text(toml_text({"name": "dropped"}, [], [step("deliver")]))
    provider = PipelineProvider(Settings(), paths, clock, {}, FakeSecrets({}), random.Random(1))
    engine: Engine = await make_engine(provider)
    bridge = Bridge(engine)
    win = MainWindow(bridge, RecordingLauncher(), DisplayTick(bridge.now))  # type: ignore[arg-type]
    qtbot.addWidget(win)
    bridge.sync()
    await engine.refresh()
    await until(lambda: not win.status.problem.isHidden())
    assert "pipeline goal dropped needs your approval" in win.status.problem.toolTip()
    assert "`goalkeeper approve dropped`" in win.status.problem.toolTip()
    await bridge.close()


@pytest.mark.asyncio
async def test_status_bar_says_what_keep_awake_cannot_hold(window: MainWindow,
                                                           engine: Engine) -> None:
    from core.health import AwakeHealth

    note = ("the machine will still sleep when the lid closes; the resume at 03:10 will wait "
            "for it")
    engine.keep_awake._set(AwakeHealth("holding", "fake:a resumes at 03:10", 12, (note,)))
    status = window.status
    await until(lambda: not status.problem.isHidden())
    assert note in status.problem.toolTip()
    engine.keep_awake._set(AwakeHealth("idle"))
    await until(lambda: status.problem.isHidden())
