"""The set-up assistant's window, offscreen: what it found, each choice unticked until the user
ticks it, every tick doing what it says, "Not now" changing nothing; opened at the first start
(not in the demo, not once it ran) and from Goalkeeper → Set up… (issue 22)."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

import pytest

from core.clock import FakeClock
from core.host import Host
from core.models import GoalState
from core.paths import Paths
from core.settings import Settings
from gui.bridge import Bridge
from gui.dialogs.setup_dialog import SetupDialog
from gui.main_window import MainWindow
from gui.session import GuiSession
from gui.settings_source import SettingsSource
from tests.support.fakes import FakeProvider, until
from tests.support.gui import RecordingBackend, english_left, wait_signal
from tests.support.setup import AgentHomes, FakeService, agent_homes


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AgentHomes:
    homes = agent_homes(tmp_path)
    for name, value in homes.env.items():
        monkeypatch.setenv(name, value)
    return homes


@pytest.fixture
def service(bridge: Bridge, monkeypatch: pytest.MonkeyPatch) -> FakeService:
    service = FakeService()
    real = bridge.setup_context
    monkeypatch.setattr(bridge, "setup_context", lambda: service.faked(real()))
    return service


def config(paths: Paths) -> dict[str, Any]:
    path = paths.config_file
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def dialog_for(bridge: Bridge, qtbot: Any) -> SetupDialog:
    dialog = SetupDialog(bridge)
    qtbot.addWidget(dialog)
    return dialog


@pytest.mark.asyncio
async def test_it_shows_what_it_found_and_nothing_is_ticked(
        bridge: Bridge, homes: AgentHomes, service: FakeService, qtbot: Any) -> None:
    dialog = dialog_for(bridge, qtbot)
    text = dialog.found.text()
    assert f"in {homes.codex}: 2 goals" in text and "3 sessions" in text
    assert "Codex quota" in text and "guessed from the usage-limit messages" in text
    assert list(dialog.boxes) == ["codex_auto_resume", "claude_auto_resume", "claude_hooks",
                                  "start_at_login", "service", "ntfy"]
    assert not any(box.isChecked() for box in dialog.boxes.values())
    assert all(box.isEnabled() for box in dialog.boxes.values())
    assert not dialog.ntfy_url.isEnabled()


@pytest.mark.asyncio
async def test_apply_with_nothing_ticked_changes_nothing(
        bridge: Bridge, homes: AgentHomes, service: FakeService, paths: Paths,
        qtbot: Any) -> None:
    dialog = dialog_for(bridge, qtbot)
    dialog.apply_button.click()
    (done,) = await wait_signal(dialog.applied)
    assert done == []
    assert config(paths) == {"setup_done": True}
    assert homes.claude_settings() == {"theme": "dark"}
    assert not homes.autostart().exists() and service.installs == 0
    assert "Nothing changed" in dialog.outcome.text()


@pytest.mark.asyncio
async def test_every_tick_does_what_it_says(bridge: Bridge, homes: AgentHomes,
                                            service: FakeService, paths: Paths,
                                            qtbot: Any) -> None:
    dialog = dialog_for(bridge, qtbot)
    for box in dialog.boxes.values():
        box.setChecked(True)
    assert dialog.ntfy_url.isEnabled()
    dialog.ntfy_url.setText("https://ntfy.sh/phone")
    dialog.apply_button.click()
    (done,) = await wait_signal(dialog.applied)
    assert sorted(a.key for a in done) == sorted(dialog.boxes)
    assert all(a.ok for a in done), done
    assert config(paths) == {"codex_auto_resume": True, "claude_auto_resume": True,
                             "notify_ntfy_url": "https://ntfy.sh/phone",
                             "start_at_login": True, "setup_done": True}
    assert "hook claude-statusline" in homes.claude_settings()["statusLine"]["command"]
    assert homes.autostart().exists() and service.installs == 1
    assert dialog.later_button.text() == "&Close"
    again = dialog_for(bridge, qtbot)  # run again: what is on is shown as on, not offered
    assert not again.boxes["claude_hooks"].isEnabled() and again.boxes["service"].isChecked()
    assert "already on" in again.boxes["claude_hooks"].text()


@pytest.mark.asyncio
async def test_one_tick_does_only_that(bridge: Bridge, homes: AgentHomes,
                                       service: FakeService, paths: Paths, qtbot: Any) -> None:
    dialog = dialog_for(bridge, qtbot)
    dialog.boxes["claude_hooks"].setChecked(True)
    dialog.apply_button.click()
    (done,) = await wait_signal(dialog.applied)
    assert [(a.key, a.ok) for a in done] == [("claude_hooks", True)]
    assert config(paths) == {"setup_done": True}
    assert "StopFailure" in homes.claude_settings()["hooks"]
    assert not homes.autostart().exists() and service.installs == 0


@pytest.mark.asyncio
async def test_not_now_records_that_it_ran_and_nothing_else(
        bridge: Bridge, homes: AgentHomes, service: FakeService, paths: Paths,
        qtbot: Any) -> None:
    dialog = dialog_for(bridge, qtbot)
    dialog.boxes["codex_auto_resume"].setChecked(True)  # ticked, but not applied
    dialog.open()
    dialog.later_button.click()
    await wait_signal(dialog.finished)
    assert config(paths) == {"setup_done": True}
    assert homes.claude_settings() == {"theme": "dark"} and service.installs == 0


@pytest.mark.asyncio
async def test_the_menu_and_the_first_run_page_ask_for_it(window: MainWindow) -> None:
    asked: list[bool] = []
    window.setup_requested.connect(lambda: asked.append(True))
    assert window.setup_action in window.app_menu.actions()
    window.setup_action.trigger()
    window.first_run.setup_button.click()
    assert asked == [True, True]


def _session(paths: Paths, clock: FakeClock, fake: FakeProvider, settings: Settings,
             offer: bool) -> GuiSession:
    host = Host(paths, settings, [fake], "gui", clock, random.Random(1))
    return GuiSession(host, source=SettingsSource(paths.config_file, {}),
                      backend=RecordingBackend(), use_tray=False, offer_setup=offer)


@pytest.mark.asyncio
@pytest.mark.parametrize(("settings", "offer", "shown"), [
    (Settings(resume_jitter_seconds=0), True, True),
    (Settings(resume_jitter_seconds=0, setup_done=True), True, False),
    (Settings(resume_jitter_seconds=0), False, False),  # the demo's session and the tests'
])
async def test_the_first_start_opens_it_unless_it_ran(
        paths: Paths, clock: FakeClock, fake: FakeProvider, homes: AgentHomes, qtbot: Any,
        settings: Settings, offer: bool, shown: bool) -> None:
    fake.observe("fake:a", GoalState.RUNNING, title="Refactor the parser")
    session = _session(paths, clock, fake, settings, offer)
    await session.start()
    try:
        assert (session.setup_dialog is not None) is shown
        if shown:
            assert session.setup_dialog is not None
            await until(lambda: session.setup_dialog is not None
                        and session.setup_dialog.isVisible())
            session.setup_dialog.later_button.click()
            await until(lambda: session.setup_dialog is None)
            assert config(paths) == {"setup_done": True}
            assert session.open_setup().isVisible()  # Goalkeeper → Set up… opens it again
            session.setup_dialog.reject()  # type: ignore[union-attr]
    finally:
        await session.stop()


@pytest.mark.asyncio
async def test_in_chinese_no_english_is_left(zh: None, bridge: Bridge, homes: AgentHomes,
                                             service: FakeService, qtbot: Any) -> None:
    dialog = dialog_for(bridge, qtbot)
    assert dialog.windowTitle() == "Goalkeeper 配置向导"
    assert "2 个目标" in dialog.found.text() and "3 个会话" in dialog.found.text()
    assert dialog.boxes["codex_auto_resume"].text() == "自动恢复 Codex 目标"
    assert english_left(dialog) == []
