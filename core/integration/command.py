"""The command line that runs *this* installation, and how to write it into other programs' files.

A menu entry, an autostart entry, a systemd unit and a launchd agent all start Goalkeeper later,
from an environment that may have no ``PATH`` to it (a venv, pipx, ``uv tool``, a bundle), so
they get an absolute path: the bundle's executable when frozen (PyInstaller), else the
``goalkeeper`` script beside this interpreter (a venv's or pipx's ``bin``), else ``goalkeeper``
on ``PATH``, else this interpreter with ``-m core``.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

SCRIPT = "goalkeeper"


@dataclass(frozen=True)
class Runtime:
    """What decides the command: the interpreter (or bundle executable), whether it is frozen,
    and how to look a program up on ``PATH``. Tests pass their own."""

    executable: str
    frozen: bool
    which: Callable[[str], str | None]

    @classmethod
    def current(cls) -> Runtime:
        return cls(sys.executable, bool(getattr(sys, "frozen", False)), shutil.which)


def goalkeeper_argv(runtime: Runtime | None = None) -> list[str]:
    """Absolute argv prefix that runs the ``goalkeeper`` command of this installation."""
    runtime = runtime or Runtime.current()
    executable = Path(runtime.executable)
    if runtime.frozen:
        return [str(executable.absolute())]
    beside = executable.parent / SCRIPT
    if beside.is_file():
        return [str(beside.absolute())]
    found = runtime.which(SCRIPT)
    if found:
        return [str(Path(found).absolute())]
    return [str(executable.absolute()), "-m", "core"]


# -- desktop entries (https://specifications.freedesktop.org/desktop-entry-spec/latest/exec-variables.html)

_DESKTOP_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def desktop_exec(argv: Sequence[str]) -> str:
    """``argv`` as the value of a desktop entry's ``Exec`` key.

    An argument with a reserved character is double-quoted, with ``"`` `` ` `` ``$`` ``\\``
    backslash-escaped inside; ``%`` is doubled (field codes); then the string-level escaping
    of the value doubles every backslash once more (the spec: four for a literal one).
    """
    parts = []
    for arg in argv:
        text = arg.replace("%", "%%")
        if not text or any(ch in _DESKTOP_RESERVED for ch in text):
            text = '"' + "".join("\\" + ch if ch in '"`$\\' else ch for ch in text) + '"'
        parts.append(text)
    return _desktop_string(" ".join(parts))


def desktop_string(value: str) -> str:
    """A plain string value of a desktop entry (``TryExec``): ``\\`` and controls escaped."""
    return _desktop_string(value)


def _desktop_string(value: str) -> str:
    return (value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
            .replace("\r", "\\r"))


# -- systemd units (systemd.service(5) "Command lines", systemd.unit(5) "Specifiers")

def systemd_exec(argv: Sequence[str]) -> str:
    """``argv`` as an ``ExecStart=`` value: each word double-quoted with C-style escapes, ``%``
    doubled (specifiers) and ``$`` doubled (no variable expansion)."""
    return " ".join(systemd_quote(arg, escape_dollar=True) for arg in argv)


def systemd_quote(value: str, escape_dollar: bool = False) -> str:
    text = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    text = text.replace("\n", "\\n").replace("\t", "\\t")
    if escape_dollar:
        text = text.replace("$", "$$")
    return f'"{text}"'
