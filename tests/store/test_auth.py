"""The shared store's password: the keyring, a .pgpass or a service file — and TLS as libpq
defines it. A role with a password, on the test server, for these tests only."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import psycopg
import pytest

from core.redact import KNOWN, MASK
from core.store.base import StoreError, StoreUnavailable
from core.store.target import PASSWORD_SECRET, open_shared
from tests.support.fake_keyring import MemoryKeyring

PASSWORD = "pw-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def locked(pg_server: Any) -> Iterator[str]:
    """A role that must give its password, and a database of its own."""
    role = f"gk_pw_{os.getpid()}"
    hba = pg_server.data / "pg_hba.conf"
    original = hba.read_text()
    hba.write_text(f"local all {role} scram-sha-256\n" + original)
    with psycopg.connect(pg_server.url(), autocommit=True) as con:
        con.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
        con.execute(f"CREATE DATABASE {role} OWNER {role} TEMPLATE template0")
        con.execute("SELECT pg_reload_conf()")
    yield f"postgresql://{role}@/{role}?host={pg_server.root}&port={pg_server.port}"
    hba.write_text(original)
    with psycopg.connect(pg_server.url(), autocommit=True) as con:
        con.execute("SELECT pg_reload_conf()")
        con.execute(f"DROP DATABASE IF EXISTS {role} WITH (FORCE)")
        con.execute(f"DROP ROLE IF EXISTS {role}")


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def test_without_a_password_the_login_is_refused_and_says_where_one_goes(
        locked: str, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSFILE", "/nonexistent")
    with pytest.raises(StoreError, match="goalkeeper secret set store-password") as caught:
        open_shared(locked)
    assert not isinstance(caught.value, StoreUnavailable)  # a mistake, not an outage


def test_the_password_comes_from_the_keyring(locked: str, memory_keyring: MemoryKeyring,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSFILE", "/nonexistent")
    memory_keyring.set_password("Goalkeeper", PASSWORD_SECRET, PASSWORD)
    store = open_shared(locked)
    try:
        store.set_meta("k", "v")
        assert store.get_meta("k") == "v"
    finally:
        store.close()
    # a keyring value this process holds is masked wherever it might be written (logs)
    assert KNOWN.text(f"connect with {PASSWORD}") == f"connect with {MASK.decode()}"


def test_the_password_comes_from_a_pgpass_file(locked: str, tmp_path: Path,
                                               memory_keyring: MemoryKeyring,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"*:*:*:*:{PASSWORD}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    open_shared(locked).close()  # the keyring is empty: libpq found it


def test_a_service_file_names_the_whole_connection(locked: str, tmp_path: Path,
                                                   memory_keyring: MemoryKeyring,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    parts = psycopg.conninfo.conninfo_to_dict(locked)
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[goals]\nhost={parts['host']}\nport={parts['port']}\n"
                        f"dbname={parts['dbname']}\n"
                        f"user={parts['user']}\npassword={PASSWORD}\n")
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    store = open_shared("postgresql:///?service=goals")
    try:
        assert store.describe() == "the shared store service goals"
    finally:
        store.close()


def test_sslmode_is_libpqs(pg_server: Any) -> None:
    """Over TCP (libpq ignores sslmode on a Unix socket); the test server has no TLS."""
    url = pg_server.tcp_url(pg_server.create_database())
    with pytest.raises(StoreUnavailable, match="SSL"):
        open_shared(url + "?sslmode=require")
    open_shared(url + "?sslmode=prefer").close()
