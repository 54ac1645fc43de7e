"""``goalkeeper store migrate --to URL``: a local store copied into a shared one, verifiably
(counts and a checksum, in one transaction), the local file untouched."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import psycopg
import pytest

from core.paths import Paths
from core.store.postgres import PostgresStore
from core.store.sqlite import SqliteStore
from tests.store.support import T0
from tests.support.store import local_store, run


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_local_store_is_copied_verifiably_and_left_as_it_is(
        paths: Paths, pg_url: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOALKEEPER_HOST_ID", "laptop")
    monkeypatch.setenv("GOALKEEPER_ACCOUNT", "team")
    local_store(paths)
    local = SqliteStore(paths.database)  # two approved goal files: this host's, another's
    local.set_meta("pipeline-approved:laptop:digest", "ab" * 32)
    local.set_meta("pipeline-approved:desk:digest", "cd" * 32)
    local.close()
    before = digest(paths.database)
    code, reply = run(capsys, "store", "migrate", "--to", pg_url, "--json")
    assert code == 0, reply
    assert {k: reply["copied"][k] for k in ("goals", "history", "readings", "series",
                                           "approvals")} == {
        "goals": 3, "history": 43, "readings": 1, "series": 30, "approvals": 1}
    assert len(reply["copied"]["checksum"]) == 64
    assert digest(paths.database) == before  # the local file was only read
    shared = PostgresStore(pg_url, read_only=True)
    try:
        assert {g.id: g.host for g in shared.list_goals()} == {
            "fake:0": "laptop", "fake:1": "laptop", "fake:2": "laptop"}
        copied = shared.get_goal("fake:1")  # the steering went along
        assert copied is not None and copied.steering.resume_slot
        assert copied.steering.no_reset_note == "credits 1"
        assert copied.steering.budget["fake:5h"].spent == 1.5
        assert [r.event for r in shared.history("fake:1", 3)] == ["e39", "e38", "e37"]
        assert shared.latest_reading("team", "fake:5h") is not None
        assert len(shared.series("fake:5h", account="team")) == 30
        assert shared.get_meta("pipeline-approved:laptop:digest") == "ab" * 32
        assert shared.get_meta("pipeline-approved:desk:digest") is None
    finally:
        shared.close()
    # a second copy would duplicate: refused, and nothing is written
    code, out = run(capsys, "store", "migrate", "--to", pg_url)
    assert code == 1 and "already in the shared store" in out.err
    with psycopg.connect(pg_url) as con:
        assert con.execute("SELECT count(*) FROM history").fetchone() == (43,)


def test_readings_are_filed_under_the_account_a_previous_start_recorded(
        paths: Paths, pg_url: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from core.store import HostRecord

    monkeypatch.setenv("GOALKEEPER_HOST_ID", "laptop")
    monkeypatch.setenv("GOALKEEPER_ACCOUNT", "team")  # what the settings alone would say
    local_store(paths)
    shared = PostgresStore(pg_url)  # this host started once: the provider named its account
    shared.beat_host(HostRecord("laptop", "daemon", "laptop", 7, T0, T0, 1,
                                accounts={"fake": "fake:0123abcd"}))
    shared.close()
    code, reply = run(capsys, "store", "migrate", "--to", pg_url, "--json")
    assert code == 0, reply
    shared = PostgresStore(pg_url, read_only=True)
    try:
        assert shared.latest_reading("fake:0123abcd", "fake:5h") is not None
        assert shared.latest_reading("team", "fake:5h") is None
        assert len(shared.series("fake:5h", account="fake:0123abcd")) == 30
    finally:
        shared.close()


def test_a_copy_that_does_not_verify_is_not_committed(
        paths: Paths, pg_url: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from core.store import migrate

    local_store(paths)
    real = migrate._write_rows

    def lossy(target: Any, con: Any, rows: Any) -> Any:
        written, lost = real(target, con, rows)
        return migrate.Rows(written.goals, written.history[1:], written.readings,
                            written.series), lost

    monkeypatch.setattr(migrate, "_write_rows", lossy)
    code, out = run(capsys, "store", "migrate", "--to", pg_url)
    assert code == 1 and "does not match" in out.err and "nothing was copied" in out.err
    with psycopg.connect(pg_url) as con:
        assert con.execute("SELECT count(*) FROM goals").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM history").fetchone() == (0,)


def test_a_password_in_the_target_is_refused(paths: Paths,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    local_store(paths)
    code, out = run(capsys, "store", "migrate", "--to", "postgresql://me:pw@db/goals")
    assert code == 2 and "store-password" in out.err


def test_hosts_lists_this_machines_host_on_a_local_store(
        paths: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    from core.store import HostRecord

    local_store(paths)
    store = SqliteStore(paths.database)
    store.beat_host(HostRecord("laptop", "daemon", "laptop", 7, T0, T0, 1))
    store.close()
    code, reply = run(capsys, "hosts", "--json")
    assert code == 0
    assert [(h["host"], h["state"]) for h in reply["hosts"]] == [("laptop", "offline")]


def test_the_store_commands_on_a_shared_store(pg_url: str, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    PostgresStore(pg_url).close()  # a store a host migrated
    monkeypatch.setenv("GOALKEEPER_STORE_URL", pg_url)
    code, reply = run(capsys, "store", "--json")
    assert code == 0 and reply["shared"] and reply["schema_version"] >= 1
    code, out = run(capsys, "store", "restore")
    assert code == 2 and "pg_restore" in out.err
