#!/usr/bin/env python3
"""How long the ``goalkeeper`` command takes to start, against a bare ``python -c pass``.

Run from anywhere (``python3 bench/cli_startup.py [--runs 11] [--venv PATH]``): it uses the
project's venv (``--venv``, else ``.venv`` at the top of the checkout as the README sets it up,
else the Python running this script). Both sides are whole processes from the same venv, run in
turn (``goalkeeper …``, ``python -c pass``, ``goalkeeper …``, …) so that both see the same
machine; each run of ``status`` gets a fresh, empty ``GOALKEEPER_HOME`` (no host, no data).
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
#: the command, and the most it may take as a multiple of a bare interpreter
CASES = ((["--version"], 3.0), (["status"], 6.0))


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


def pairs(command: list[str], bare: list[str], runs: int) -> tuple[list[float], list[float]]:
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(runs + 1):  # the first pair warms the page cache and is not counted
        with tempfile.TemporaryDirectory(prefix="gk-cli-bench-") as home:
            env = {**os.environ, "GOALKEEPER_HOME": home}
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
    for extra, most in CASES:
        ours, theirs = pairs([str(bin_dir / "goalkeeper"), *extra], bare, args.runs)
        ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
        ok = ratio <= most
        failed |= not ok
        print(f"goalkeeper {' '.join(extra):<10} {statistics.median(ours) * 1000:7.1f} ms   "
              f"python -c pass {statistics.median(theirs) * 1000:6.1f} ms   "
              f"ratio {ratio:5.2f} (target ≤ {most:g}: {'met' if ok else 'NOT met'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
