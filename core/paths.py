"""Where Goalkeeper keeps things: platformdirs behind one function, ``GOALKEEPER_HOME`` over all.

With ``GOALKEEPER_HOME`` set every directory lives under it (``config.toml`` directly in it), so a
demo, a test or a second profile is one variable away. Paths are computed on every call, never
cached at import time, so tests and subprocesses that change the environment see their own.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from platformdirs import PlatformDirs

APP_NAME = "Goalkeeper"
# AF_UNIX socket paths are limited to 108 bytes on Linux and 104 on macOS.
_MAX_SOCKET_PATH = 100


@dataclass(frozen=True)
class Paths:
    config_dir: Path
    data_dir: Path
    log_dir: Path
    runtime_dir: Path

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def database(self) -> Path:
        return self.data_dir / "goalkeeper.db"

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

    def ensure(self) -> None:
        for directory in (self.config_dir, self.data_dir, self.log_dir):
            directory.mkdir(parents=True, exist_ok=True)
        self.runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.runtime_dir.stat().st_mode & 0o777 != 0o700:  # (a read-only fs: leave it)
            os.chmod(self.runtime_dir, 0o700)


def resolve_paths(environ: Mapping[str, str] | None = None) -> Paths:
    environ = os.environ if environ is None else environ
    home = environ.get("GOALKEEPER_HOME")
    if home:
        root = Path(home).expanduser().absolute()
        return Paths(root, root, root / "logs", root / "run")
    dirs = PlatformDirs(APP_NAME, appauthor=False)
    runtime = environ.get("XDG_RUNTIME_DIR")
    runtime_dir = (
        Path(runtime) / APP_NAME
        if runtime
        else Path(tempfile.gettempdir()) / f"goalkeeper-{os.getuid()}"
    )
    return Paths(dirs.user_config_path, dirs.user_data_path, dirs.user_log_path, runtime_dir)
