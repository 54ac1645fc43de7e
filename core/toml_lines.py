"""Where a key sits in a TOML text: enough of a line scanner to point error messages at lines.

``tomllib`` keeps no positions, so :func:`locate` re-scans the text: it follows table headers
(``[name]``, ``[[name]]`` with their running index, dotted sub-tables) and ``key =`` lines, and
answers the line of the deepest part of a validation error's location it can find. It handles
the shapes goal files and ``config.toml`` use; anything it cannot place gets no line number
rather than a wrong one.

:func:`nesting_line` finds where inline arrays and tables nest too deeply, before ``tomllib``
(which recurses once per level) is given the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_ARRAY_TABLE = re.compile(r"^\s*\[\[\s*([^\]]+?)\s*\]\]\s*(#.*)?$")
_TABLE = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")
#: what can hold a bracket that does not nest: comments and the four kinds of string
#: (https://toml.io/en/v1.0.0#string), each matched whole; then the brackets themselves
_TOKEN = re.compile(r"#[^\n]*"
                    r'|"""(?:\\.|[^\\])*?"""' r"|'''.*?'''"
                    r"""|"(?:\\.|[^"\\\n])*"|'[^'\n]*'"""
                    r"|[\[{]|[\]}]", re.DOTALL)

Path = tuple[Any, ...]


def _split_key(raw: str) -> list[str]:
    parts = re.findall(r""""[^"]*"|'[^']*'|[^.\s]+""", raw)
    return [p[1:-1] if p[:1] in "\"'" else p for p in parts]


def scan(text: str) -> dict[Path, int]:
    """Map every table and key path to the 1-based line that defines it."""
    found: dict[Path, int] = {}
    counters: dict[tuple[str, ...], int] = {}
    current: Path = ()
    for number, line in enumerate(text.splitlines(), start=1):
        if match := _ARRAY_TABLE.match(line):
            name = tuple(_split_key(match.group(1)))
            index = counters.get(name, -1) + 1
            counters[name] = index
            current = (*name, index)
            found.setdefault(current, number)
        elif match := _TABLE.match(line):
            current = _resolve(tuple(_split_key(match.group(1))), counters)
            found.setdefault(current, number)
        elif match := _KEY.match(line):
            key = tuple(_split_key(match.group(1)))
            found.setdefault((*current, *key), number)
    return found


def _resolve(name: tuple[str, ...], counters: dict[tuple[str, ...], int]) -> Path:
    """``[source.env]`` means the env table of the *last* ``[[source]]`` element."""
    resolved: list[Any] = []
    for i, part in enumerate(name):
        resolved.append(part)
        prefix = name[: i + 1]
        if prefix in counters and i < len(name) - 1:
            resolved.append(counters[prefix])
    return tuple(resolved)


def locate(text: str, loc: Sequence[Any]) -> int | None:
    """The line of the longest prefix of ``loc`` found in ``text`` (None if none is)."""
    found = scan(text)
    path = tuple(loc)
    while path:
        if path in found:
            return found[path]
        path = path[:-1]
    return None


def nesting_line(text: str, most: int) -> int | None:
    """The 1-based line where arrays and inline tables first nest deeper than ``most``, or None.

    A table header's brackets count too (``[[a]]`` is two), so ``most`` must leave room for
    them; a string or comment is skipped whole. Unbalanced text is not judged here: tomllib
    says what is wrong with it.
    """
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > most:
                return text.count("\n", 0, match.start()) + 1
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
    return None
