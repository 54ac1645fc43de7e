"""SIGKILL loops: a host killed at random moments, again and again, while commands act on it.

After every kill the database passes SQLite's integrity check and nothing acknowledged is lost:
the last auto-resume toggle a command got an answer for is the one stored (synchronous=FULL).
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.support.faults import daemon, run, status_json

KILLS = 5


def quick_check(db: Path) -> str:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(con.execute("PRAGMA quick_check").fetchone()[0])
    finally:
        con.close()


@pytest.mark.slow
def test_sigkill_loop_keeps_the_store_sound_and_acknowledged_actions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    rng = random.Random(11)
    acknowledged: bool | None = None
    for round_ in range(KILLS):
        with daemon(home) as proc:
            for _ in range(rng.randint(1, 4)):
                wanted = rng.random() < 0.5
                out = run(home, "auto-resume", "demo:docs", "on" if wanted else "off", "--json")
                if out.returncode == 0:
                    acknowledged = wanted
            time.sleep(rng.uniform(0, 0.3))  # kill at some moment of its own work
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        assert quick_check(home / "goalkeeper.db") == "ok", f"after kill {round_ + 1}"
        goals = {g["id"]: g for g in status_json(home)["goals"]}
        assert goals["demo:docs"]["auto_resume"] is acknowledged, f"after kill {round_ + 1}"
    history = json.loads(run(home, "history", "demo:docs", "--json", "--limit", "1000").stdout)
    assert history  # every start recorded its own rows, none lost the store
