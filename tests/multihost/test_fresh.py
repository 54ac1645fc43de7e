"""Two hosts starting on a fresh database at the same instant: one migrates it, the other waits
and finds it current; both register and see each other."""

from __future__ import annotations

from typing import Any

import psycopg

from core.store.pg_schema import SCHEMA_VERSION
from tests.support.multihost import wait_for


def test_two_hosts_migrating_a_fresh_database_at_once(hosts: Any, pg_url: str,
                                                      tmp_path: Any) -> None:
    go = tmp_path / "go"
    a, b = hosts("alpha"), hosts("bravo")
    a.goals({"fake:a": {"state": "paused", "reason": "user"}})
    b.goals({"fake:b": {"state": "paused", "reason": "user"}})
    a.start(wait_for_file=go)
    b.start(wait_for_file=go)
    wait_for(lambda: len(list(tmp_path.glob("go.*"))) == 2, what="both hosts waiting")
    go.write_text("go")  # both open the fresh database at once
    a.ready()
    b.ready()
    with psycopg.connect(pg_url) as con:
        assert con.execute("SELECT version FROM goalkeeper_schema").fetchall() == [
            (SCHEMA_VERSION,)]
    states = wait_for(lambda: (h := {r["host"]: r["state"] for r in a.cli_json("hosts")["hosts"]})
                      and len(h) == 2 and h, what="both hosts registered")
    assert states == {"alpha": "online", "bravo": "online"}
    goals = {g["id"]: g["host"] for g in b.cli_json("status")["goals"]}
    assert goals == {"fake:a": "alpha", "fake:b": "bravo"}
    for host in (a, b):
        assert "Traceback" not in host.log.read_text()
