"""Three host processes, one goal: 1,000 racing resume requests from all three give one start,
carried out by the goal's owner; an action from another machine's CLI reaches the owner."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.support.multihost import HostProc, wait_for

REQUESTS = 1000


def test_a_thousand_racing_resumes_from_three_hosts_give_one_start(hosts: Any) -> None:
    a, b, c = hosts("alpha"), hosts("bravo"), hosts("charlie")
    a.goals({"fake:race": {"state": "paused", "reason": "user", "windows": ["fake:5h"]}})
    for host in (a, b, c):
        host.start()
    for host in (a, b, c):
        host.ready()
    wait_for(lambda: any(g["id"] == "fake:race" for g in b.cli_json("status")["goals"]),
             what="bravo shows alpha's goal")

    def resume(i: int) -> str:
        host: HostProc = (a, b, c)[i % 3]
        return str(host.ask({"op": "resume", "goal": "fake:race"}).get("outcome"))

    with ThreadPoolExecutor(max_workers=24) as pool:
        outcomes = Counter(pool.map(resume, range(REQUESTS)))
    assert outcomes["resumed"] == 1, outcomes
    assert sum(outcomes.values()) == REQUESTS
    assert set(outcomes) <= {"resumed", "already_running", "already_resuming"}, outcomes
    assert [s["goal"] for s in a.starts()] == ["fake:race"]
    assert b.starts() == [] and c.starts() == []
    history = a.cli_json("history", "fake:race", "--limit", "1000")
    claims = [r for r in history if r["event"] == "resume_requested"]
    assert [r["outcome"] for r in claims].count("resumed") == 1
    assert {r["host"] for r in history} == {"alpha"}  # only the owner ever wrote its history
    origins = Counter(r["origin"] for r in claims)
    assert origins["host:bravo"] > 0 and origins["host:charlie"] > 0, origins

    # an action from another machine's command line: through the store, to the owner
    out = c.cli("pause", "fake:race", "--json")
    assert out.returncode == 0, out.stderr
    assert '"paused"' in out.stdout
    status = b.cli_json("status")
    goal = next(g for g in status["goals"] if g["id"] == "fake:race")
    assert goal["host"] == "alpha"
    wait_for(lambda: next(g for g in b.cli_json("status")["goals"]
                          if g["id"] == "fake:race")["state"] == "paused", 10)
