#!/usr/bin/env python3
"""``goalkeeper codex-usage --json`` against ``ccusage codex daily --json --offline``, side by side.

Run from the repository root:

    .venv/bin/python bench/codex_usage_vs_ccusage.py [--tree /tmp/gk-bench] [--runs 7]
        [--anchor PATH/TO/ccusage] [--goalkeeper PATH/TO/goalkeeper] [--ordinals]
        [--cold | --fresh-home]

Both whole processes, on the same ``$CODEX_HOME`` (the 1 GiB Codex tree of
``bench/gen_usage_trees.py``, generated under ``/tmp`` if missing — never inside the
repository), alternating run by run so both see the same machine; one Goalkeeper home kept
across the runs as a user's is — so unchanged rollouts are answered from its usage cache
(``--cold``: the cache removed before every run, every rollout read; ``--fresh-home``: a new
home every run, each run then its first ever); the page cache (and the kept home) warmed by one
untimed run of each first. ccusage 20.0.24
comes from npm into ``~/.cache/goalkeeper-bench/ccusage`` (outside the repository) on first use,
unless ``--anchor`` names a ccusage executable. Goalkeeper is the ``goalkeeper`` script beside
the interpreter running this bench (the README's ``.venv/bin/python``, wherever that venv is),
else the repository's ``.venv``, else ``--goalkeeper``. Prints each median, the ratio of the
medians and the median of the per-pair ratios (Goalkeeper ÷ ccusage; below 1 is faster), the
load average before and after, and checks that both found the same token totals.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.codex_scan import ensure_tree  # noqa: E402

CCUSAGE = "ccusage@20.0.24"
CACHE = Path.home() / ".cache" / "goalkeeper-bench" / "ccusage"


def ccusage() -> Path:
    binary = CACHE / "node_modules" / ".bin" / "ccusage"
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            sys.exit("npm is not on PATH: cannot install " + CCUSAGE)
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund",
                        "--no-save", "--loglevel=error", CCUSAGE], check=True)
    return binary


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=True,
                          stdin=subprocess.DEVNULL)
    return time.perf_counter() - start, done.stdout


def with_ordinals(home: Path) -> Path:
    """A copy of the Codex tree at ``home`` written as codex-cli 0.169 and later write it: an
    ``"ordinal":N`` (the line's number in its file) between the timestamp and the type. Made
    once, beside the tree (``<tree>-ordinal``)."""
    out = home.parent.with_name(home.parent.name + "-ordinal") / "codex"
    done = out.parent / "done"
    if done.exists():
        return out
    print(f"writing {out}: the tree with codex-cli 0.169's ordinals ...", file=sys.stderr)
    for path in sorted(home.rglob("*.jsonl")):
        target = out / path.relative_to(home)
        target.parent.mkdir(parents=True, exist_ok=True)
        with path.open("rb") as source, target.open("wb") as sink:
            for number, line in enumerate(source):
                head = line.find(b'","type":"', 0, 64)
                sink.write(line if head < 0 else b"%s\",\"ordinal\":%d%s" % (
                    line[:head], number, line[head + 1:]))
    done.write_text("")
    return out


def goalkeeper_script(given: Path | None) -> Path:
    """The ``goalkeeper`` script of the venv this bench runs in, else the repository's."""
    name = "goalkeeper.exe" if os.name == "nt" else "goalkeeper"
    for candidate in (given, Path(sys.executable).parent / name,
                      ROOT / ".venv" / ("Scripts" if os.name == "nt" else "bin") / name):
        if candidate is not None and candidate.exists():
            return candidate
    sys.exit("no goalkeeper script beside this interpreter or in .venv: "
             "run with the project's venv (README), or pass --goalkeeper")


def goalkeeper(script: Path, home: Path, data: str | None,
               cold: bool = False) -> tuple[float, bytes]:
    """One timed run on ``data`` as Goalkeeper's home (a fresh one when None); ``cold``: its
    usage cache removed first (every rollout read)."""
    if data is None:
        with tempfile.TemporaryDirectory(prefix="gk-bench-") as fresh:
            return goalkeeper(script, home, fresh)
    if cold:
        Path(data, "codex-usage-cache.json").unlink(missing_ok=True)
    env = {**os.environ, "CODEX_HOME": str(home), "GOALKEEPER_HOME": data}
    return timed([str(script), "codex-usage", "--json"], env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", type=Path, default=Path("/tmp/gk-bench"))
    parser.add_argument("--codex-mb", type=float, default=1024)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--anchor", type=Path,
                        help="the ccusage executable to compare with (default: ccusage 20.0.24 "
                             "installed under ~/.cache/goalkeeper-bench)")
    parser.add_argument("--goalkeeper", type=Path, help="the goalkeeper script to time")
    parser.add_argument("--ordinals", action="store_true",
                        help="the tree as codex-cli 0.169 and later write it (an ordinal before "
                             "each line's type), made once beside --tree")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--cold", action="store_true",
                      help="the home kept, but its usage cache removed before every run: "
                           "every rollout read (the scan's own speed)")
    mode.add_argument("--fresh-home", action="store_true",
                      help="a new Goalkeeper home every run (its first run ever: no snapshot "
                           "of validated settings, no usage cache) instead of one home kept "
                           "across runs")
    args = parser.parse_args()
    home = ensure_tree(args.tree, args.codex_mb)
    if args.ordinals:
        home = with_ordinals(home)
    cc = args.anchor or ccusage()
    script = goalkeeper_script(args.goalkeeper)
    cc_env = {**os.environ, "CODEX_HOME": str(home)}
    cc_argv = [str(cc), "codex", "daily", "--json", "--offline"]
    with tempfile.TemporaryDirectory(prefix="gk-bench-") as kept:
        data = None if args.fresh_home else kept
        # warm the page cache (and a kept home), keep the answers to compare
        _, gk_out = goalkeeper(script, home, data)
        _, cc_out = timed(cc_argv, cc_env)
        load_before = os.getloadavg()
        gk_times, cc_times = [], []
        for _ in range(args.runs):
            gk_times.append(goalkeeper(script, home, data, args.cold)[0])
            cc_times.append(timed(cc_argv, cc_env)[0])
        load_after = os.getloadavg()
    gk, cc_median = statistics.median(gk_times), statistics.median(cc_times)
    pairs = statistics.median(g / c for g, c in zip(gk_times, cc_times, strict=True))
    gk_total = json.loads(gk_out)["total"]
    cc_total = json.loads(cc_out)["totals"]
    # ccusage counts input without the cached part
    same = (gk_total["input_tokens"] - gk_total["cached_input_tokens"] == cc_total["inputTokens"]
            and gk_total["output_tokens"] == cc_total["outputTokens"]
            and gk_total["total_tokens"] == cc_total["totalTokens"])
    print(f"Codex tree {home} ({sum(p.stat().st_size for p in home.rglob('*.jsonl')) >> 20:,}"
          f" MiB), {os.cpu_count()} CPUs, {args.runs} alternating pairs; load average before "
          "{:.2f} {:.2f} {:.2f}, after {:.2f} {:.2f} {:.2f}".format(*load_before, *load_after))
    print(f"goalkeeper: {script}; anchor: {cc}; Goalkeeper's home: "
          + ("a fresh one every run" if args.fresh_home else "one kept across the runs" + (
              ", its usage cache removed before each (every rollout read)" if args.cold else
              " (rollouts unchanged since the last run answered from its usage cache)")))
    print(f"goalkeeper codex-usage --json        median {gk:.3f} s  "
          f"(min {min(gk_times):.3f}, max {max(gk_times):.3f})")
    print(f"ccusage codex daily --json --offline median {cc_median:.3f} s  "
          f"(min {min(cc_times):.3f}, max {max(cc_times):.3f})")
    print(f"ratio goalkeeper / ccusage: {gk / cc_median:.2f} of the medians, {pairs:.2f} the "
          f"median of the pairs' ratios, {min(gk_times) / min(cc_times):.2f} of the fastest runs"
          f"  (target <= 0.60)  same input/output totals: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
