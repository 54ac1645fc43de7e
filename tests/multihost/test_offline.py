"""An owner killed with SIGKILL: shown offline within its lease, its goals never touched by
another host — not resumed when due, and actions asked of them refused."""

from __future__ import annotations

import time
from typing import Any

from tests.support.multihost import soon, wait_for


def test_a_killed_owner_is_offline_within_its_lease_and_its_goals_wait(hosts: Any) -> None:
    a, b = hosts("alpha"), hosts("bravo")
    # the reset must pass while alpha is dead: far enough out for two host starts on a loaded
    # machine, and the wait below runs to it (not a fixed sleep)
    due_at = time.time() + 20
    a.goals({"fake:due": {"state": "paused", "reason": "quota", "windows": ["fake:5h"],
                          "resets_at": soon(due_at - time.time())},
             "fake:idle": {"state": "paused", "reason": "user", "windows": ["fake:5h"]}})
    for host in (a, b):
        host.start()
    for host in (a, b):
        host.ready()
    wait_for(lambda: {g["id"] for g in b.cli_json("status")["goals"]} >= {"fake:due",
                                                                          "fake:idle"})
    listed = {h["host"]: h for h in b.cli_json("hosts")["hosts"]}
    assert listed["alpha"]["state"] == "online" and listed["bravo"]["this_machine"]
    a.kill()
    killed_at = time.monotonic()
    wait_for(lambda: {h["host"]: h["state"] for h in b.cli_json("hosts")["hosts"]}["alpha"]
             == "offline", 10, "alpha offline")
    assert time.monotonic() - killed_at < 2 + 3  # the lease (2 s) and a CLI start or two
    status = b.cli_json("status")
    shown = {g["id"]: g["shown_state"] for g in status["goals"]}
    assert shown == {"fake:due": "host offline", "fake:idle": "host offline"}
    assert {h["host"]: h["state"] for h in status["hosts"]}["alpha"].startswith("offline since")
    out = b.cli("resume", "fake:idle")
    assert out.returncode == 4, out.stdout + out.stderr
    assert "host alpha offline since " in out.stdout
    ask = b.ask({"op": "resume", "goal": "fake:idle"})
    assert ask["outcome"] == "refused" and ask["reason"].startswith("host alpha offline since")
    # fake:due's reset passes with its owner dead: nobody resumes it
    assert a.starts() == [], "alpha resumed fake:due before it was killed: the reset came too soon"
    time.sleep(max(0.0, due_at - time.time()) + 2)
    assert a.starts() == [] and b.starts() == []
    goals = {g["id"]: g["state"] for g in b.cli_json("status")["goals"]}
    assert goals == {"fake:due": "paused", "fake:idle": "paused"}
    # the owner comes back: it resumes its own due goal, once
    a.start().ready()
    wait_for(lambda: a.starts(), 20, "alpha resumed its due goal")
    assert [s["goal"] for s in a.starts()] == ["fake:due"] and b.starts() == []
