"""JSON from files other programs write, refused by depth before it is parsed.

``json.loads`` recurses once per level: a 50,000-deep ``~/.claude.json`` or transcript line
raised ``RecursionError`` — not a ``ValueError``, so it escaped the readers' handlers as a
traceback (issue 21). :func:`loads` measures the nesting first (strings left out) and raises
:class:`TooDeep`, a ``ValueError``, so every reader's "not valid JSON" path handles it.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

#: arrays and objects inside one another: Claude's and Codex's files need about 10
MAX_JSON_DEPTH = 128
#: a JSON file read whole (``~/.claude.json``, a session's process file, an index): a larger
#: one is refused unread — parsed, it would cost the host several times its size
MAX_JSON_FILE_BYTES = 64 << 20

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class TooDeep(ValueError):
    """JSON nested deeper than :data:`MAX_JSON_DEPTH`."""


def depth(raw: bytes) -> int:
    """How deep the arrays and objects of ``raw`` nest (brackets inside strings not counted)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH:
        return 0  # cannot be too deep: not worth measuring
    brackets = _STRING.sub(b"", raw).translate(None, _BRACKETS)
    return max(accumulate(1 if b in b"[{" else -1 for b in brackets), default=0)


def loads(raw: bytes | str) -> Any:
    """``json.loads(raw)``, refusing (:class:`TooDeep`) nesting deeper than the limit."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    found = depth(data)
    if found > MAX_JSON_DEPTH:
        raise TooDeep(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return json.loads(raw)


class TooLarge(ValueError):
    """A JSON file larger than :data:`MAX_JSON_FILE_BYTES`."""


def load_file(path: Path) -> Any:
    """:func:`loads` of a whole file, refusing (:class:`TooLarge`, unread) one over
    :data:`MAX_JSON_FILE_BYTES` — the per-file bound, as :mod:`core.providers.lines` is the
    per-line one."""
    with open(path, "rb") as handle:
        raw = handle.read(MAX_JSON_FILE_BYTES + 1)
    if len(raw) > MAX_JSON_FILE_BYTES:
        raise TooLarge(f"larger than {MAX_JSON_FILE_BYTES} bytes")
    return loads(raw)
