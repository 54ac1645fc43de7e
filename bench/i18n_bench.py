"""How long showing stored English in Chinese takes (``core.i18n.localized``).

    .venv/bin/python bench/i18n_bench.py [--count 1000]

Prints: loading the zh_CN catalogue; reading ``--count`` distinct stored reasons of four shapes
(a plain template, a resume-policy pause, a manual resume's three ``"; "``-joined notes, a
failure with free text) cold and then again (cached); and as many texts nothing fits. A history
table shows each distinct reason once; repeats come from the cache.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import i18n

SHAPES: dict[str, Callable[[int], str]] = {
    "template": lambda i: f"quota not recovered: codex:{i}h, codex:weekly",
    "policy pause": lambda i: (f"reserve: fake:{i} 70 % used, 30 % kept for you — paused until "
                               "the window resets"),
    "manual notes": lambda i: (
        f"manual resume (was paused: quota); ignoring the reserve: w{i} 75 % used, 30 % kept "
        "for you; outside the allowed hours (Mon-Fri 19:00-08:00 (UTC)): a manual resume is "
        "always allowed"),
    "free text": lambda i: f"could not start: boom {i}",
}


def timed(texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        i18n.localized(text)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    start = time.perf_counter()
    i18n.use_language("zh_CN")
    print(f"load the zh_CN catalogue: {(time.perf_counter() - start) * 1000:.1f} ms")
    per = args.count // len(SHAPES)
    texts = []
    for name, make in SHAPES.items():
        batch = [make(i) for i in range(per)]
        texts += batch
        print(f"{per} distinct '{name}' reasons, cold: {timed(batch):.1f} ms")
    print(f"all {len(texts)} again (cached): {timed(texts):.2f} ms")
    nothing = [f"nothing fits here, number {i}" for i in range(args.count)]
    print(f"{args.count} texts nothing fits: {timed(nothing):.1f} ms")
    print(f"example: {i18n.localized(texts[2 * per])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
