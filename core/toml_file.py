"""A TOML file a person edits (``config.toml``, a pipeline goal file), read without surprises.

People save these with whatever their editor does: GBK from a Chinese Windows editor, UTF-16 from
Notepad's "Unicode", a UTF-8 byte-order mark, or by mistake a binary file; and ``tomllib``
recurses once per nested array. Read unchecked, each ended in a traceback and exit 1 (under the
systemd unit: a restart every 10 s, for ever). Here UTF-8 is read, with or without a BOM; the
rest is a :class:`TomlFileError` that says what was found and where:

* not UTF-8 text: ``FILE is not UTF-8 text (WHAT); save it as UTF-8``;
* a file over its size cap, arrays and tables nested deeper than
  :data:`~core.limits.MAX_TOML_DEPTH`, a string or key longer than
  :data:`~core.limits.MAX_TOML_VALUE_CHARS` (shown cut): ``FILE:LINE: …``.

Invalid TOML stays ``tomllib.TOMLDecodeError`` and a missing or unreadable file ``OSError``: each
caller already says those in its own words. Messages are English (``N_``); callers show them
through :func:`core.i18n.localized`. Nothing here writes: a refused file is left as it is.
"""

from __future__ import annotations

import codecs
import os
import tomllib
from pathlib import Path
from typing import Any

from core.i18n import N_
from core.limits import MAX_SHOWN_CHARS, MAX_TOML_DEPTH, MAX_TOML_VALUE_CHARS, clip
from core.toml_lines import locate, nesting_line

#: byte-order marks of the encodings Windows editors call "Unicode" (UTF-32's first: its
#: little-endian mark begins with UTF-16's)
_OTHER_BOMS = ((codecs.BOM_UTF32_LE, N_("a UTF-32 byte-order mark")),
               (codecs.BOM_UTF32_BE, N_("a UTF-32 byte-order mark")),
               (codecs.BOM_UTF16_LE, N_("a UTF-16 byte-order mark")),
               (codecs.BOM_UTF16_BE, N_("a UTF-16 byte-order mark")))


class TomlFileError(ValueError):
    """A person-edited TOML file that cannot be used; the message names the file (and line)."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


def read_toml(path: Path, most_bytes: int) -> tuple[dict[str, Any], str]:
    """``path`` parsed, and its text (for :func:`core.toml_lines.locate`)."""
    text = read_text(path, most_bytes)
    return parse(text, path), text


def read_text(path: Path, most_bytes: int) -> str:
    """The file's text; at most ``most_bytes`` are read, whatever its size."""
    with open(path, "rb") as handle:
        raw = handle.read(most_bytes + 1)
        if len(raw) > most_bytes:
            size = os.fstat(handle.fileno()).st_size
            line = raw.count(b"\n", 0, most_bytes) + 1
            raise TomlFileError(path, N_(
                "{where}: the file is {size} bytes long; at most {most} bytes are accepted "
                "(reached on this line)").format(where=f"{path}:{line}", size=size,
                                                 most=most_bytes))
    return decode(raw, path)


def decode(raw: bytes, path: Path) -> str:
    """``raw`` as UTF-8 text, a leading byte-order mark dropped."""
    for bom, what in _OTHER_BOMS:
        if raw.startswith(bom):
            raise _not_utf8(path, what)
    raw = raw.removeprefix(codecs.BOM_UTF8)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(raw[:exc.start].decode("utf-8"))
        raise _not_utf8(path, N_("byte {byte} at line {line}, column {column}").format(
            byte=f"0x{raw[exc.start]:02x}", line=line, column=column)) from None
    nul = text.find("\0")  # valid UTF-8, but no text has it: UTF-16 without a mark, or binary
    if nul >= 0:
        line, column = _position(text[:nul])
        raise _not_utf8(path, N_("a NUL byte at line {line}, column {column}").format(
            line=line, column=column))
    return text


def parse(text: str, path: Path) -> dict[str, Any]:
    """``text`` parsed, once its nesting and the length of its strings are known to be sane.

    Raises ``tomllib.TOMLDecodeError`` for text that is not TOML."""
    line = nesting_line(text, MAX_TOML_DEPTH)
    if line is not None:  # before tomllib, which would recurse into a RecursionError
        raise _too_deep(path, line)
    data = tomllib.loads(text)
    _check_sizes(data, text, path)
    return data


def _check_sizes(data: dict[str, Any], text: str, path: Path) -> None:
    """Every key and string within the limits, and no deeper than allowed through dotted keys
    and table headers (``[a.b.c]`` nests without brackets). Walked without recursion."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        loc, node = stack.pop()
        if len(loc) > MAX_TOML_DEPTH:
            raise _too_deep(path, locate(text, loc))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            here = (*loc, key)
            for part in (key, value):
                if isinstance(part, str) and len(part) > MAX_TOML_VALUE_CHARS:
                    raise _too_long(path, locate(text, here), here, part)
            if isinstance(value, dict | list):
                stack.append((here, value))


def _position(before: str) -> tuple[int, int]:
    """1-based (line, column) of the character after ``before``."""
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def _where(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line else str(path)


def _not_utf8(path: Path, what: str) -> TomlFileError:
    return TomlFileError(path, N_("{file} is not UTF-8 text ({what}); save it as UTF-8").format(
        file=path, what=what))


def _too_deep(path: Path, line: int | None) -> TomlFileError:
    return TomlFileError(path, N_("{where}: arrays and tables are nested more than {most} "
                                  "levels deep").format(where=_where(path, line),
                                                        most=MAX_TOML_DEPTH))


def _too_long(path: Path, line: int | None, loc: tuple[Any, ...], text: str) -> TomlFileError:
    key = clip("".join(f"[{part + 1}]" if isinstance(part, int) else f".{part}"
                       for part in loc).lstrip("."), MAX_SHOWN_CHARS)
    return TomlFileError(path, N_(
        "{where}: {key}: {size} characters long, over the limit of {most} (it begins "
        "{start})").format(where=_where(path, line), key=key, size=len(text),
                           most=MAX_TOML_VALUE_CHARS, start=repr(clip(text, MAX_SHOWN_CHARS))))
