"""Where Goalkeeper keeps things: platformdirs behind one function, ``GOALKEEPER_HOME`` over all.

With ``GOALKEEPER_HOME`` set every directory lives under it (``config.toml`` directly in it), so a
demo, a test or a second profile is one variable away. Paths are computed on every call, never
cached at import time, so tests and subprocesses that change the environment see their own.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from platformdirs import PlatformDirs

from core.atomic import private_dir, tighten_tree
from core.i18n import _

log = logging.getLogger(__name__)

APP_NAME = "Goalkeeper"
# AF_UNIX socket paths are limited to 108 bytes on Linux and 104 on macOS.
_MAX_SOCKET_PATH = 100


@dataclass(frozen=True)
class Paths:
    config_dir: Path
    data_dir: Path
    log_dir: Path
    runtime_dir: Path
    #: the runtime directory is the fallback in the shared temporary directory (no
    #: ``XDG_RUNTIME_DIR``), where anyone could have made it first: it is checked, not trusted
    runtime_shared: bool = False

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def database(self) -> Path:
        return self.data_dir / "goalkeeper.db"

    @property
    def settings_snapshot(self) -> Path:
        """The settings as last validated, for commands that only read them
        (:mod:`core.settings.snapshot`)."""
        return self.data_dir / "settings-snapshot.json"

    @property
    def lock_file(self) -> Path:
        return self.data_dir / "host.lock"

    @property
    def host_file(self) -> Path:
        return self.data_dir / "host.json"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "goalkeeper.log"

    @property
    def socket_path(self) -> Path:
        candidate = self.runtime_dir / "control.sock"
        if len(os.fsencode(candidate)) <= _MAX_SOCKET_PATH:
            return candidate
        digest = hashlib.sha256(os.fsencode(self.data_dir)).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"goalkeeper-{os.getuid()}-{digest}.sock"

    def ensure(self) -> list[Path]:
        """Create the directories, private (0700), and tighten what an older version or a loose
        umask left readable by others (files 0600, directories 0700), with one log note; returns
        what was tightened. Raises :class:`UnsafeDirectory` when the shared runtime fallback is
        not ours."""
        roots = list(dict.fromkeys((self.config_dir, self.data_dir, self.log_dir)))
        loose = [directory for directory in roots if private_dir(directory)]
        if self.runtime_shared:
            _ensure_shared_runtime(self.runtime_dir)
        elif private_dir(self.runtime_dir):
            loose.append(self.runtime_dir)
        loose += [path for root in [*roots, self.runtime_dir] for path in tighten_tree(root)]
        if loose:
            log.warning("tightened %d files and directories that others could read (files "
                        "0600, directories 0700), e.g. %s", len(loose), loose[0])
        return loose


class UnsafeDirectory(OSError):
    """The runtime directory in the shared temporary directory is a link or someone else's."""


def _ensure_shared_runtime(directory: Path) -> None:
    """``/tmp/goalkeeper-<uid>``: made by ``mkdir`` mode 0700 (never through a link), then
    checked to be a real directory owned by us — another user could have made it first and
    would then see (or fake) our control socket."""
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700)
    if check_owned(directory, directory=True) & 0o077:
        os.chmod(directory, 0o700)  # ours: tightened, not refused


def check_owned(path: Path, *, directory: bool) -> int:
    """Refuse (:class:`UnsafeDirectory`) ``path`` unless it is a real directory (or, with
    ``directory=False``, a socket) — not a link — owned by this user; returns its mode bits.
    The one check of the shared runtime fallback, for the host that makes it and the client
    that connects through it."""
    info = path.lstat()
    kind_ok = stat.S_ISDIR(info.st_mode) if directory else stat.S_ISSOCK(info.st_mode)
    if stat.S_ISLNK(info.st_mode) or not kind_ok:
        text = (_("{path} is not a directory (a link or a file): refusing to use it; remove "
                  "it, or set XDG_RUNTIME_DIR") if directory else
                _("{path} is not a socket (a link or a file): refusing to connect to it; "
                  "remove it, or set XDG_RUNTIME_DIR"))
        raise UnsafeDirectory(text.format(path=path))
    if info.st_uid != os.getuid():
        raise UnsafeDirectory(_("{path} belongs to another user (uid {uid}): refusing to use "
                                 "it; remove it, or set XDG_RUNTIME_DIR").format(
                                     path=path, uid=info.st_uid))
    return stat.S_IMODE(info.st_mode)


def check_socket(paths: Paths, socket_path: Path) -> None:
    """Before a client connects: the shared runtime fallback holding ``socket_path`` and the
    socket itself must be this user's, not links, and writable by nobody else — else another
    user could stand in for the host and read every request. Raises :class:`UnsafeDirectory`
    with the reason; a directory or socket that does not exist is left to the connection
    (nobody listens)."""
    shared_dir = paths.runtime_shared and socket_path.parent == paths.runtime_dir
    places = [(socket_path.parent, True)] if shared_dir else []
    for path, directory in [*places, (socket_path, False)]:
        try:
            mode = check_owned(path, directory=directory)
        except FileNotFoundError:
            return
        if mode & 0o022:
            raise UnsafeDirectory(_("{path} can be written by other users (mode {mode}): "
                                     "refusing to connect through it; remove it, or set "
                                     "XDG_RUNTIME_DIR").format(path=path, mode=f"{mode:04o}"))


def resolve_paths(environ: Mapping[str, str] | None = None) -> Paths:
    environ = os.environ if environ is None else environ
    home = environ.get("GOALKEEPER_HOME")
    if home:
        root = Path(home).expanduser().absolute()
        return Paths(root, root, root / "logs", root / "run")
    dirs = PlatformDirs(APP_NAME, appauthor=False)
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Paths(dirs.user_config_path, dirs.user_data_path, dirs.user_log_path,
                     Path(runtime) / APP_NAME)
    return Paths(dirs.user_config_path, dirs.user_data_path, dirs.user_log_path,
                 Path(tempfile.gettempdir()) / f"goalkeeper-{os.getuid()}", runtime_shared=True)
