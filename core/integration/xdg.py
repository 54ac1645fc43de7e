"""The XDG base directories, by the specification's rules rather than by habit.

A variable that is unset, empty or not an absolute path is ignored and the default under
``$HOME`` is used ("If an implementation encounters a relative path in any of these variables it
should consider the path invalid and ignore it",
https://specifications.freedesktop.org/basedir-spec/latest/).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


class NoHomeDirectory(Exception):
    """Neither the XDG variable nor ``$HOME`` gives an absolute directory."""


def home_dir(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME", "")
    if not home or not Path(home).is_absolute():
        raise NoHomeDirectory("HOME is not set to an absolute directory")
    return Path(home)


def _base(environ: Mapping[str, str], variable: str, default: str) -> Path:
    value = environ.get(variable, "")
    if value and Path(value).is_absolute():
        return Path(value)
    return home_dir(environ) / default


def data_home(environ: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME``, default ``~/.local/share``."""
    return _base(environ, "XDG_DATA_HOME", ".local/share")


def config_home(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME``, default ``~/.config``."""
    return _base(environ, "XDG_CONFIG_HOME", ".config")


def is_xdg_platform(platform: str) -> bool:
    """Whether desktops on ``platform`` (a ``sys.platform`` value) follow the XDG specs."""
    return not (platform == "darwin" or platform.startswith(("win", "cygwin", "msys")))
