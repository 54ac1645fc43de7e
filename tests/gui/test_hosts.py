"""The Hosts dialog: the store's hosts as `goalkeeper hosts` lists them, kept current — on
this machine's SQLite store (its own host only) and on a real shared PostgreSQL store."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from core.clock import FakeClock
from core.engine import Engine
from core.models import GoalState, PauseReason
from gui.bridge import Bridge
from gui.dialogs.hosts import COLUMNS, HostsDialog
from gui.main_window import MainWindow
from tests.support.fakes import FakeProvider, later, until
from tests.support.gui import english_left, wait_signal

pytestmark = pytest.mark.asyncio
Make = Callable[..., Any]


def cells(dialog: HostsDialog) -> list[list[str]]:
    table = dialog.table
    return [[table.item(r, c).text() for c in range(table.columnCount())]  # type: ignore[union-attr]
            for r in range(table.rowCount())]


async def opened(qtbot: Any, bridge: Bridge) -> HostsDialog:
    dialog = HostsDialog(bridge)
    qtbot.addWidget(dialog)
    if not dialog.lines:
        await wait_signal(dialog.loaded)
    return dialog


async def test_one_machine_lists_its_own_host(make_engine: Make, fake: FakeProvider,
                                              qtbot: Any) -> None:
    fake.observe("fake:a", GoalState.IDLE, title="Refactor the parser")
    engine: Engine = await make_engine(fake, fenced=True)  # as the app's host is
    await until(lambda: engine.host_registry.registered, 10)
    bridge = Bridge(engine)
    try:
        dialog = await opened(qtbot, bridge)
        assert [tuple(dialog.table.horizontalHeaderItem(c).text()  # type: ignore[union-attr]
                      for c in range(len(COLUMNS)))] == [
            ("Host", "Kind", "State", "Last heartbeat", "Goals", "Accounts")]
        [row] = cells(dialog)
        assert row == [f"{engine.host_id} (this machine)", "host", "online", "0 s ago", "1",
                       "—"]
        assert dialog.heading.text().startswith("Hosts in the database ")
        assert dialog.table.item(0, 0).font().bold()  # type: ignore[union-attr]
    finally:
        await bridge.close()


async def test_a_bare_engine_has_no_host_and_says_so(bridge: Bridge, qtbot: Any) -> None:
    dialog = HostsDialog(bridge)
    qtbot.addWidget(dialog)
    await wait_signal(dialog.loaded)
    assert cells(dialog) == []
    assert dialog.heading.text().startswith("No host has registered in the database ")


async def test_the_hosts_of_a_shared_store_and_one_that_stops(make_host: Make, clock: FakeClock,
                                                              qtbot: Any) -> None:
    fa, fb = FakeProvider(clock), FakeProvider(clock)
    for fake, goal in ((fa, "fake:a"), (fa, "fake:a2"), (fb, "fake:b")):
        fake.observe(goal, GoalState.PAUSED, reason=PauseReason.QUOTA,
                     resets_at=later(clock.now(), hours=1))
    laptop = await make_host("laptop", fa)
    desk = await make_host("desk", fb, account="bob")
    await until(lambda: "fake:b" in laptop.shared_sync.others, 10)
    bridge = Bridge(laptop)
    try:
        dialog = await opened(qtbot, bridge)
        assert dialog.heading.text().startswith("Hosts in the shared store ")
        rows = {row[0]: row for row in cells(dialog)}
        assert rows["laptop (this machine)"][2:5] == ["online", "0 s ago", "2"]
        assert rows["laptop (this machine)"][5] == "fake=alice"
        assert rows["desk"][2:] == ["online", "0 s ago", "1", "fake=bob"]
        clock.advance(30)
        heard = asyncio.ensure_future(wait_signal(bridge.host_changed, 10))
        await desk.stop()  # it writes "stopped": laptop hears it and the dialog reloads
        assert await heard == ("desk",)
        await until(lambda: any(line.record.host_id == "desk" and not line.online
                                for line in dialog.lines), 3)  # sooner than the timer
        rows = {row[0]: row for row in cells(dialog)}
        assert rows["desk"][2].startswith("offline since ")
        assert rows["desk"][3] == "0 s ago"  # it beat as the clock moved, then stopped
        where = [row[0] for row in cells(dialog)].index("desk")
        tip = dialog.table.item(where, 2).toolTip()  # type: ignore[union-attr]
        assert ", pid " in tip and "running since" in tip
    finally:
        await bridge.close()


async def test_the_view_menu_opens_one_hosts_dialog(window: MainWindow) -> None:
    assert window.hosts_action.text() == "H&osts…"
    window.hosts_action.trigger()
    dialog = window.hosts_dialog
    assert dialog is not None and dialog.isVisible()
    await wait_signal(dialog.loaded)
    window.hosts_action.trigger()
    assert window.hosts_dialog is dialog
    await window.shutdown()


async def test_the_hosts_of_a_shared_store_in_chinese(make_host: Make, clock: FakeClock,
                                                      qtbot: Any, zh: None) -> None:
    laptop = await make_host("laptop", FakeProvider(clock))
    desk = await make_host("desk", FakeProvider(clock))
    await desk.stop()
    bridge = Bridge(laptop)
    try:
        dialog = await opened(qtbot, bridge)
        assert dialog.windowTitle() == "宿主"
        assert dialog.heading.text().startswith("共享存储 ")
        assert dialog.heading.text().endswith(" 中的宿主：")
        rows = {row[0]: row for row in cells(dialog)}
        assert rows["laptop（本机）"][2:4] == ["在线", "0 秒前"]
        assert rows["desk"][2].startswith("自 ") and rows["desk"][2].endswith(" 起离线")
        assert [dialog.table.horizontalHeaderItem(c).text()  # type: ignore[union-attr]
                for c in range(len(COLUMNS))] == ["宿主", "类型", "状态", "上次心跳", "目标",
                                                   "账户"]
        assert english_left(dialog) == []
    finally:
        await bridge.close()


async def test_a_store_that_cannot_be_read_is_said_and_the_last_lines_stay(
        bridge: Bridge, qtbot: Any) -> None:
    from core.store import StoreUnavailable

    dialog = HostsDialog(bridge)
    qtbot.addWidget(dialog)
    await wait_signal(dialog.loaded)

    async def down() -> list[Any]:
        raise StoreUnavailable("the shared store is not reachable: connection refused")

    bridge.hosts = down  # type: ignore[method-assign]
    dialog.reload()
    await wait_signal(dialog.loaded)
    assert dialog.heading.text() == ("The hosts cannot be read now: the shared store is not "
                                     "reachable: connection refused")
    assert cells(dialog) == []  # what was read before
