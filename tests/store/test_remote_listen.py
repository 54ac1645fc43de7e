"""An action routed to another host from the command line, on a database that takes no LISTEN
(a standby: ``cannot execute LISTEN during recovery``): a message with the store's words and
exit 1, never a psycopg traceback (issue 21)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from psycopg import errors

import core.cli.remote as remote
from core.models import GoalState
from core.store import HostRecord
from core.store.postgres import PostgresStore
from tests.store.support import goal, put, row
from tests.support.store import run


class _Standby:
    """A real connection whose LISTEN fails as it does on a hot standby (all else passes)."""

    def __init__(self, con: Any, fail: type[psycopg.Error], text: str) -> None:
        self._con, self._fail, self._text = con, fail, text

    def execute(self, query: str, *args: Any) -> Any:
        if query.startswith("LISTEN"):
            raise self._fail(self._text)
        return self._con.execute(query, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)

    def __enter__(self) -> _Standby:
        return self

    def __exit__(self, *exc: object) -> None:
        self._con.close()


@pytest.mark.parametrize(("fail", "text", "shown"), [
    (errors.ReadOnlySqlTransaction, "cannot execute LISTEN during recovery",
     "is unavailable: cannot execute LISTEN during recovery"),
    (errors.InternalError_, "something odd\nDETAIL: more lines",
     "failed: something odd"),
])
def test_a_routed_action_on_a_standby_says_why_without_a_traceback(
        pg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        fail: type[psycopg.Error], text: str, shown: str) -> None:
    now = datetime.now(UTC)
    shared = PostgresStore(pg_url)
    try:
        shared.beat_host(HostRecord("bravo", "daemon", "bravo", 8, now, now, 1))
        shared.host_id = "bravo"
        put(shared, goal("fake:a", state=GoalState.RUNNING), row("fake:a", "discovered"))
    finally:
        shared.close()
    real = psycopg.connect
    monkeypatch.setattr(remote.psycopg, "connect",
                        lambda *a, **k: _Standby(real(*a, **k), fail, text))
    monkeypatch.setenv("GOALKEEPER_STORE_URL", pg_url)
    monkeypatch.setenv("GOALKEEPER_HOST_ID", "charlie")
    code, out = run(capsys, "pause", "fake:a")
    assert code == 1
    assert "Traceback" not in out.err and "psycopg" not in out.err
    assert shown in out.err, out.err
    assert "DETAIL" not in out.err
