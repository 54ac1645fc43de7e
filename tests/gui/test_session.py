"""The session's tray behaviour, notification seam and live settings."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.commands import Resume
from core.host import Host
from core.models import GoalState
from core.paths import Paths
from core.settings import Settings, load_settings
from gui.session import TRAY_HINT, GuiSession
from gui.settings_source import SettingsSource
from gui.tray import Tray
from tests.support.fakes import FakeProvider, until
from tests.support.gui import RecordingBackend


@pytest_asyncio.fixture
async def session(paths: Paths, clock: FakeClock, fake: FakeProvider,
                  monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    fake.observe("fake:a", GoalState.RUNNING, title="Refactor the parser")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    host = Host(paths, Settings(resume_jitter_seconds=0), [fake], "gui", clock, random.Random(1))
    backend = RecordingBackend()
    s = GuiSession(host, source=SettingsSource(paths.config_file, {}), backend=backend)
    s.recorded = backend  # type: ignore[attr-defined]
    yield s
    if s.bridge.host_state != "stopped":
        await s.stop()


# the offscreen platform has no tray; these tests force one and Qt notes the missing hook
TRAY_ON_OFFSCREEN = pytest.mark.qt_log_ignore("systemTrayWindowChanged")


@TRAY_ON_OFFSCREEN
@pytest.mark.asyncio
async def test_closing_hides_to_the_tray_and_says_so_once(session: GuiSession,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Tray, "available", staticmethod(lambda: True))
    await session.start()
    assert session.tray is not None and session.tray.icon.isVisible()
    session.window.close()
    assert not session.window.isVisible() and not session._quit.is_set()
    hints = [n for n in session.recorded.sent if n.title == TRAY_HINT[0]]  # type: ignore[attr-defined]
    assert len(hints) == 1
    session.tray.show_window_requested.emit()
    assert session.window.isVisible()
    session.window.close()
    hints = [n for n in session.recorded.sent if n.title == TRAY_HINT[0]]  # type: ignore[attr-defined]
    assert len(hints) == 1  # only the first time (remembered in gui-state.ini)
    assert session.state.tray_hint_shown
    session.tray.quit_requested.emit()
    await asyncio.wait_for(session.run(), 2)


@TRAY_ON_OFFSCREEN
@pytest.mark.asyncio
async def test_tray_goal_entry_shows_that_goal(session: GuiSession,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Tray, "available", staticmethod(lambda: True))
    await session.start()
    session.window.hide()
    assert session.tray is not None
    session.tray.goal_requested.emit("fake:a")
    assert session.window.isVisible()
    current = session.window.goals_view.current_goal()
    assert current is not None and current.id == "fake:a"


@pytest.mark.asyncio
async def test_saved_settings_apply_live_where_they_can(session: GuiSession, paths: Paths,
                                                        tmp_path: Path) -> None:
    await session.start()
    dialog = session.open_settings()
    assert dialog.isVisible() and session.open_settings() is dialog
    dialog.editors["notify_resumed"].setChecked(False)  # type: ignore[union-attr]
    dialog.editors["start_at_login"].setChecked(True)  # type: ignore[union-attr]
    assert await dialog.save()
    assert not session.user_settings.notify_resumed
    assert not session.host.notifications.settings.notify_resumed  # the core decides: at once
    assert load_settings(paths.config_file, {}).start_at_login
    assert session.window.banner.text == "Settings saved and applied."
    autostart = tmp_path / "xdg" / "autostart" / "io.github.goalkeeper.Goalkeeper.desktop"
    await until(lambda: autostart.exists())
    await until(lambda: session.settings_dialog is None)

    dialog = session.open_settings()
    dialog.editors["max_auto_attempts"].setText("7")  # type: ignore[union-attr]
    assert await dialog.save()
    assert "apply when Goalkeeper next starts" in session.window.banner.text


class _StopReleasesGate(FakeProvider):
    """A runner start still under way when the provider stops finishes meanwhile (as a
    Claude run starting while the provider waits out another run's grace period)."""

    async def stop(self) -> None:
        if self.gate is not None:
            self.gate.set()
        for _ in range(20):
            await asyncio.sleep(0)


@pytest.mark.asyncio
async def test_quitting_never_leaves_a_runner_started_behind_the_stopped_host(
        paths: Paths, clock: FakeClock, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    from core.models import PauseReason
    from core.store import open_store

    provider = _StopReleasesGate(clock)
    provider.observe("fake:b", GoalState.PAUSED, reason=PauseReason.USER)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    host = Host(paths, Settings(resume_jitter_seconds=0), [provider], "gui", clock,
                random.Random(1))
    s = GuiSession(host, source=SettingsSource(paths.config_file, {}),
                   backend=RecordingBackend())
    await s.start()
    provider.gate = asyncio.Event()
    s.bridge.request(Resume("fake:b"))
    await until(lambda: bool(provider.resume_calls))
    await s.stop()
    assert provider.starts == []  # nothing runs that no host watches
    store, _ = open_store(paths.database, clock.now())
    try:
        goal = store.get_goal("fake:b")
    finally:
        store.close()
    assert goal is not None and goal.state is GoalState.RESUMING  # start-up recovery's case
    again = FakeProvider(clock)
    host = Host(paths, Settings(resume_jitter_seconds=0), [again], "gui", clock,
                random.Random(1))
    await host.start()
    try:
        await until(lambda: [g for g, _ in again.starts] == ["fake:b"])
    finally:
        await host.stop()


@pytest.mark.asyncio
async def test_notification_channels_apply_at_once_and_a_variable_keeps_winning(
        paths: Paths, clock: FakeClock, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    import keyring

    from tests.real.mockhttp import Reply, serving
    from tests.support.fake_keyring import MemoryKeyring

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    with serving(lambda _request: Reply.json({"id": "x"}), poll_interval=0.02) as server:
        hook = f"{server.url}/hook"
        host = Host(paths, Settings(resume_jitter_seconds=0, notify_webhook_url=hook), [fake],
                    "gui", clock, random.Random(1))
        s = GuiSession(host, source=SettingsSource(
            paths.config_file, {"GOALKEEPER_NOTIFY_WEBHOOK_URL": hook}),
            backend=RecordingBackend())
        try:
            await s.start()
            dialog = s.open_settings()
            assert not dialog.editors["notify_webhook_url"].isEnabled()  # the variable's
            assert await dialog.send_test() == "webhook: delivered"
            assert server.requests[-1].json()["kind"] == "test"
            dialog.editors["notify_ntfy_url"].setText(f"{server.url}/goals")  # type: ignore[union-attr]
            assert await dialog.save()
            assert s.window.banner.text == "Settings saved and applied."
            live = s.host.notifications
            assert live.settings.notify_webhook_url == hook  # the variable still wins
            assert [h.channel for h in live.health()] == ["webhook", "ntfy"]
            await until(lambda: "ntfy" in s.window.channels.text())
        finally:
            await s.stop()
            keyring.set_keyring(previous)
