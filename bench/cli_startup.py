#!/usr/bin/env python3
"""How long the ``goalkeeper`` command takes to start, against a bare ``python -c pass``.

Run from anywhere (``python3 bench/cli_startup.py [--runs 11] [--venv PATH]``): it uses the
project's venv (``--venv``, else ``.venv`` at the top of the checkout as the README sets it up,
else the Python running this script). Both sides are whole processes from the same venv, run in
turn (``goalkeeper …``, ``python -c pass``, ``goalkeeper …``, …) so that both see the same
machine; the first pair of each case warms the page cache and is not counted.

The cases, each with no host running:

* ``--version``;
* ``status`` on an empty ``GOALKEEPER_HOME`` (no data), kept across the runs as a user's is —
  the uncounted first run validates the settings and leaves their snapshot
  (:mod:`core.settings.snapshot`), the counted ones read it;
* ``status`` on a store with five goals and three quota windows
  (``tests/support/status_store.py``), likewise;
* ``status, fresh home``: a new empty ``GOALKEEPER_HOME`` for every run (no snapshot: the
  settings validated by pydantic each time) — shown, without a target.

Prints each median, the median of the per-pair ratios, and the targets of issue 24:
``--version`` at most 3× and ``status`` at most 6× a bare interpreter.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the name shown, the arguments, the home ("empty", "store" or "fresh": a new one for every
#: run) and the most it may take as a multiple of a bare interpreter (None: no target)
CASES: tuple[tuple[str, list[str], str, float | None], ...] = (
    ("--version", ["--version"], "empty", 3.0),
    ("status", ["status"], "empty", 6.0),
    ("status, 5 goals", ["status"], "store", 6.0),
    ("status, fresh home", ["status"], "fresh", None),
)
SEED = ("import sys; from pathlib import Path; "
        "from tests.support.status_store import seed_status_home; "
        "seed_status_home(Path(sys.argv[1]))")


def venv_bin(given: Path | None) -> Path:
    for candidate in (given, ROOT / ".venv", Path(sys.prefix)):
        if candidate is not None and (candidate / "bin" / "goalkeeper").exists():
            return candidate / "bin"
    sys.exit("no venv with goalkeeper installed: pass --venv (see the README's set-up)")


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def pairs(command: list[str], bare: list[str], runs: int, home: str,
          python: str) -> tuple[list[float], list[float]]:
    ours: list[float] = []
    theirs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="gk-cli-bench-") as kept:
        if home == "store":
            subprocess.run([python, "-c", SEED, kept], check=True, cwd=ROOT)
        for _ in range(runs + 1):  # the first pair warms the page cache and is not counted
            with tempfile.TemporaryDirectory(prefix="gk-cli-bench-") as fresh:
                env = {**os.environ, "GOALKEEPER_HOME": fresh if home == "fresh" else kept}
                ours.append(timed(command, env))
                theirs.append(timed(bare, env))
    return ours[1:], theirs[1:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=11, help="alternating pairs (default 11)")
    parser.add_argument("--venv", type=Path, default=None)
    args = parser.parse_args()
    bin_dir = venv_bin(args.venv)
    bare = [str(bin_dir / "python"), "-c", "pass"]
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} · {os.cpu_count()} cores · "
          f"{args.runs} alternating pairs")
    failed = False
    for name, extra, home, most in CASES:
        ours, theirs = pairs([str(bin_dir / "goalkeeper"), *extra], bare, args.runs, home,
                             bare[0])
        ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
        ok = most is None or ratio <= most
        failed |= not ok
        verdict = ("no target" if most is None
                   else f"target ≤ {most:g}: {'met' if ok else 'NOT met'}")
        print(f"goalkeeper {name:<19} {statistics.median(ours) * 1000:7.1f} ms   "
              f"python -c pass {statistics.median(theirs) * 1000:6.1f} ms   "
              f"ratio {ratio:5.2f} ({verdict})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
