"""One desktop-app run for the ``desktop`` tests, in its own process (Qt decides once per
process whether a tray exists, so each scenario needs a fresh one).

A goal waits for quota on a fake clock; the clock moves past its resume time; the real scheduler
resumes it and the app notifies through whatever backend it picked. Prints one JSON line.
The language is chosen as ``goalkeeper gui`` chooses it (``LANG``, the setting); the line also
carries the tray menu's and the window's texts.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core import i18n  # noqa: E402
from core.clock import FakeClock  # noqa: E402
from core.host import Host  # noqa: E402
from core.models import GoalState, PauseReason  # noqa: E402
from core.notices import Kind  # noqa: E402
from core.paths import resolve_paths  # noqa: E402
from core.settings import Settings  # noqa: E402
from gui import i18n as gui_i18n  # noqa: E402
from gui.app import make_application  # noqa: E402
from gui.session import GuiSession  # noqa: E402
from tests.support.fakes import FakeProvider, until  # noqa: E402


async def scenario() -> dict[str, object]:
    home = tempfile.mkdtemp(prefix="gk-desktop-")
    paths = resolve_paths({"GOALKEEPER_HOME": home})
    clock = FakeClock()
    fake = FakeProvider(clock)
    fake.observe("fake:a", GoalState.PAUSED, reason=PauseReason.QUOTA, auto_resume=True,
                 resets_at=clock.now() + timedelta(seconds=60), title="Refactor the parser")
    host = Host(paths, Settings(resume_jitter_seconds=0), [fake], "gui", clock, random.Random(1))
    session = GuiSession(host)
    await session.start()
    try:
        assert session.notifier is not None
        # the scheduler sleeps until the deadline (the store keeper sleeps on the clock too)
        await until(lambda: host.engine.scheduler.next_wake is not None)
        clock.advance(106)
        for _ in range(100):  # a sleep begun after the jump wakes on the next step
            if host.engine.goals["fake:a"].state is GoalState.RUNNING:
                break
            await asyncio.sleep(0.05)
            clock.advance(1)
        await until(lambda: host.engine.goals["fake:a"].state is GoalState.RUNNING)
        notifier = session.notifier
        await until(lambda: any(n.kind is Kind.RESUMED for n in notifier.recent))
        await asyncio.sleep(1.0)  # let the D-Bus call leave the process
        menu: list[str] = []
        if session.tray is not None:
            session.tray.rebuild_menu()
            menu = session.tray.menu_texts()
        return {"backend": notifier.backend.name, "tray": session.tray is not None,
                "sent": [n.title for n in notifier.recent], "menu": menu,
                "title": session.window.windowTitle(),
                "actions": [a.text() for a in session.window.goal_actions.all]}
    finally:
        await session.stop()


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    i18n.setup(resolve_paths(os.environ).config_file, os.environ)
    app = make_application()
    assert isinstance(app, QApplication)
    gui_i18n.install(app)
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        result = runner.run(scenario())
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
