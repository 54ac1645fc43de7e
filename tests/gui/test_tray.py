"""The tray icon's state and tooltip, and its menu as rebuilt when it opens."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from core.clock import FakeClock
from core.commands import ActionResult, Command, Pause, SetAutoResume
from core.engine import Engine
from core.models import GoalState, Outcome, PauseReason
from gui.bridge import Bridge
from gui.goal_rules import Aggregate, summarise
from gui.tray import Tray, pause_all_text, tooltip_text
from tests.gui.factories import goal, quota_paused
from tests.support.fakes import FakeProvider, until


def test_tooltip_counts_states() -> None:
    assert tooltip_text(summarise([])) == "Goalkeeper — no goals yet"
    assert tooltip_text(summarise([goal(state=GoalState.DONE)])) == (
        "Goalkeeper — nothing running (1 goals)")
    summary = summarise([goal("p:1"), goal("p:2"), quota_paused("p:3"),
                         goal("p:4", GoalState.FAILED)])
    assert tooltip_text(summary, "18:40") == (
        "Goalkeeper — 2 running · 1 waiting for quota (next resume 18:40) · 1 needs attention")


def test_pause_all_text_counts_the_engine_answers() -> None:
    results = [ActionResult("a", Outcome.PAUSED, "paused"),
               ActionResult("b", Outcome.PAUSED, "paused"),
               ActionResult("c", Outcome.REFUSED, "refused: done")]
    assert pause_all_text(results) == "Pause all: 2 paused, 1 refused"
    assert pause_all_text([]) == "Pause all: nothing to pause"


@pytest.mark.asyncio
async def test_menu_lists_goals_waiting_for_quota_with_countdowns(
        bridge: Bridge, engine: Engine, fake: FakeProvider, clock: FakeClock, qtbot: Any) -> None:
    await engine.perform(SetAutoResume("fake:a", True))
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(minutes=10), title="Refactor the parser")
    fake.observe("fake:b", GoalState.PAUSED, reason=PauseReason.QUOTA, title="Write the docs")
    await engine.refresh()
    tray = Tray(bridge)
    assert tray.state is Aggregate.WAITING
    assert tray.icon.toolTip().startswith("Goalkeeper — 2 waiting for quota (next resume ")
    tray.menu.aboutToShow.emit()
    assert tray.menu_texts() == [
        "&Show Goalkeeper", "---", "Waiting for quota (2)",
        "Refactor the parser — resumes in 10:45",
        "Write the docs — auto-resume is off",
        "---", "&Pause all (3)", "---", "&Quit Goalkeeper",
    ]
    wanted: list[str] = []
    tray.goal_requested.connect(wanted.append)
    tray.action_named("Write the docs").trigger()  # type: ignore[union-attr]
    assert wanted == ["fake:b"]

    clock.advance(45)
    tray.menu.aboutToShow.emit()  # rebuilt: the countdown moved
    assert "Refactor the parser — resumes in 10:00" in tray.menu_texts()
    tray.close()


@pytest.mark.asyncio
async def test_pause_all_goes_through_the_engine_and_reports_once(
        bridge: Bridge, engine: Engine, qtbot: Any) -> None:
    tray = Tray(bridge)
    messages: list[tuple[str, bool]] = []
    tray.message.connect(lambda text, ok: messages.append((text, ok)))
    results = await tray.pause_all()
    assert [r.outcome for r in results] == [Outcome.PAUSED] * 3
    assert messages == [("Pause all: 3 paused", True)]
    assert all(g.pause_reason is PauseReason.USER for g in engine.goals.values())
    await until(lambda: tray.state is Aggregate.IDLE)
    tray.menu.aboutToShow.emit()
    assert tray.action_named("&Pause all") is not None
    assert not tray.action_named("&Pause all").isEnabled()  # type: ignore[union-attr]
    rows = await engine.reads.history("fake:a", limit=5)
    assert any(r.origin == "tray" for r in rows)
    tray.close()


@pytest.mark.asyncio
async def test_icon_follows_the_most_urgent_state(bridge: Bridge, engine: Engine,
                                                  fake: FakeProvider, qtbot: Any) -> None:
    tray = Tray(bridge)
    assert tray.state is Aggregate.RUNNING  # fake:a runs
    fake.observe("fake:c", GoalState.FAILED, title="Port the tests")
    await engine.refresh()
    await until(lambda: tray.state is Aggregate.ATTENTION)
    assert "1 needs attention" in tray.icon.toolTip()
    tray.close()


@pytest.mark.asyncio
async def test_pause_all_renders_an_engine_failure_and_pauses_the_rest(
        bridge: Bridge, engine: Engine, qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    real_perform = engine.perform

    async def perform(command: Command, origin: str = "gui") -> ActionResult:
        if isinstance(command, Pause) and command.goal == "fake:a":
            raise RuntimeError("the store is gone")
        return await real_perform(command, origin)

    monkeypatch.setattr(engine, "perform", perform)
    tray = Tray(bridge)
    messages: list[tuple[str, bool]] = []
    tray.message.connect(lambda text, ok: messages.append((text, ok)))
    results = await tray.pause_all()
    assert sorted((r.goal, r.outcome) for r in results) == [
        ("fake:a", Outcome.FAILED), ("fake:b", Outcome.PAUSED), ("fake:c", Outcome.PAUSED)]
    assert messages == [("Pause all: 2 paused, 1 failed", False)]
    tray.close()
