"""The goals model: coalesced bursts, countdown ticks, sorting and filtering through the proxy."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from PySide6.QtCore import Qt

from core.models import GoalState
from gui.goal_rules import StateFilter
from gui.models.goal_filter import GoalFilterProxy
from gui.models.goals_model import Column, GoalRole, GoalsModel
from tests.gui.factories import T0, goal, quota_paused


def make(now: Any = None) -> GoalsModel:
    return GoalsModel(lambda: now or T0, lambda: 3)


def test_a_burst_is_applied_in_one_insert_and_one_change(qtbot: Any) -> None:
    model = make()
    inserts: list[tuple[int, int]] = []
    changes: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, first, last: inserts.append((first, last)))
    model.dataChanged.connect(lambda a, b, *_: changes.append((a.row(), b.row())))
    for i in range(300):
        model.upsert(goal(f"p:{i}"))
    assert model.rowCount() == 0  # nothing until the loop turns
    model.flush()
    assert inserts == [(0, 299)] and model.rowCount() == 300
    for i in (5, 17, 250):
        model.upsert(goal(f"p:{i}", GoalState.PAUSED))
    model.upsert(goal("p:5", GoalState.DONE))  # the later change of the same goal wins
    model.flush()
    assert changes == [(5, 250)]
    assert model.goal("p:5").state is GoalState.DONE  # type: ignore[union-attr]
    assert model.goal("p:17").state is GoalState.PAUSED  # type: ignore[union-attr]


def test_updates_flush_by_themselves(qtbot: Any) -> None:
    model = make()
    model.upsert(goal("p:1"))
    qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=1000)


def test_remove(qtbot: Any) -> None:
    model = make()
    model.reset([goal("p:1"), goal("p:2"), goal("p:3")])
    model.remove("p:2")
    model.flush()
    assert [g.id for g in model.goals()] == ["p:1", "p:3"]
    assert model.row_of("p:3") == 1


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
    model.flush()
    assert order() == ["p:late"]  # dynamic filter follows state changes
