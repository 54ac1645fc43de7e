"""A real PostgreSQL server for the tests: ``initdb`` + ``pg_ctl`` in a temporary directory.

It listens on a Unix socket in that directory and on 127.0.0.1 at a free port (TCP is where
libpq's ``sslmode`` applies), runs without fsync (a test server: ``-F``), and — when the tests
run as root, which PostgreSQL refuses — as the unprivileged user ``nobody`` (``runuser``).
One server per test session (``pg_server`` in tests/conftest.py); each test gets a fresh
database of its own (``pg_url``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg

SUPERUSER = "goalkeeper"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def find_bindir() -> Path | None:
    """The newest Debian server install (/usr/lib/postgresql/N/bin), else initdb on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


class PgServer:
    """One running server. Owns its directory (removed by :meth:`stop`)."""

    def __init__(self, bindir: Path, fsync: bool = False) -> None:
        self.bindir = bindir
        self.fsync = fsync  # the benchmark's server keeps a real server's durability
        self.root = Path(tempfile.mkdtemp(prefix="goalkeeper-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL will not run as root
            user = pwd.getpwnam("nobody")
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "nobody", "--"]
        self._databases = 0
        self.port = _free_port()

    def _run(self, *args: str, timeout: float = 60) -> None:
        subprocess.run([*self._as, *args], check=True, capture_output=True, timeout=timeout,
                       cwd=self.root)

    def init(self) -> PgServer:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U",
                  SUPERUSER, "--no-sync", "-E", "UTF8", "--locale=C")
        return self.start()

    def start(self) -> PgServer:
        options = (f"-k {self.root} -c listen_addresses=127.0.0.1 -p {self.port} "
                   f"{'' if self.fsync else '-F '}-c max_connections=200 "
                   "-c shared_buffers=16MB")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options, "-l",
                  str(self.log), "-w", "-t", "60", "start")
        return self

    def halt(self, mode: str = "fast") -> None:
        """Stop the server (the directory stays: :meth:`start` brings it back)."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self.halt("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{dbname}?host={self.root}&port={self.port}"

    def tcp_url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        self._databases += 1
        name = f"gk_{os.getpid()}_{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return name

    def drop_database(self, name: str) -> None:
        with contextlib.suppress(psycopg.Error), psycopg.connect(self.url(),
                                                                 autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
