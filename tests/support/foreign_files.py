"""Person-edited TOML files as people's editors really save them (issue 19): GBK with a Chinese
comment (a Chinese Windows editor), UTF-16 with its byte-order mark (Notepad's "Unicode"), UTF-8
with a BOM, random bytes, 100,000-deep nesting, a string over the value limit, a 50 MB value.

Each case turns a valid TOML text (UTF-8, a Chinese comment on line 1) into the file's bytes, and
says what the refusal must contain (``{file}`` is the file's path), or None for a file that must be
read as it is (the BOM)."""

from __future__ import annotations

import codecs
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.limits import MAX_TOML_VALUE_CHARS

COMMENT = "# 中文注释：每天早上检查一次\n"  # GBK: 0xd6 0xd0 … at line 1, column 3
#: a value the limit refuses, and one so large the file's size cap refuses it first
LONG_CHARS = MAX_TOML_VALUE_CHARS + 10_000
HUGE_CHARS = 50_000_000


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[str, str], bytes]  # (valid text, a key that may hold a string) → bytes
    expected: str | None  # what the message says ({file}: the path), None: read normally

    def write(self, path: Path, text: str, key: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.make(text, key))
        return path


def _random(text: str, key: str) -> bytes:
    return random.Random(19).randbytes(4096)


def _deep(text: str, key: str) -> bytes:
    return (text + "deep = " + "[" * 100_000 + "]" * 100_000 + "\n").encode()


def _value(chars: int) -> Callable[[str, str], bytes]:
    return lambda text, key: (text + f'{key} = "' + "a" * chars + '"\n').encode()


CASES = [
    Case("gbk", lambda text, key: text.encode("gbk"),
         "{file} is not UTF-8 text (byte 0xd6 at line 1, column 3); save it as UTF-8"),
    Case("utf-16", lambda text, key: text.encode("utf-16"),
         "{file} is not UTF-8 text (a UTF-16 byte-order mark); save it as UTF-8"),
    Case("utf-8-bom", lambda text, key: codecs.BOM_UTF8 + text.encode(), None),
    Case("random-bytes", _random, "{file} is not UTF-8 text (byte 0x"),
    Case("deep-nesting", _deep, "{file}:{last}: arrays and tables are nested more than 32 "
                                "levels deep"),
    Case("long-value", _value(LONG_CHARS),
         "{file}:{last}: {key}: " + f"{LONG_CHARS} characters long, over the limit of "
         f"{MAX_TOML_VALUE_CHARS} (it begins 'aaa"),
    Case("50-mb-value", _value(HUGE_CHARS), "{file}:{last}: the file is 50000"),
]
IDS = [case.name for case in CASES]


def expected(case: Case, file: Path, text: str, key: str) -> str:
    """The message ``case`` must produce for ``file`` made from ``text`` (its new line is the
    one after the text's last)."""
    assert case.expected is not None
    return case.expected.format(file=file, last=text.count("\n") + 1, key=key)


def fingerprint(root: Path) -> dict[str, str]:
    """Every file under ``root`` with a hash of its bytes: what "nothing was touched" means."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}
