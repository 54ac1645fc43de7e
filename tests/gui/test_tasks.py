"""TaskKeeper: a failure reaches the excepthook, and nothing starts after close (CI saw a chart
load spawned while the window shut down run its step after the event loop had stopped)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.clock import FakeClock
from gui.main_window import MainWindow
from gui.tasks import TaskKeeper


@pytest.mark.asyncio
async def test_a_task_spawned_after_close_never_runs() -> None:
    keeper = TaskKeeper()
    ran: list[str] = []

    async def work(name: str) -> None:
        ran.append(name)

    await keeper.spawn(work("before"))
    await keeper.close()
    task = keeper.spawn(work("after"))
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled() and ran == ["before"] and keeper.pending == 0 and keeper.closed


@pytest.mark.asyncio
async def test_close_cancels_what_is_under_way() -> None:
    keeper = TaskKeeper()
    gate = asyncio.Event()
    task = keeper.spawn(gate.wait())
    await asyncio.sleep(0)
    await keeper.close()
    assert task.cancelled() and keeper.pending == 0


@pytest.mark.asyncio
async def test_the_chart_loads_nothing_once_the_window_has_shut_down(
        window: MainWindow, clock: FakeClock, qtbot: Any) -> None:
    panel = window.chart_panel
    await window.shutdown()
    loaded = panel.loaded
    panel.window_id = panel.window_id or "fake:5h"
    panel.reload()
    clock.advance(60)
    for _ in range(5):
        await asyncio.sleep(0)
    assert panel.loaded == loaded and panel._tasks.pending == 0
