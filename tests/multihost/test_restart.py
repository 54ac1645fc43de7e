"""The shared database restarted in the middle of a run: the hosts keep watching, say the store
is unavailable, resume nothing while they cannot commit a claim, and lose nothing — the reports
made meanwhile are stored once it is back, and the goal that fell due is resumed once."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.support.multihost import wait_for


def _health(host: Any) -> dict[str, Any]:
    reply = host.ping()
    return reply["health"]["store"] if reply else {}


def test_a_database_restart_loses_nothing_and_resumes_once(hosts: Any, pg_server: Any) -> None:
    a, b = hosts("alpha"), hosts("bravo")
    due = datetime.now(UTC) + timedelta(seconds=14)
    a.goals({"fake:run": {"state": "paused", "reason": "user", "windows": ["fake:5h"]},
             "fake:due": {"state": "paused", "reason": "quota", "windows": ["fake:5h"],
                          "resets_at": due.isoformat()}})
    for host in (a, b):
        host.start()
    for host in (a, b):
        host.ready()
    assert a.ask({"op": "resume", "goal": "fake:run"})["outcome"] == "resumed"
    pg_server.halt("fast")
    try:
        a.command({"finish": "fake:run"})  # the run ends while the store is down
        a.quota([{"window": "fake:5h", "used": 40, "limit_reached": False}])
        wait_for(lambda: _health(a).get("available") is False, 20, "alpha: store unavailable")
        assert "shared store" in _health(a)["reason"]
        out = b.cli("status")
        assert out.returncode != 0 and "the goals cannot be read" in out.stdout, out.stdout
        assert "store unavailable" in out.stdout  # what bravo's host says of it
        while datetime.now(UTC) < due + timedelta(seconds=3):
            time.sleep(0.2)
        assert [s["goal"] for s in a.starts()] == ["fake:run"]  # nothing resumed meanwhile
    finally:
        pg_server.start()
    wait_for(lambda: _health(a).get("available") is True, 60, "alpha: store available")
    wait_for(lambda: [s["goal"] for s in a.starts()] == ["fake:run", "fake:due"], 60,
             "fake:due resumed after the restart")
    goals = {g["id"]: g["state"] for g in b.cli_json("status")["goals"]}
    assert goals == {"fake:run": "done", "fake:due": "running"}
    history = a.cli_json("history", "--limit", "1000")
    assert [r["goal"] for r in history if r["event"] == "done"] == ["fake:run"]
    resumed = [r["goal"] for r in history
               if r["event"] == "resume_requested" and r["outcome"] == "resumed"]
    assert sorted(resumed) == ["fake:due", "fake:run"]
    time.sleep(1)
    assert len(a.starts()) == 2 and b.starts() == []
