"""Reading back the command lines Goalkeeper writes into other programs' files: a desktop
entry's ``Exec`` (the Desktop Entry Specification's quoting) and a systemd unit's
``ExecStart`` and ``Environment`` (systemd.service(5) "Command lines"), so that a test can
start the host exactly as the desktop or the service manager would."""

from __future__ import annotations

import shlex
from pathlib import Path


def unquote_desktop_exec(value: str) -> list[str]:
    """The reverse of the desktop entry spec's rules (string escapes, then quoting)."""
    text = value.replace("\\\\", "\\")  # string level: \\ is one backslash
    words: list[str] = []
    word: list[str] = []
    quoted = escaped = False
    for ch in text:
        if escaped:
            word.append(ch)
            escaped = False
        elif quoted and ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif ch == " " and not quoted:
            words.append("".join(word))
            word = []
        else:
            word.append(ch)
    words.append("".join(word))
    return [w.replace("%%", "%") for w in words]


def desktop_entry_exec(path: Path) -> list[str]:
    """The argv of a desktop entry's ``Exec`` key (its ``[Desktop Entry]`` group)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            return unquote_desktop_exec(line.removeprefix("Exec="))
    raise AssertionError(f"no Exec= in {path}")


def _systemd_words(value: str) -> list[str]:
    # C-style escapes inside double quotes read as a POSIX shell does; %% and $$ undone
    return [w.replace("%%", "%").replace("$$", "$") for w in shlex.split(value)]


def unit_command(path: Path) -> tuple[list[str], dict[str, str]]:
    """A unit's ``ExecStart`` argv and the variables its ``Environment`` lines set."""
    argv: list[str] | None = None
    environment: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key == "ExecStart":
            argv = _systemd_words(value)
        elif key == "Environment":
            for word in _systemd_words(value):
                name, _, setting = word.partition("=")
                environment[name] = setting
    assert argv is not None, f"no ExecStart= in {path}"
    return argv, environment
