"""The display tick runs only while the window is visible and something counts down."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import Pause, SetAutoResume
from core.engine import Engine
from core.models import GoalState, PauseReason
from gui.main_window import MainWindow
from gui.tick import DisplayTick
from tests.gui.factories import T0
from tests.support.fakes import FakeProvider, until


def test_tick_needs_visibility_and_a_need(qtbot: Any) -> None:
    needed = [False]
    tick = DisplayTick(lambda: T0)
    tick.add_need(lambda: needed[0])
    assert not tick.active
    tick.set_visible(True)
    assert not tick.active  # nothing counts down
    needed[0] = True
    tick.reevaluate()
    assert tick.active
    tick.set_visible(False)
    assert not tick.active  # hidden to the tray or minimised


def test_tick_fires_each_second_and_stops_when_the_need_goes(qtbot: Any) -> None:
    needed = [True]
    tick = DisplayTick(lambda: T0)
    tick.add_need(lambda: needed[0])
    seen: list[object] = []
    tick.ticked.connect(seen.append)
    tick.set_visible(True)
    qtbot.waitUntil(lambda: len(seen) >= 1, timeout=2500)
    needed[0] = False
    qtbot.waitUntil(lambda: not tick.active, timeout=2500)
    assert seen[0] == T0


@pytest.mark.asyncio
async def test_window_ticks_only_while_shown_with_a_countdown(
        window: MainWindow, engine: Engine, fake: FakeProvider, clock: FakeClock) -> None:
    window.show()
    assert not window.tick.active  # no countdown on screen
    await engine.perform(SetAutoResume("fake:a", True))
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(minutes=5), title="Refactor the parser")
    await engine.refresh()
    await until(lambda: window.tick.active)
    window.hide()
    assert not window.tick.active
    window.show()
    assert window.tick.active
    await engine.perform(Pause("fake:a"))  # a user pause: no countdown any more
    await until(lambda: not window.goals_model.needs_tick() and window.status.next_wake is None)
    window.bridge.flush()
    window.tick.reevaluate()
    assert not window.tick.active
