"""The store contract suite runs every test against both stores: SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.store.base import Store
from core.store.postgres import PostgresStore
from core.store.sqlite import SqliteStore, open_read_only
from tests.support.store import Opener


@pytest.fixture(params=["sqlite", "postgres"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def opener(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Opener]:
    """Opens connections to one fresh store of the parametrised kind (each one a "host")."""
    opened: list[Store] = []
    url = request.getfixturevalue("pg_url") if kind == "postgres" else None

    def _open(host_id: str | None = None, track: bool = True, **kw: Any) -> Store:
        store: Store
        if url is not None:
            store = PostgresStore(url, **kw)
        elif kw.get("read_only"):
            store = open_read_only(tmp_path / "goalkeeper.db")
        else:
            store = SqliteStore(tmp_path / "goalkeeper.db", **kw)
        store.host_id = host_id
        if track:
            opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


@pytest.fixture
def store(opener: Opener) -> Store:
    return opener()
