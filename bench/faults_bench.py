#!/usr/bin/env python3
"""Figures for the reliability work (issue 11), each measured in a fresh child process.

    python bench/faults_bench.py [--output-mb 300] [--history 200000] [--stages 100000]

* a step printing ``--output-mb`` MB: the host's peak RSS and wall time, with the default cap
  (64 MiB: the step is stopped, ``output_too_large``) and with a cap above it (kept whole);
* ``history``: ``--limit 1000000`` (refused at once), one page of 1000 rows, and paging through
  all ``--history`` rows — wall time and the command's peak RSS;
* a ``--stages``-stage goal file: how fast ``add`` refuses it (size check), and validating that
  many stages with the limits bypassed (linear time: the old duplicate check was quadratic);
* the commit latency of a goal transaction with ``synchronous=FULL`` against ``NORMAL`` on this
  disk (the price of acknowledged actions surviving power loss).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def child(code: str, *args: str) -> dict[str, float]:
    """Run ``code`` in a fresh interpreter; it prints a JSON object of figures."""
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


STEP = r"""
import asyncio, json, resource, sys, time, tempfile
from datetime import UTC, datetime
from pathlib import Path
sys.path.insert(0, ".")
from core.providers.pipeline.goalfile import StepSpec
from core.providers.pipeline.steps import StepContext, run_attempt
mb, cap = float(sys.argv[1]), sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
run_dir = Path(tempfile.mkdtemp())
code = ("import sys\nchunk = b'x' * (1 << 20)\n"
        f"for _ in range({int(mb)}): sys.stdout.buffer.write(chunk)")
spec = StepSpec(name="big", command=[sys.executable, "-c", code],
                max_output_mb=None if cap == "default" else float(cap), timeout=600)
ctx = StepContext(run_dir, "r", run_dir, {}, lambda: datetime.now(UTC))
async def started(pid, at): pass
t0 = time.perf_counter()
result = asyncio.run(run_attempt(spec, ctx, 1, 600, started))
took = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = run_dir / "big.out"
print(json.dumps({"seconds": took, "rss_before_mb": before, "rss_peak_mb": peak,
                  "outcome": result.outcome.reason,
                  "kept_mb": (out.stat().st_size if out.exists() else 0) / 2**20}))
"""

SEED = r"""
import json, sys
from datetime import UTC, datetime, timedelta
sys.path.insert(0, ".")
from core.models import HistoryRow
from core.store import SqliteStore
db, n = sys.argv[1], int(sys.argv[2])
store = SqliteStore(db)
t0 = datetime(2026, 1, 1, tzinfo=UTC)
con = store._con
con.execute("BEGIN IMMEDIATE")
for i in range(n):
    store._insert_history(HistoryRow(at=t0 + timedelta(seconds=i), goal=f"g:{i % 50}",
                                     event="resume_requested", reason="quota recovered " * 4,
                                     detail={"deadline": "2026-01-01T00:00:00Z", "n": i}))
con.execute("COMMIT")
store.close()
print(json.dumps({"rows": n}))
"""

STAGES = r"""
import json, sys, time, tempfile
from pathlib import Path
sys.path.insert(0, ".")
from core.providers.pipeline.goalfile import GoalFile, GoalFileError, load_goal_file
n = int(sys.argv[1])
path = Path(tempfile.mkdtemp()) / "many.toml"
path.write_text('name = "many"\n' + "".join(
    f'\n[[stage]]\nname = "s{i}"\ncommand = ["true"]\n' for i in range(n)))
t0 = time.perf_counter()
try:
    load_goal_file(path)
except GoalFileError as exc:
    refused = exc.problems[0]
took_refuse = time.perf_counter() - t0
data = {"name": "many", "stage": [{"name": f"s{i}", "command": ["true"]} for i in range(n)]}
t0 = time.perf_counter()
GoalFile.model_validate(data)
took_validate = time.perf_counter() - t0
print(json.dumps({"file_mb": path.stat().st_size / 2**20, "refuse_seconds": took_refuse,
                  "validate_seconds_uncapped": took_validate, "refused": refused[-60:]}))
"""

SYNC = r"""
import json, sys, time, tempfile
from datetime import UTC, datetime
from pathlib import Path
sys.path.insert(0, ".")
from core.models import Goal
from core.store import Mutation, SqliteStore
import shutil
mode, n = sys.argv[1], int(sys.argv[2])
scratch = Path(tempfile.mkdtemp(dir=sys.argv[3]))
store = SqliteStore(scratch / "g.db")
store._con.execute(f"PRAGMA synchronous = {mode}")
now = datetime.now(UTC)
t0 = time.perf_counter()
for i in range(n):
    g = Goal(id="x:g", provider="x", title=f"t{i}", created_at=now, updated_at=now)
    store.transact("x:g", lambda cur, g=g: Mutation(g, None))
took = time.perf_counter() - t0
store.close()
shutil.rmtree(scratch)
print(json.dumps({"ms_per_commit": took / n * 1000}))
"""


def cli_peak(home: Path, *args: str) -> tuple[float, float]:
    """(seconds, peak RSS MiB) of one ``goalkeeper`` command."""
    env = {**os.environ, "GOALKEEPER_HOME": str(home)}
    t0 = time.perf_counter()
    code = ("import resource, runpy, sys; sys.argv = ['goalkeeper', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('core', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         env=env, cwd=ROOT)
    took = time.perf_counter() - t0
    peak = float(out.stderr.strip().splitlines()[-1]) / 1024
    return took, peak


def bench_output(mb: float) -> None:
    for cap in ("default", str(mb * 2)):
        r = child(STEP, str(mb), cap)
        print(f"step printing {mb:g} MB, cap {cap}: {r['outcome']}, kept {r['kept_mb']:.0f} MiB, "
              f"{r['seconds']:.1f} s, host RSS {r['rss_before_mb']:.0f} → peak "
              f"{r['rss_peak_mb']:.0f} MiB")


def bench_history(rows: int) -> None:
    home = Path(tempfile.mkdtemp(prefix="gk-bench-history-"))
    child(SEED, str(home / "goalkeeper.db"), str(rows))
    took, peak = cli_peak(home, "history", "--limit", "1000000")
    print(f"history --limit 1000000 over {rows} rows: refused in {took:.2f} s, peak {peak:.0f} MiB")
    took, peak = cli_peak(home, "history", "--json", "--limit", "1000")
    print(f"history --json --limit 1000: {took:.2f} s, peak {peak:.0f} MiB")
    t0, worst = time.perf_counter(), 0.0
    for offset in range(0, rows, 1000):
        _, peak = cli_peak(home, "history", "--json", "--limit", "1000", "--offset",
                           str(offset))
        worst = max(worst, peak)
    print(f"paging through all {rows} rows, 1000 a page: {time.perf_counter() - t0:.1f} s, "
          f"peak {worst:.0f} MiB per page")


def bench_stages(stages: int) -> None:
    r = child(STAGES, str(stages))
    print(f"{stages}-stage goal file ({r['file_mb']:.1f} MiB): refused in "
          f"{r['refuse_seconds'] * 1000:.0f} ms; validating all of them with the limits "
          f"bypassed: {r['validate_seconds_uncapped']:.2f} s (linear)")


def bench_sync(commits: int, directory: str) -> None:
    full = child(SYNC, "FULL", str(commits), directory)["ms_per_commit"]
    normal = child(SYNC, "NORMAL", str(commits), directory)["ms_per_commit"]
    print(f"goal transaction commit on {directory}: synchronous=FULL {full:.2f} ms, "
          f"NORMAL {normal:.2f} ms ({commits} commits each)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-mb", type=float, default=300)
    parser.add_argument("--history", type=int, default=200_000)
    parser.add_argument("--stages", type=int, default=100_000)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--dir", default=tempfile.gettempdir())
    args = parser.parse_args()
    bench_output(args.output_mb)
    bench_history(args.history)
    bench_stages(args.stages)
    bench_sync(args.commits, args.dir)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"max RSS of this driver {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}"
          " MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
