#!/usr/bin/env python3
"""Benchmark of the Claude transcript scan (core.providers.claude), printing every figure.

    python bench/claude_scan.py [TREE] [--generate] [--workers N] [--repeat N]

TREE (default /tmp/gk-bench-claude) holds ``claude/`` (a Claude config dir) and
``manifest.json`` as written by ``bench/gen_usage_trees.py``; ``--generate`` makes a
1 GiB Claude-only tree there first when it is missing (``--codex-mb 0 --only claude``; never
commit it). Figures:

* full-history scan — every transcript read, responses de-duplicated by message id + request
  id, limit stops found, tokens per 5-hour block computed for the chart: seconds and MiB/s, in
  one process and with N worker processes (best of --repeat, page cache warm);
* whether the totals match the generator's manifest (tokens by kind, unique responses, stops);
* incremental update: a poll after one response was appended to a live session (hot file) and
  to a session untouched for hours (cold file), and a poll that finds nothing — milliseconds,
  including reading the new line and updating the blocks;
* peak RSS of the scanning process and of the worker processes.

The appended lines are cut off again at the end, so the tree stays as generated.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.providers.claude.follow import (  # noqa: E402
    COLD_SLICES,
    HOT_SECONDS,
    TranscriptWatcher,
    read_file,
)
from core.providers.claude.ledger import UsageLedger  # noqa: E402

GENERATOR = Path(__file__).resolve().parent / "gen_usage_trees.py"
MIB = 1 << 20
TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
              "cache_read_input_tokens", "total_tokens")


def generate(tree: Path) -> None:
    generator = Path(os.environ.get("GK_GENERATOR", GENERATOR))
    print(f"generating a 1 GiB Claude tree in {tree} with {generator} ...", flush=True)
    subprocess.run([sys.executable, str(generator), "--out", str(tree), "--codex-mb", "0",
                    "--only", "claude", "--quiet"], check=True)


def age_directories(root: Path) -> None:
    """The generator dates each file by its last line but leaves directories at the time they
    were written; on a real machine a directory is as old as the newest file put in it."""
    for directory in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(
            p.parts)):
        newest = max((c.stat().st_mtime for c in directory.iterdir()), default=None)
        if newest is not None:
            os.utime(directory, (newest, newest))


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def scan(root: Path, workers: int) -> tuple[TranscriptWatcher, float, float]:
    """(the watcher, wall seconds, CPU seconds of this process and its workers)."""
    started, cpu = time.perf_counter(), _cpu()
    watcher = TranscriptWatcher([root])
    watcher.full_scan(time.time(), workers=workers)
    watcher.ledger.blocks()  # the chart's 5-hour blocks are part of the job
    return watcher, time.perf_counter() - started, _cpu() - cpu


def check_totals(ledger: UsageLedger, manifest: dict[str, object]) -> list[str]:
    totals = ledger.totals()
    lines, ok = [], True
    for key in TOKEN_KEYS:
        found, expected = totals[key], manifest.get(key)
        ok &= found == expected
        lines.append(f"  {key:<30} {found:>16,}  manifest {expected:>16,}")
    pairs = (("unique responses", totals["responses"], manifest.get("unique_messages")),
             ("limit stops", len(ledger.stops), manifest.get("api_error_lines")))
    for name, found, expected in pairs:
        ok &= found == expected
        lines.append(f"  {name:<30} {found:>16,}  manifest {expected:>16,}")
    lines.append("  totals match the manifest" if ok else "  TOTALS DO NOT MATCH THE MANIFEST")
    return lines


def _response_line(session: str, n: int) -> bytes:
    record = {"parentUuid": None, "isSidechain": False, "type": "assistant",
              "sessionId": session, "cwd": "/bench", "version": "2.1.240",
              "message": {"id": f"msg_bench_{n}_{time.time_ns()}", "type": "message",
                          "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [{"type": "text", "text": "appended by the benchmark"}],
                          "usage": {"input_tokens": 3, "cache_creation_input_tokens": 10,
                                    "cache_read_input_tokens": 1000, "output_tokens": 42}},
              "requestId": f"req_bench_{n}", "uuid": f"bench-{n}",
              "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())}
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def incremental(watcher: TranscriptWatcher, rounds: int = 20) -> list[str]:
    now = time.time()
    mains = [s for s in watcher.files.values() if not s.sidechain]
    hot = max(mains, key=lambda s: s.mtime)
    cold = min(mains, key=lambda s: s.mtime)
    idle = []
    for _ in range(rounds):
        started = time.perf_counter()
        watcher.poll(time.time())
        idle.append(time.perf_counter() - started)
    hot_count = sum(1 for s in watcher.files.values() if now - s.mtime < HOT_SECONDS)
    lines = [f"  files followed: {len(watcher.files)} ({hot_count} hot), "
             f"directories: {len(watcher.dirs)}",
             f"  a poll that finds nothing new: {_ms(idle)} (max {_ms(idle, max).strip()})"]
    hot_stat = Path(hot.path).stat()
    os.utime(hot.path)  # a live session: written just now
    for _ in range(COLD_SLICES + 1):
        watcher.poll(time.time())
    for label, state in (("hot (live session)", hot), ("cold (hours old)", cold)):
        lines.append(_append_rounds(watcher, state, label, rounds))
    os.utime(hot.path, (hot_stat.st_atime, hot_stat.st_mtime))
    return lines


def _append_rounds(watcher: TranscriptWatcher, state: object, label: str, rounds: int) -> str:
    """Append one response per round; time the poll that picks it up, and the update alone
    (reading the new line, counting it, updating the blocks)."""
    path = Path(state.path)  # type: ignore[attr-defined]
    size, stat = path.stat().st_size, path.stat()
    polls, updates, polls_needed = [], [], []
    try:
        for n in range(2 * rounds):
            with open(path, "ab") as handle:
                handle.write(_response_line(state.session_id, n))  # type: ignore[attr-defined]
            if label.startswith("cold"):
                os.utime(path, (stat.st_atime, stat.st_mtime))  # stays cold
            before = len(watcher.ledger)
            if n % 2:  # the update alone
                started = time.perf_counter()
                read_file(state, watcher.ledger)  # type: ignore[arg-type]
                watcher.ledger.blocks()
                updates.append(time.perf_counter() - started)
                continue
            needed = 0
            while len(watcher.ledger) == before and needed <= COLD_SLICES:
                needed += 1
                started = time.perf_counter()
                watcher.poll(time.time())
                watcher.ledger.blocks()
                elapsed = time.perf_counter() - started
            if len(watcher.ledger) == before:
                return f"  append to a {label} file: NOT PICKED UP"
            polls.append(elapsed)
            polls_needed.append(needed)
    finally:
        os.truncate(path, size)
        os.utime(path, (stat.st_atime, stat.st_mtime))
        watcher.poll(time.time())
    return (f"  append to a {label + ' file:':<24} update {_ms(updates)} (max "
            f"{_ms(updates, max).strip()});  the poll that finds it {_ms(polls)} (max "
            f"{_ms(polls, max).strip()}), after {max(polls_needed)} poll(s) at most")


def _ms(values: list[float], pick: object = statistics.median) -> str:
    return f"{1000 * pick(values):6.2f} ms"  # type: ignore[operator]


def _rss_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", default="/tmp/gk-bench-claude", type=Path)
    parser.add_argument("--generate", action="store_true", help="make the tree if missing")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root, manifest_path = args.tree / "claude", args.tree / "manifest.json"
    if not root.is_dir() and args.generate:
        generate(args.tree)
    if not root.is_dir() or not manifest_path.exists():
        print(f"no Claude tree at {args.tree} (use --generate)", file=sys.stderr)
        return 2
    manifest = json.loads(manifest_path.read_text())["claude"]
    age_directories(root)
    size = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
    print(f"tree: {root}  {manifest['files']} files  {size / MIB:,.1f} MiB  "
          f"(cpus: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f})")
    scan(root, 1)  # warm the page cache
    results = {}
    for workers in sorted({1, max(1, args.workers)}):
        best, best_cpu = None, None
        for _ in range(args.repeat):
            watcher, seconds, cpu = scan(root, workers)
            best = seconds if best is None else min(best, seconds)
            best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
        results[workers] = (watcher, best)
        del watcher
        assert best is not None and best_cpu is not None
        rss, workers_rss = _rss_mib(resource.RUSAGE_SELF), _rss_mib(resource.RUSAGE_CHILDREN)
        print(f"full-history scan, {workers} process(es): {best:6.2f} s  "
              f"{size / MIB / best:7.1f} MiB/s   (CPU {best_cpu:5.2f} s = "
              f"{size / MIB / best_cpu:5.0f} MiB per CPU-second)   peak RSS so far {rss:.0f} MiB"
              f" (+ workers {workers_rss:.0f} MiB each at most)", flush=True)
    watcher = results.pop(max(results))[0]
    results.clear()  # only the last scan's state stays in memory, as in a host
    blocks = watcher.ledger.blocks()
    print(f"5-hour blocks: {len(blocks)}  largest {max(b.total_tokens for b in blocks):,} tokens"
          f"  models: {len(watcher.ledger.models)}")
    print("totals:")
    print("\n".join(check_totals(watcher.ledger, manifest)))
    print("incremental update (median of 20; 'update' = read the appended line, count it,"
          " update the 5-hour blocks):")
    print("\n".join(incremental(watcher)))
    print(f"peak RSS: scanning process {_rss_mib(resource.RUSAGE_SELF):.0f} MiB, "
          f"largest worker {_rss_mib(resource.RUSAGE_CHILDREN):.0f} MiB   "
          f"(load average after: {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
