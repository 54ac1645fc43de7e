"""Everything Goalkeeper writes about you is private whatever the umask (issue 21): files 0600,
directories 0700; looser ones left by an older version are tightened at start with one note;
the runtime fallback in the shared temporary directory is refused unless it is ours."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.logs import remove_handlers, setup_logging
from core.paths import Paths, UnsafeDirectory, resolve_paths
from core.store.backup import take_backup
from core.store.sqlite import SqliteStore
from tests.support.daemon import ROOT, running_daemon


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, int]:
    """Every file and directory under ``root`` (sockets and links aside) with its mode."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for directory, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(directory, name)
            try:
                info = path.lstat()
            except FileNotFoundError:  # a backup's temporary file, renamed meanwhile
                continue
            if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
                found[str(path.relative_to(root))] = stat.S_IMODE(info.st_mode)
    return found


def loose(found: dict[str, int], root: Path) -> dict[str, str]:
    return {name: oct(mode) for name, mode in found.items()
            if mode != (0o700 if (root / name).is_dir() else 0o600)}


def test_a_fresh_daemon_under_umask_022_writes_only_private_files(tmp_path: Path) -> None:
    paths = resolve_paths(os.environ)
    home = paths.data_dir
    with umask(0o022), running_daemon(tmp_path):
        deadline = time.monotonic() + 20
        while not Path(f"{paths.database}-wal").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        found = modes(home)
    print(sorted((name, oct(mode)) for name, mode in found.items()))
    for name in ("goalkeeper.db", "goalkeeper.db-wal", "goalkeeper.db-shm", "host.lock",
                 "host.json", "logs/goalkeeper.log", "logs", "run"):
        assert name in found, sorted(found)
    assert loose(found, home) == {}


def test_backups_and_the_store_are_private_under_umask_022(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with umask(0o022):
        store = SqliteStore(tmp_path / "data" / "goalkeeper.db")
        backup = take_backup(store, tmp_path / "data" / "backups",
                             datetime(2026, 1, 1, tzinfo=UTC))
        store.close()
    assert stat.S_IMODE(backup.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(backup.path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "data" / "goalkeeper.db").stat().st_mode) == 0o600


def test_the_log_file_and_its_rotations_are_private(tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "goalkeeper.log"
    with umask(0o022):
        handlers = setup_logging(log_file)
        try:
            handler = handlers[0]
            assert isinstance(handler, logging.handlers.RotatingFileHandler)
            logging.getLogger("core.test").info("one")
            handler.doRollover()
            logging.getLogger("core.test").info("two")
        finally:
            remove_handlers(handlers)
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in log_file.parent.iterdir()} == {
        "goalkeeper.log": "0o600", "goalkeeper.log.1": "0o600"}
    assert stat.S_IMODE(log_file.parent.stat().st_mode) == 0o700


def test_loose_directories_and_files_are_tightened_at_start_with_one_note(
        paths: Paths, caplog: pytest.LogCaptureFixture) -> None:
    paths.data_dir.mkdir(mode=0o755)
    os.chmod(paths.data_dir, 0o755)
    (paths.data_dir / "backups").mkdir()
    os.chmod(paths.data_dir / "backups", 0o755)
    paths.database.write_bytes(b"")
    os.chmod(paths.database, 0o644)
    with caplog.at_level(logging.INFO, logger="core.paths"):
        tightened = paths.ensure()
        assert paths.ensure() == []  # the second start has nothing to say
    assert {str(p.relative_to(paths.data_dir)) for p in tightened} == {
        ".", "backups", "goalkeeper.db"}
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "tightened 3 files and directories" in caplog.records[0].getMessage()
    assert loose(modes(paths.data_dir), paths.data_dir) == {}


def _fallback(tmp_path: Path) -> Paths:
    env = {"TMPDIR": str(tmp_path), "HOME": str(tmp_path / "home")}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMPDIR", env["TMPDIR"])
        import tempfile
        mp.setattr(tempfile, "tempdir", None)
        paths = resolve_paths(env)
    assert paths.runtime_shared
    assert paths.runtime_dir == tmp_path / f"goalkeeper-{os.getuid()}"
    return paths


def test_the_runtime_fallback_is_made_0700_under_any_umask(tmp_path: Path) -> None:
    paths = _fallback(tmp_path)
    with umask(0o022):
        paths.ensure()
    assert stat.S_IMODE(paths.runtime_dir.stat().st_mode) == 0o700


def test_a_runtime_fallback_that_is_a_link_is_refused(tmp_path: Path) -> None:
    paths = _fallback(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    paths.runtime_dir.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeDirectory, match=r"is not a directory \(a link or a file\): refusing"):
        paths.ensure()


@pytest.mark.skipif(os.getuid() != 0, reason="making a directory someone else's needs root")
def test_a_runtime_fallback_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    paths = _fallback(tmp_path)
    paths.runtime_dir.mkdir()
    os.chown(paths.runtime_dir, 4321, 4321)
    with pytest.raises(UnsafeDirectory, match=r"belongs to another user \(uid 4321\)"):
        paths.ensure()


def test_the_daemon_refuses_a_linked_runtime_fallback_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / f"goalkeeper-{os.getuid()}").symlink_to(tmp_path / "elsewhere")
    env = {k: v for k, v in os.environ.items()
           if k not in ("GOALKEEPER_HOME", "XDG_RUNTIME_DIR")}
    env.update(TMPDIR=str(tmp_path), HOME=str(tmp_path / "home"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_STATE_HOME=str(tmp_path / "state"),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    done = subprocess.run([sys.executable, "-m", "core", "daemon"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"goalkeeper-{os.getuid()} is not a directory (a link or a file): refusing" in (
        done.stderr)
    assert not any((tmp_path / "elsewhere").iterdir())


def test_a_daemon_tightens_an_older_loose_home_and_says_so_once(tmp_path: Path) -> None:
    paths = resolve_paths(os.environ)
    with umask(0o022):
        (paths.data_dir / "backups").mkdir(parents=True)
        (paths.data_dir / "backups" / "goalkeeper-20260101T000000Z.db").write_bytes(b"")
    with running_daemon(tmp_path):
        pass
    with running_daemon(tmp_path):  # a second start finds nothing to tighten
        pass
    assert loose(modes(paths.data_dir), paths.data_dir) == {}
    notes = [line for line in paths.log_file.read_text().splitlines() if "tightened" in line]
    assert len(notes) == 1 and "tightened 3 files and directories" in notes[0], notes


def test_an_atomic_write_makes_new_directories_private_and_leaves_others_alone(
        tmp_path: Path) -> None:
    from core.atomic import atomic_write_text

    theirs = tmp_path / "dot-claude"  # another program's directory (~/.claude, ~/.config/...)
    with umask(0o022):
        theirs.mkdir()
        atomic_write_text(theirs / "settings.json", "{}", mode=0o644)
        atomic_write_text(tmp_path / "ours" / "deeper" / "state.json", "{}")
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o755
    assert stat.S_IMODE((theirs / "settings.json").stat().st_mode) == 0o644
    assert loose(modes(tmp_path / "ours"), tmp_path / "ours") == {}


def test_tightening_keeps_the_owners_bits(tmp_path: Path) -> None:
    from core.atomic import tighten

    script = tmp_path / "step.sh"
    script.write_text("#!/bin/sh\n")
    os.chmod(script, 0o755)
    assert tighten(script) and stat.S_IMODE(script.stat().st_mode) == 0o700
    assert not tighten(script)  # nothing left to take
