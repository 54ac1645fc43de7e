"""The CLI checks the shared runtime fallback (``/tmp/goalkeeper-<uid>``, used when
``XDG_RUNTIME_DIR`` is unset) before it connects to the host's control socket (issue 21): a
directory or socket that is a link, another user's, or writable by others is refused with a
precise message and exit 2, and nothing connects to it."""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cli.common import EXIT_USAGE, CliError, Context
from core.paths import Paths, UnsafeDirectory, check_socket


def _fallback(tmp_path: Path) -> Paths:
    """Paths whose runtime directory is the shared fallback, under ``tmp_path``."""
    runtime = tmp_path / f"goalkeeper-{os.getuid()}"
    return Paths(tmp_path / "c", tmp_path / "d", tmp_path / "l", runtime, runtime_shared=True)


@contextlib.contextmanager
def listening(path: Path) -> Iterator[socket.socket]:
    """A socket listening at ``path`` that counts who connected (nothing is accepted)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        server.listen(4)
        server.setblocking(False)
        yield server
    finally:
        server.close()


def connected(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def ask(paths: Paths) -> CliError:
    ctx = Context(argparse.Namespace(), paths, request_timeout=0.2)
    with pytest.raises(CliError) as caught:
        ctx.ask_host({"op": "ping"})
    return caught.value


def test_a_private_fallback_is_connected_to(tmp_path: Path) -> None:
    paths = _fallback(tmp_path)
    paths.runtime_dir.mkdir(mode=0o700)
    with listening(paths.socket_path) as server:
        os.chmod(paths.socket_path, 0o600)
        check_socket(paths, paths.socket_path)  # no refusal
        error = ask(paths)  # the listener never answers: not responding, after a connection
        assert error.code != EXIT_USAGE
        assert connected(server)


def test_a_fallback_that_is_a_link_is_refused_without_connecting(tmp_path: Path) -> None:
    paths = _fallback(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    paths.runtime_dir.symlink_to(elsewhere)
    with listening(elsewhere / "control.sock") as server:
        error = ask(paths)
        assert error.code == EXIT_USAGE
        assert str(error) == (f"{paths.runtime_dir} is not a directory (a link or a file): "
                              "refusing to use it; remove it, or set XDG_RUNTIME_DIR")
        assert not connected(server)


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_a_fallback_others_can_write_is_refused_without_connecting(tmp_path: Path,
                                                                  mode: int) -> None:
    paths = _fallback(tmp_path)
    paths.runtime_dir.mkdir()
    os.chmod(paths.runtime_dir, mode)
    with listening(paths.socket_path) as server:
        os.chmod(paths.socket_path, 0o600)
        error = ask(paths)
        assert error.code == EXIT_USAGE
        assert str(error) == (f"{paths.runtime_dir} can be written by other users (mode "
                              f"{mode:04o}): refusing to connect through it; remove it, or set "
                              "XDG_RUNTIME_DIR")
        assert not connected(server)


def test_a_socket_others_can_write_is_refused(tmp_path: Path) -> None:
    paths = _fallback(tmp_path)
    paths.runtime_dir.mkdir(mode=0o700)
    with listening(paths.socket_path) as server:
        os.chmod(paths.socket_path, 0o666)
        error = ask(paths)
        assert error.code == EXIT_USAGE
        assert "control.sock can be written by other users (mode 0666)" in str(error)
        assert not connected(server)


def test_a_socket_that_is_a_link_is_refused(tmp_path: Path) -> None:
    paths = _fallback(tmp_path)
    paths.runtime_dir.mkdir(mode=0o700)
    with listening(tmp_path / "real.sock") as server:
        paths.socket_path.symlink_to(tmp_path / "real.sock")
        error = ask(paths)
        assert error.code == EXIT_USAGE
        assert str(error).startswith(f"{paths.socket_path} is not a socket (a link or a file)")
        assert not connected(server)


@pytest.mark.skipif(os.getuid() != 0, reason="making a directory someone else's needs root")
def test_a_fallback_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    paths = _fallback(tmp_path)
    paths.runtime_dir.mkdir(mode=0o700)
    os.chown(paths.runtime_dir, 4321, 4321)
    with pytest.raises(UnsafeDirectory, match=r"belongs to another user \(uid 4321\)"):
        check_socket(paths, paths.socket_path)


def test_no_fallback_yet_means_no_host(tmp_path: Path) -> None:
    paths = _fallback(tmp_path)
    error = ask(paths)
    assert error.code == 5  # EXIT_NO_HOST: nothing there, nothing refused
