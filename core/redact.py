"""Masking secret values in everything Goalkeeper writes — in every encoding they can take.

A secret can reach a file in more forms than its raw bytes: JSON escapes a newline as ``\\n`` and
(by default) a non-ASCII character as ``\\u00e9``; a log line holds one line of a multi-line key;
``repr`` writes ``\\xe9``; a URL quotes it. :func:`forms` lists them all and :class:`Redactor`
replaces each (longest first) by :data:`MASK`. :class:`StreamMasker` does the same for data that
arrives in chunks (a step's output streamed to disk), holding back just enough bytes that a secret
split across two chunks is still caught.

Secrets come from the keyring (a step's ``secrets``), from goal-file ``env`` references and from
the host's own environment (:func:`secret_environment`: variables named like keys, tokens and
passwords), and the logging filter in :mod:`core.logs` applies the same masking to every log
line and the daemon's output.

Only secret *values* are masked, never places: a variable named for a place (``PWD``, ``OLDPWD``,
``HOME``, ``*_DIR``, ``*_PATH``, ``SSH_AUTH_SOCK``…) is never a secret, and a value that is a path
of the file system (:func:`is_path`) or shorter than :data:`MIN_KNOWN_LENGTH` is never
remembered for the store and the log. ``PWD`` once matched "pwd": the directory the host was
started from was masked in the database, and every Claude session under it lost its cwd (issue
19).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote

MASK = b"********"
#: secret values shorter than this are not masked (they would mangle ordinary text)
MIN_MASKED_LENGTH = 4
#: what the store and the log mask (:data:`KNOWN`) is at least this long, every form of it
MIN_KNOWN_LENGTH = 8
#: environment variables whose values are treated as secrets: the name says key, token, secret,
#: password or credential anywhere (``OPENAI_API_KEY``, ``PGPASSWORD``, ``GH_TOKEN``) — a
#: keyboard, keymap or keyring is not a key; ``pwd``, ``auth`` and ``cookie`` count only as the
#: name's last part after an underscore (``MYSQL_PWD``, npm's ``_AUTH``, ``SESSION_COOKIE``),
#: never ``PWD``/``OLDPWD`` (directories) nor ``SSH_AUTH_SOCK``/``AUTH_MODE``
SECRET_NAME = re.compile(
    r"(?i)(key(?!board|map|ring)|token|secret|passw|credential)|_(pwd|auth|cookie)$")
#: variables named for a place are never secrets, whatever else the name says
#: (``PASSWORD_STORE_DIR``, ``AWS_SHARED_CREDENTIALS_FILE``, ``SSH_KEY_PATH``)
PLACE_NAME = re.compile(
    r"(?i)^(pwd|oldpwd|home|path|tmpdir|shell)$|_(dir|dirs|home|path|paths|file|sock|socket)$")
#: shorter environment values are not taken for secrets (``AUTH_MODE=1``)
MIN_ENV_SECRET_LENGTH = MIN_KNOWN_LENGTH
#: an absolute Windows path: ``C:\…``, ``C:/…`` or ``\\server\share``
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")


def forms(value: str, min_length: int = MIN_MASKED_LENGTH) -> set[bytes]:
    """Every encoding of ``value`` that may end up in a file: raw UTF-8, JSON-escaped (ASCII
    and UTF-8), ``repr``-escaped, URL-quoted, and each line of a multi-line value — each at
    least ``min_length`` bytes long."""
    texts = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
             repr(value)[1:-1], quote(value, safe=""), value.encode("unicode_escape").decode()}
    texts.update(line for line in value.splitlines() if line.strip())
    texts.update(line.strip() for line in value.splitlines() if line.strip())
    return {t.encode("utf-8") for t in texts if len(t.encode("utf-8")) >= min_length}


def is_path(text: str, existing: bool = False) -> bool:
    """Whether ``text`` is one path of the file system, as a cwd or a file is written: one line,
    absolute (``/…``, ``~/…``, ``C:\\…``), and with no blank in it unless it exists — or, with
    ``existing``, only when it names something that exists here. The store never masks inside
    a path (it is *used*: a cwd, a file), and a secret-looking value that names an existing
    file or directory is no secret (``GOOGLE_APPLICATION_CREDENTIALS``); a base64 key that
    merely starts with ``/`` still is."""
    if not text or len(text) > 4096 or any(c in text for c in "\n\r\0"):
        return False
    if not (text.startswith(("/", "~/")) or text == "~" or _WINDOWS_ABSOLUTE.match(text)):
        return False
    if not existing and not any(c.isspace() for c in text):
        return True
    try:
        return os.path.lexists(os.path.expanduser(text))
    except (OSError, ValueError):
        return False


def secret_name(name: str) -> bool:
    """Whether an environment variable (or a goal file's ``env`` entry) named ``name`` holds a
    secret (:data:`SECRET_NAME`, never a :data:`PLACE_NAME`)."""
    return bool(SECRET_NAME.search(name)) and not PLACE_NAME.search(name)


class Redactor:
    """Masks secret values in text and bytes Goalkeeper is about to write anywhere.

    ``min_length``: shorter forms of a value are not masked (:data:`KNOWN` uses
    :data:`MIN_KNOWN_LENGTH`; a step's own output redactor masks down to 4 bytes)."""

    def __init__(self, values: Iterable[str] | None = None,
                 min_length: int = MIN_MASKED_LENGTH) -> None:
        self._values: list[bytes] = []
        self.min_length = min_length
        for value in values or []:
            self.add(value)

    def add(self, value: str) -> None:
        known = set(self._values)
        new = [f for f in forms(value, self.min_length) if f not in known]
        if new:
            self._values.extend(new)
            self._values.sort(key=len, reverse=True)  # longer first: no partial leftovers

    def __bool__(self) -> bool:
        return bool(self._values)

    @property
    def longest(self) -> int:
        return len(self._values[0]) if self._values else 0

    def bytes(self, data: bytes) -> bytes:
        for value in self._values:
            if value in data:
                data = data.replace(value, MASK)
        return data

    def text(self, data: str) -> str:
        return self.bytes(data.encode()).decode("utf-8", "replace") if self._values else data


class StreamMasker:
    """Masks a byte stream chunk by chunk; :meth:`feed` returns what is safe to write now."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._held = b""

    def feed(self, chunk: bytes) -> bytes:
        data = self.redactor.bytes(self._held + chunk)
        keep = max(self.redactor.longest - 1, 0)
        if keep == 0 or len(data) <= keep:
            self._held = data if keep else b""
            return b"" if keep else data
        self._held = data[-keep:]
        return data[:-keep]

    def finish(self) -> bytes:
        rest, self._held = self.redactor.bytes(self._held), b""
        return rest


def maskable(value: str) -> bool:
    """Whether ``value`` may be masked in stored data and logs: long enough to be a secret and
    no path (a path masked in the store breaks what uses it)."""
    return len(value) >= MIN_KNOWN_LENGTH and not is_path(value, existing=True)


def secret_environment(environ: Mapping[str, str]) -> list[str]:
    """The values of variables named like secrets (``OPENAI_API_KEY``, ``GH_TOKEN``...); never
    a place (``PWD``, ``*_DIR``…), a short value or a path."""
    return [value for name, value in environ.items() if secret_name(name) and maskable(value)]


#: every secret this process knows of (keyring values a run loaded, the host's secret-looking
#: environment): the store and the log formatter mask them in all they write
KNOWN = Redactor(min_length=MIN_KNOWN_LENGTH)


def remember(values: Iterable[str]) -> None:
    """Mask ``values`` in the store and the log from now on — those :func:`maskable` only."""
    for value in values:
        if maskable(value):
            KNOWN.add(value)
