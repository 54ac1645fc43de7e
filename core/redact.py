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
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote

MASK = b"********"
#: secret values shorter than this are not masked (they would mangle ordinary text)
MIN_MASKED_LENGTH = 4
#: environment variables whose values are treated as secrets
SECRET_NAME = re.compile(r"(?i)(key|token|secret|passw|pwd|credential|auth(?!or)|cookie)")
#: shorter environment values are not taken for secrets (``AUTH_MODE=1``)
MIN_ENV_SECRET_LENGTH = 8


def forms(value: str) -> set[bytes]:
    """Every encoding of ``value`` that may end up in a file: raw UTF-8, JSON-escaped (ASCII
    and UTF-8), ``repr``-escaped, URL-quoted, and each line of a multi-line value."""
    texts = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
             repr(value)[1:-1], quote(value, safe=""), value.encode("unicode_escape").decode()}
    texts.update(line for line in value.splitlines() if line.strip())
    texts.update(line.strip() for line in value.splitlines() if line.strip())
    return {t.encode("utf-8") for t in texts if len(t.encode("utf-8")) >= MIN_MASKED_LENGTH}


class Redactor:
    """Masks secret values in text and bytes Goalkeeper is about to write anywhere."""

    def __init__(self, values: Iterable[str] | None = None) -> None:
        self._values: list[bytes] = []
        for value in values or []:
            self.add(value)

    def add(self, value: str) -> None:
        known = set(self._values)
        new = [f for f in forms(value) if f not in known]
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


def secret_environment(environ: Mapping[str, str]) -> list[str]:
    """The values of variables named like secrets (``OPENAI_API_KEY``, ``GH_TOKEN``...)."""
    return [value for name, value in environ.items()
            if SECRET_NAME.search(name) and len(value) >= MIN_ENV_SECRET_LENGTH]


#: every secret this process knows of (keyring values a run loaded, the host's secret-looking
#: environment): the store and the log formatter mask them in all they write
KNOWN = Redactor()


def remember(values: Iterable[str]) -> None:
    for value in values:
        KNOWN.add(value)
