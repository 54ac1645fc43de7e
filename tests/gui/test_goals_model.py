"""The goals model: coalesced bursts, countdown ticks, sorting and filtering through the proxy."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from PySide6.QtCore import QPersistentModelIndex, Qt

from core.models import GoalState
from gui.goal_rules import StateFilter
from gui.models.goal_filter import GoalFilterProxy
from gui.models.goals_model import Column, GoalRole, GoalsModel
from tests.gui.factories import T0, goal, quota_paused


def make(now: Any = None) -> GoalsModel:
    return GoalsModel(lambda: now or T0, lambda: 3)


def test_a_batch_is_applied_in_one_insert_and_one_change(qtbot: Any) -> None:
    model = make()
    inserts: list[tuple[int, int]] = []
    changes: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, first, last: inserts.append((first, last)))
    model.dataChanged.connect(lambda a, b, *_: changes.append((a.row(), b.row())))
    model.apply([goal(f"p:{i}") for i in range(300)])
    assert inserts == [(0, 299)] and model.rowCount() == 300
    model.apply([goal(f"p:{i}", GoalState.PAUSED) for i in (5, 17, 250)])
    assert changes == [(5, 250)]
    assert model.goal("p:17").state is GoalState.PAUSED  # type: ignore[union-attr]


def test_the_bridge_coalesces_a_burst_per_loop_turn(qtbot: Any) -> None:
    from core.events import EventBus, GoalChanged
    from gui.bridge import Bridge

    class Engine:  # just enough engine for the bridge's bus subscription
        bus = EventBus()
        reads = None

    bridge = Bridge(Engine())  # type: ignore[arg-type]
    batches: list[list[str]] = []
    bridge.goals_changed.connect(lambda goals: batches.append([g.id for g in goals]))
    for i in range(1000):
        Engine.bus.publish(GoalChanged(goal(f"p:{i % 400}", attempts=i // 400), None))
    assert batches == []  # nothing until the loop turns
    qtbot.waitUntil(lambda: bool(batches), timeout=1000)
    assert len(batches) == 1 and len(batches[0]) == 400  # latest version of each goal, once


def test_sorting_happens_in_the_model_and_follows_changes(qtbot: Any) -> None:
    model = make()
    model.reset([quota_paused("p:a", 300), quota_paused("p:b", 100), quota_paused("p:c", 200)])
    model.sort(Column.NEXT, Qt.SortOrder.AscendingOrder)
    assert [g.id for g in model.goals()] == ["p:b", "p:c", "p:a"]
    persistent = QPersistentModelIndex(model.index(0, 0))  # a selection on p:b
    moves: list[str] = []
    model.layoutChanged.connect(lambda *_: moves.append("layout"))
    model.apply([quota_paused("p:b", 400)])  # its key moved: re-sorted once
    assert [g.id for g in model.goals()] == ["p:c", "p:a", "p:b"]
    assert moves == ["layout"] and persistent.row() == 2  # the selection follows its goal
    model.apply([quota_paused("p:b", 400, title="renamed")])  # same key: no re-sort
    assert moves == ["layout"]
    model.sort(Column.NEXT, Qt.SortOrder.DescendingOrder)
    assert [g.id for g in model.goals()] == ["p:b", "p:a", "p:c"]


def test_tick_refreshes_only_the_countdown_column(qtbot: Any) -> None:
    now = [T0]
    model = GoalsModel(lambda: now[0], lambda: 3)
    model.reset([goal("p:0"), quota_paused("p:1", 90), goal("p:2")])
    assert model.needs_tick()
    assert model.index(1, Column.NEXT).data() == "in 1:30"
    changes: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(lambda a, b, *_: changes.append((a.row(), a.column(), b.row(),
                                                               b.column())))
    model.tick(T0 + timedelta(seconds=30))
    assert changes == [(1, Column.NEXT, 1, Column.NEXT)]
    assert model.index(1, Column.NEXT).data() == "in 1:00"
    model.reset([goal("p:0")])
    assert not model.needs_tick()


def test_columns_and_roles(qtbot: Any) -> None:
    model = make()
    model.reset([quota_paused("codex:1", 60, title="Refactor", attempts=1,
                              pause_detail="5-hour limit")])
    row = [model.index(0, c).data() for c in Column]
    assert row == ["Refactor", "codex", "paused", "quota: 5-hour limit", "on", "in 1:00",
                   "1/3", model.index(0, Column.CHANGED).data()]
    assert model.index(0, Column.AUTO).data(Qt.ItemDataRole.CheckStateRole) == (
        Qt.CheckState.Checked)
    assert model.flags(model.index(0, Column.AUTO)) & Qt.ItemFlag.ItemIsUserCheckable
    assert model.index(0, Column.TITLE).data(Qt.ItemDataRole.ToolTipRole) == "Refactor\ncodex:1"
    assert model.index(0, Column.STATE).data(Qt.ItemDataRole.AccessibleTextRole) == (
        "State: paused")
    model.reset([goal("p:1", GoalState.DONE)])
    assert not model.flags(model.index(0, Column.AUTO)) & Qt.ItemFlag.ItemIsUserCheckable


def test_proxy_sorts_and_filters(qtbot: Any) -> None:
    model = make()
    model.reset([
        goal("p:run", title="beta run"), quota_paused("p:soon", 30, title="alpha soon"),
        quota_paused("p:late", 3000, title="gamma late"), goal("p:done", GoalState.DONE,
                                                               title="delta done"),
    ])
    proxy = GoalFilterProxy()
    proxy.setSourceModel(model)

    def order() -> list[str]:
        return [proxy.index(r, 0).data(GoalRole).id for r in range(proxy.rowCount())]

    proxy.sort(Column.NEXT, Qt.SortOrder.AscendingOrder)
    assert order()[:2] == ["p:soon", "p:late"]
    proxy.sort(Column.TITLE, Qt.SortOrder.AscendingOrder)
    assert order() == ["p:soon", "p:run", "p:done", "p:late"]
    proxy.set_state_filter(StateFilter.WAITING)
    assert order() == ["p:soon", "p:late"]
    proxy.set_text("gamma")
    assert order() == ["p:late"]
    proxy.set_state_filter(StateFilter.ALL)
    proxy.set_text("")
    assert len(order()) == 4
    model.upsert(goal("p:soon", GoalState.RUNNING, title="alpha soon"))
    proxy.set_state_filter(StateFilter.WAITING)
    assert order() == ["p:late"]  # dynamic filter follows state changes
