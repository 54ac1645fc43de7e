"""``goalkeeper demo`` on a shared store (its GOALKEEPER_HOME names one): a second machine
watches the first one's demo — and a throw-away demo never writes into the shared store."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from tests.support.multihost import ROOT, wait_for

DEMO = ("demo", "--headless", "--period", "6", "--step", "0.5", "--timeout", "90")


def test_two_machines_watch_one_demo(hosts: Any, pg_url: str) -> None:
    a, b = hosts("alpha"), hosts("bravo")
    first = subprocess.Popen([sys.executable, "-m", "core", *DEMO], env=a.env(), cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: {g["host"] for g in b.cli_json("status")["goals"]
                          if g["id"].startswith("demo:")} == {"alpha"}, 60,
                 "bravo shows alpha's demo goals")
        second = b.cli(*DEMO, timeout=120)  # watches alpha's demo to its end
        assert second.returncode == 0, second.stdout
        assert "All auto-resume goals are done" in second.stdout
        out, _ = first.communicate(timeout=120)
        assert first.returncode == 0, out
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(10)
    states = {g["id"]: (g["host"], g["state"]) for g in b.cli_json("status")["goals"]}
    assert states["demo:refactor"] == ("alpha", "done")
    assert states["demo:tests"] == ("alpha", "done")
    # a demo on a throw-away directory ignores store_url: nothing of it is in the shared store
    env = {k: v for k, v in a.env().items() if k != "GOALKEEPER_HOME"}
    throwaway = subprocess.run([sys.executable, "-m", "core", *DEMO[:-1], "3"], env=env | {
        "GOALKEEPER_STORE_URL": pg_url, "GOALKEEPER_HOST_ID": "throwaway"}, cwd=ROOT,
        capture_output=True, text=True, timeout=60)
    assert "Demo data kept in" in throwaway.stdout
    assert "throwaway" not in {h["host"] for h in b.cli_json("hosts")["hosts"]}
