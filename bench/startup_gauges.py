#!/usr/bin/env python3
"""Benchmark: daemon start → correct gauges and goal list in ``goalkeeper status --json``.

    python bench/startup_gauges.py [TREE] [--generate] [--repeat N] [--settle S]

TREE (default /tmp/gk-trees) holds ``codex/`` (a CODEX_HOME) and ``claude/`` (a Claude config
dir) as written by ``../shared/bench/gen_usage_trees.py`` (``--generate`` makes the 1 GiB +
1 GiB trees there first when missing; under /tmp, never commit them). Each run starts
``python -m core daemon`` on a fresh data directory (``GOALKEEPER_HOME``, an empty ``HOME``) and
watches the store ``status`` reads, every 20 ms, until the daemon has been quiet for
``--settle`` seconds after the full-history scans; "correct" is the goal list (id, state, pause
reason, reset) and the gauges (window, used %, reset, exhaustion) as they stand at the end. The
moment the view first became correct for good is then checked once more with a real
``goalkeeper status --json`` (whole process, the command a user runs). Figures: seconds from the
daemon's spawn to (a) the first goal and gauge, (b) the correct view, (c) the Claude full
history scanned (its log line), for each run and the median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.cli.goals import goal_json, quota_json  # noqa: E402
from core.quota import effective  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store import open_store  # noqa: E402

GENERATOR = Path("/work/shared/bench/gen_usage_trees.py")


def view_of(goals: list[dict[str, Any]], quotas: list[dict[str, Any]]) -> tuple[Any, ...]:
    """What a user reads off ``status``: goals and gauges (not their bookkeeping)."""
    goal_view = tuple(sorted((g["id"], g["state"], g.get("pause_reason"), g.get("resets_at"))
                             for g in goals))
    quota_view = tuple(sorted((q["id"], q.get("used_percent"), q.get("resets_at"),
                               q.get("limit_reached")) for q in quotas))
    return goal_view, quota_view


def store_view(database: Path) -> tuple[Any, ...] | None:
    if not database.exists():
        return None
    try:
        store, _ = open_store(database, datetime.now(UTC))
    except Exception:
        return None
    try:
        now = datetime.now(UTC)
        policy = Settings().hysteresis()
        goals = [goal_json(g, 3) for g in store.list_goals()]
        quotas = [quota_json(effective(r, now, policy)) for r in store.latest_readings()]
    except Exception:
        return None
    finally:
        store.close()
    return view_of(goals, quotas)


def status_view(env: dict[str, str]) -> tuple[Any, ...]:
    done = subprocess.run([sys.executable, "-m", "core", "status", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    data = json.loads(done.stdout)
    return view_of(data["goals"], data["quotas"])


def one_run(tree: Path, settle: float) -> dict[str, float | int | bool]:
    with tempfile.TemporaryDirectory(prefix="gk-startup-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        gk = Path(tmp) / "gk"
        env = {**os.environ, "HOME": str(home), "GOALKEEPER_HOME": str(gk),
               "CODEX_HOME": str(tree / "codex"), "CLAUDE_CONFIG_DIR": str(tree / "claude"),
               "XDG_RUNTIME_DIR": tmp}
        env.pop("CODEX_SQLITE_HOME", None)
        log = Path(tmp) / "daemon.log"
        t0 = time.perf_counter()
        with open(log, "w") as out:
            daemon = subprocess.Popen([sys.executable, "-m", "core", "daemon"], cwd=ROOT, env=env,
                                      stdout=out, stderr=subprocess.STDOUT)
        try:
            return _watch(daemon, t0, gk / "goalkeeper.db", log, env, settle)
        finally:
            daemon.terminate()
            daemon.wait(30)


def _watch(daemon: subprocess.Popen[bytes], t0: float, database: Path, log: Path,
           env: dict[str, str], settle: float) -> dict[str, float | int | bool]:
    changes: list[tuple[float, tuple[Any, ...]]] = []
    scanned_at: float | None = None
    while True:
        now = time.perf_counter() - t0
        view = store_view(database)
        if view is not None and (not changes or changes[-1][1] != view):
            changes.append((now, view))
        if scanned_at is None and "full history scanned" in log.read_text(errors="replace"):
            scanned_at = now
        quiet = changes and now - changes[-1][0] >= settle
        if scanned_at is not None and quiet and now - scanned_at >= settle:
            break
        if now > 180 or daemon.poll() is not None:
            raise SystemExit(f"the daemon did not settle: {log.read_text()[-2000:]}")
        time.sleep(0.02)
    final = changes[-1][1]
    correct_at = next(t for t, v in changes if v == final and all(
        later == final for _, later in changes[[c[1] for c in changes].index(v):]))
    first = next((t for t, v in changes if v[0] and v[1]), float("nan"))
    confirmed = status_view(env) == final
    return {"first": first, "correct": correct_at, "scanned": scanned_at or float("nan"),
            "goals": len(final[0]), "gauges": len(final[1]), "status_matches": confirmed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tree", nargs="?", default="/tmp/gk-trees", type=Path)
    parser.add_argument("--generate", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--settle", type=float, default=3.0)
    args = parser.parse_args(argv)
    if args.generate and not (args.tree / "manifest.json").exists():
        subprocess.run([sys.executable, str(GENERATOR), "--out", str(args.tree), "--quiet"],
                       check=True)
    runs = [one_run(args.tree, args.settle) for _ in range(args.repeat)]
    for i, run in enumerate(runs, 1):
        print(f"run {i}: first goal+gauge {run['first']:.2f} s, correct view {run['correct']:.2f} s"
              f", Claude history scanned {run['scanned']:.2f} s ({run['goals']} goals, "
              f"{run['gauges']} gauges; status --json agrees: {run['status_matches']})")
    for key, label in (("first", "first goal+gauge"), ("correct", "correct view"),
                       ("scanned", "Claude history scanned")):
        print(f"median {label}: {statistics.median(float(r[key]) for r in runs):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
