"""What the real PostgreSQL's refusals become: never a raw psycopg error. A role without CREATE
on schema public (PostgreSQL 15's default) or without privileges on the tables → a StoreError
naming the GRANT; a database that takes no writes (a standby, default_transaction_read_only) →
StoreUnavailable, which the report queue waits out and the heartbeat survives."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from core.store import StoreError, StoreThread, StoreUnavailable
from core.store.inbox import store_unavailable
from core.store.postgres import PostgresStore
from core.store.target import StoreTarget
from tests.store.support import goal, put
from tests.support.postgres import SUPERUSER


def dbname(url: str) -> str:
    return str(psycopg.conninfo.conninfo_to_dict(url)["dbname"])


def admin(url: str, sql: str) -> None:
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(sql)


@pytest.fixture
def plain(pg_url: str) -> Iterator[str]:
    """A login role that owns nothing: ``pg_url`` as that role."""
    role = "plain_" + dbname(pg_url)
    admin(pg_url, f'CREATE ROLE "{role}" LOGIN')
    yield role
    admin(pg_url, f'DROP OWNED BY "{role}"')
    admin(pg_url, f'DROP ROLE "{role}"')


def as_role(url: str, role: str) -> str:
    return url.replace(f"{SUPERUSER}@", f"{role}@", 1)


def test_a_role_without_create_on_schema_public_is_told_the_grant(pg_url: str,
                                                                  plain: str) -> None:
    url = as_role(pg_url, plain)
    with pytest.raises(StoreError) as refused:
        PostgresStore(url)
    assert not isinstance(refused.value, StoreUnavailable)
    assert f"GRANT CREATE ON SCHEMA public TO {plain}" in str(refused.value)
    PostgresStore(pg_url).close()  # the owner creates the tables; the role may not use them
    with pytest.raises(StoreError) as refused:
        PostgresStore(url).list_goals()
    assert "permission denied for table" in str(refused.value)
    assert f"ON ALL TABLES IN SCHEMA public TO {plain}" in str(refused.value)
    admin(pg_url, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "
                  f'"{plain}"')
    store = PostgresStore(url)
    put(store, goal())
    assert [g.id for g in store.list_goals()] == ["fake:a"]
    store.close()


def test_a_database_that_takes_no_writes_is_unavailable_not_a_bug(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    put(store, goal("fake:a"))
    store.close()
    admin(pg_url, f'ALTER DATABASE "{dbname(pg_url)}" SET default_transaction_read_only = on')
    # (what a standby says too)
    store = PostgresStore(pg_url)
    try:
        assert [g.id for g in store.list_goals()] == ["fake:a"]
        with pytest.raises(StoreUnavailable) as down:
            put(store, goal("fake:b"))
        assert "read-only transaction" in str(down.value)
        assert store_unavailable(down.value) is not None  # the report queue waits it out
    finally:
        store.close()


def test_a_store_thread_still_opening_the_shared_store_is_unavailable(tmp_path: Path) -> None:
    thread = StoreThread(tmp_path / "goalkeeper.db",
                         target=StoreTarget(tmp_path / "goalkeeper.db",
                                            "postgresql://me@127.0.0.1:1/goals"))

    async def ask() -> Any:
        try:
            return await thread.run(lambda s: s.list_goals())
        finally:
            await thread.close()

    with pytest.raises(StoreUnavailable, match="not open yet"):
        asyncio.run(ask())
