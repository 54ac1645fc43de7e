"""The resume history: pages, scope, live rows, CSV export."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core.clock import FakeClock
from core.commands import Pause, Resume
from core.engine import Engine
from core.goals.changes import note_row
from core.models import Outcome, Trigger
from gui.bridge import Bridge
from gui.models.history_model import HColumn
from gui.widgets.history_view import HistoryView
from tests.support.fakes import until


@pytest_asyncio.fixture
async def history(engine: Engine, clock: FakeClock, bridge: Bridge, qtbot: Any) -> HistoryView:
    """230 extra rows: 200 for fake:a, 30 for fake:b, one second apart."""
    def fill(store: Any) -> None:
        for i in range(230):
            goal = "fake:a" if i < 200 else "fake:b"
            store.append_history(note_row(goal, "resume_requested", clock.now(),
                                          outcome=Outcome.DEFERRED, reason=f"row {i}",
                                          trigger=Trigger.MANUAL, origin="cli"))
            clock.advance(1)

    await engine.store.run(fill)
    view = HistoryView(bridge, page_size=50)
    qtbot.addWidget(view)
    await view.load_page(0)
    return view


def texts(view: HistoryView, column: HColumn) -> list[str]:
    model = view.model
    return [model.index(r, column).data() for r in range(model.rowCount())]


@pytest.mark.asyncio
async def test_pages_newest_first(history: HistoryView, engine: Engine) -> None:
    total = history.total
    assert total >= 230 and history.model.rowCount() == 50
    assert texts(history, HColumn.REASON)[0] == "row 229"
    assert history.page_label.text() == f"Page 1 of {-(-total // 50)} · rows 1–50 of {total}"
    assert not history.prev_button.isEnabled() and history.next_button.isEnabled()
    history.next_button.click()
    await until(lambda: history.page == 1)
    assert texts(history, HColumn.REASON)[0] == "row 179"
    history.last_button.click()
    await until(lambda: history.page == history.pages - 1)
    assert history.model.rowCount() == total - 50 * (history.pages - 1)
    assert not history.next_button.isEnabled() and history.prev_button.isEnabled()
    history.first_button.click()
    await until(lambda: history.page == 0)
    assert texts(history, HColumn.TRIGGER)[0] == "manual (CLI)"
    assert texts(history, HColumn.OUTCOME)[0] == "deferred"


@pytest.mark.asyncio
async def test_scope_follows_the_selected_goal(history: HistoryView) -> None:
    history.set_selected_goal("fake:b")
    assert history.scope_combo.itemText(1) == "Selected goal (Write the docs)"
    loads = history.loads
    history.scope_combo.setCurrentIndex(1)
    await until(lambda: history.loads > loads)
    assert history.scope_goal == "fake:b"
    assert set(texts(history, HColumn.GOAL)) == {"fake:b"}
    assert history.total == 31  # 30 rows + its discovery
    loads = history.loads
    history.set_selected_goal("fake:a")  # following the table's selection
    await until(lambda: history.loads > loads)
    assert set(texts(history, HColumn.GOAL)) == {"fake:a"}
    loads = history.loads
    history.scope_combo.setCurrentIndex(0)
    await until(lambda: history.loads > loads)
    assert history.scope_goal is None and len(set(texts(history, HColumn.GOAL))) == 2


@pytest.mark.asyncio
async def test_new_rows_reload_the_first_page_but_not_later_ones(history: HistoryView,
                                                                 engine: Engine) -> None:
    total = history.total
    await engine.perform(Pause("fake:a"))  # two rows: the transition and the request
    await until(lambda: history.total == total + 2)
    assert texts(history, HColumn.EVENT)[:2] == ["pause requested", "paused"]
    assert texts(history, HColumn.TRIGGER)[0] == "manual (window)"
    await history.load_page(2)
    first = texts(history, HColumn.REASON)[0]
    await engine.perform(Resume("fake:a"))
    await until(lambda: history.newer > 0)
    assert "newer" in history.page_label.text()
    assert texts(history, HColumn.REASON)[0] == first  # rows do not shift under the reader


@pytest.mark.asyncio
async def test_csv_export_of_the_whole_scope(history: HistoryView, tmp_path: Path) -> None:
    path = tmp_path / "out" / "history.csv"
    count = await history.export_csv(path)
    assert count == history.total
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == count
    assert rows[0]["reason"] == "row 229" and rows[0]["trigger"] == "manual"
    assert rows[0]["origin"] == "cli" and rows[0]["at_utc"].endswith("Z")
    assert rows[0]["local_time"]
    (tmp_path / "a-file").write_text("")
    messages: list[tuple[str, bool]] = []
    history.message.connect(lambda text, ok: messages.append((text, ok)))
    assert await history.export_csv(tmp_path / "a-file" / "history.csv") == 0
    assert messages[-1][0].startswith("Could not export the history to ")
    assert messages[-1][1] is False


@pytest.mark.asyncio
async def test_no_reload_starts_after_shutdown(history: HistoryView, engine: Engine) -> None:
    # the host records its own stopping after the window shut down: a reload timer started
    # then fired after the event loop had stopped and stepped a task with no loop running
    await engine.perform(Pause("fake:a"))
    await until(lambda: history._reload_timer.isActive() or history.loads > 1)
    await history.shutdown()
    assert not history._reload_timer.isActive()
    await engine.perform(Resume("fake:a"))
    await engine.drain()
    assert not history._reload_timer.isActive() and history._tasks.pending == 0


def test_a_reload_timer_firing_outside_the_loop_starts_nothing(bridge: Bridge, qtbot: Any) -> None:
    view = HistoryView(bridge, page_size=50)
    qtbot.addWidget(view)
    view._on_reload_timer_timeout()  # no asyncio loop runs here, as between test phases
    assert view._tasks.pending == 0
