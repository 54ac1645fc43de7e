#!/usr/bin/env python3
"""Benchmark: daemon start → correct gauges and goal list in ``goalkeeper status --json``.

    python bench/startup_gauges.py [TREE] [--generate] [--repeat N] [--settle S] [--restart]
    python bench/startup_gauges.py [TREE] --compare [--rounds 3] [--best-of 2]

TREE (default /tmp/gk-trees) holds ``codex/`` (a CODEX_HOME) and ``claude/`` (a Claude config
dir) as written by ``bench/gen_usage_trees.py`` (``--generate`` makes the 1 GiB +
1 GiB trees there first when missing; under /tmp, never commit them). Each run starts
``python -m core daemon`` on a fresh data directory (``GOALKEEPER_HOME``, an empty ``HOME``;
``--restart``: a second start on a data directory a first run left, the everyday case) and
watches what ``status`` reads from the store until the view has not changed for ``--settle``
seconds since the Claude history scan was logged (:class:`Quiet`: the scan's reports reach the
store just after its log line).

"Correct" is what :mod:`tree_oracle` works out from the tree itself, without Goalkeeper's code,
after checking its own counts against the generator's manifest: every goal with its state and
pause reason, every gauge with its used %, reset and exhaustion. The figure is the moment the view
agreed with it for good; the view at the end is confirmed once more with a real
``goalkeeper status --json`` (whole process, the command a user runs).

The store is watched cheaply (``PRAGMA data_version`` every 10 ms on one read-only connection;
the view is read only when the daemon committed something, or every 0.25 s), so the watcher
takes little of the CPU the daemon is timed on. The daemon runs with compiled bytecode (a cache
under ``~/.cache/goalkeeper-bench/pyc``, filled before the first run), as an installed
Goalkeeper does; ``--no-bytecode`` times it compiling every module on each start, as a checkout
run with ``PYTHONDONTWRITEBYTECODE`` does.

``--compare`` times TREE against its Codex tree alone (``TREE-codex-alone``: a link to TREE's
``codex/``, an empty Claude directory and a manifest saying so, made beside TREE on first use):
each round runs both trees alternately ``--best-of`` times each and prints the ratio of the
best correct-view times (both trees ÷ Codex alone; issue 24's target: ≤ 1.3 in every round).

Printed per run: seconds from the daemon's spawn to its phases (from its log: daemon up, the
Claude first pass, the Codex start, the engine started), the first goal and gauge, the correct
view (and the CPU time the daemon had used by then — a figure the other load on the machine
changes less than the wall time) and the Claude history scanned; then the medians and the load
averages before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tree_oracle import disagreements, expected  # noqa: E402

from core.cli.render import goal_json, quota_json  # noqa: E402
from core.providers.procstat import stat_fields  # noqa: E402
from core.quota.machine import effective  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.store import SqliteStore  # noqa: E402
from core.store.schema import SCHEMA_VERSION  # noqa: E402

GENERATOR = Path(__file__).resolve().parent / "gen_usage_trees.py"
PYC = Path.home() / ".cache" / "goalkeeper-bench" / "pyc"
#: log lines that mark the daemon's phases
PHASES = {"daemon up": "daemon starting", "claude first pass": "claude: newest",
          "codex start": "codex: start-up read", "engine started": "engine started",
          "claude history": "full history scanned"}


def view_of(goals: list[dict[str, Any]], quotas: list[dict[str, Any]]) -> tuple[Any, ...]:
    """What a user reads off ``status``: goals and gauges (not their bookkeeping)."""
    goal_view = tuple(sorted((g["id"], g["state"], g.get("pause_reason"), g.get("resets_at"))
                             for g in goals))
    quota_view = tuple(sorted((q["id"], q.get("used_percent"), q.get("resets_at"),
                               q.get("limit_reached")) for q in quotas))
    return goal_view, quota_view


class StoreWatch:
    """Reads the store's view only when the daemon committed something (or every 0.25 s: a
    reset passing changes the view without a write). Never creates the store: two processes
    migrating a new file at once collide, and the daemon must be the one."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self.probe: sqlite3.Connection | None = None
        self.store: SqliteStore | None = None
        self.version = -1
        self.read_at = 0.0

    def view(self) -> tuple[Any, ...] | None:
        if self.store is None and not self._open():
            return None
        assert self.probe is not None and self.store is not None
        version = int(self.probe.execute("PRAGMA data_version").fetchone()[0])
        if version == self.version and time.perf_counter() - self.read_at < 0.25:
            return None
        self.version, self.read_at = version, time.perf_counter()
        now = datetime.now(UTC)
        policy = Settings().hysteresis()
        goals = [goal_json(g, 3) for g in self.store.list_goals()]
        quotas = [quota_json(effective(r, now, policy)) for r in self.store.latest_readings()]
        return view_of(goals, quotas)

    def _open(self) -> bool:
        if not self.database.exists():
            return False
        try:
            probe = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=1)
            if int(probe.execute("PRAGMA user_version").fetchone()[0]) < SCHEMA_VERSION:
                probe.close()
                return False
        except sqlite3.Error:
            return False
        self.probe, self.store = probe, SqliteStore(self.database, read_only=True)
        return True

    def close(self) -> None:
        for handle in (self.probe, self.store):
            if handle is not None:
                handle.close()


def status_view(env: dict[str, str]) -> tuple[Any, ...]:
    done = subprocess.run([sys.executable, "-m", "core", "status", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    data = json.loads(done.stdout)
    return view_of(data["goals"], data["quotas"])


def daemon_env(tree: Path, tmp: Path, data: Path, bytecode: bool) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "GOALKEEPER_HOME": str(data),
           "CODEX_HOME": str(tree / "codex"), "CLAUDE_CONFIG_DIR": str(tree / "claude"),
           "XDG_RUNTIME_DIR": str(tmp)}
    env.pop("CODEX_SQLITE_HOME", None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYC)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def one_run(tree: Path, settle: float, bytecode: bool, restart: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="gk-startup-") as name:
        tmp = Path(name)
        env = daemon_env(tree, tmp, tmp / "gk", bytecode)
        if restart:  # a first start leaves the data directory (and the Codex start index)
            _timed_start(tmp, env, settle)
        return _timed_start(tmp, env, settle)


def _timed_start(tmp: Path, env: dict[str, str], settle: float) -> dict[str, Any]:
    log = tmp / "daemon.log"
    spawned = time.time()
    t0 = time.perf_counter()
    with open(log, "w") as out:
        daemon = subprocess.Popen([sys.executable, "-m", "core", "daemon"], cwd=ROOT, env=env,
                                  stdout=out, stderr=subprocess.STDOUT)
    watch = StoreWatch(Path(env["GOALKEEPER_HOME"]) / "goalkeeper.db")
    try:
        result = _watch(daemon, t0, watch, log, settle)
        result["status_view"] = status_view(env)
    finally:
        watch.close()
        daemon.terminate()
        daemon.wait(30)
    result["phases"] = phases(log.read_text(errors="replace"), spawned)
    return result


def cpu_seconds(pid: int) -> float:
    """CPU time the process has used so far: its own (user + system, fields 14 and 15) and its
    children's that it waited for (16 and 17: the Codex start-up read's worker) (Linux; NaN
    elsewhere)."""
    fields = stat_fields(pid)
    if fields is None:
        return float("nan")
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


@dataclass
class Quiet:
    """When the watch may end: no change in the view for ``settle`` seconds counted from the
    later of its last change and the moment the Claude history scan was seen logged.

    The provider logs "full history scanned" right after handing the scan's reports to the
    engine's queue; the store has them some milliseconds later. Counting the quiet from the
    view's last change alone ended the watch there whenever the view had not changed for
    ``settle`` seconds before the scan (the usual case): a goal only the history holds was then
    missing from the final view though the daemon stored it at once.
    """

    settle: float
    scanned_at: float | None = None

    def over(self, now: float, last_change: float | None, scanned: bool) -> bool:
        if scanned and self.scanned_at is None:
            self.scanned_at = now
        if self.scanned_at is None or last_change is None:
            return False
        return now - max(last_change, self.scanned_at) >= self.settle


def _watch(daemon: subprocess.Popen[bytes], t0: float, watch: StoreWatch, log: Path,
           settle: float) -> dict[str, Any]:
    changes: list[tuple[float, tuple[Any, ...], float]] = []
    quiet = Quiet(settle)
    while True:
        now = time.perf_counter() - t0
        view = watch.view()
        if view is not None and (not changes or changes[-1][1] != view):
            changes.append((now, view, cpu_seconds(daemon.pid)))
        scanned = quiet.scanned_at is not None or (
            "full history scanned" in log.read_text(errors="replace"))
        if quiet.over(now, changes[-1][0] if changes else None, scanned):
            break
        if now > 180 or daemon.poll() is not None:
            raise SystemExit(f"the daemon did not settle: {log.read_text()[-2000:]}")
        time.sleep(0.01)
    return {"changes": changes}


def phases(text: str, spawned: float) -> dict[str, float]:
    found: dict[str, float] = {}
    for line in text.splitlines():
        for phase, marker in PHASES.items():
            if phase not in found and marker in line:
                stamp = datetime.fromisoformat(line.split(" ", 1)[0].replace("Z", "+00:00"))
                found[phase] = stamp.timestamp() - spawned
    return found


def judge(run: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
    """When the view first agreed with the oracle for good; what still disagrees at the end."""
    changes = run["changes"]
    correct = [not disagreements(view, want) for _, view, _ in changes]
    at = cpu = float("nan")
    for i in range(len(changes) - 1, -1, -1):
        if not correct[i]:
            break
        at, cpu = changes[i][0], changes[i][2]
    final = changes[-1][1]
    first = next((t for t, v, _ in changes if v[0] and v[1]), float("nan"))
    return {"first": first, "correct": at, "cpu": cpu, "wrong": disagreements(final, want),
            "status_matches": run["status_view"] == final, "goals": len(final[0]),
            "gauges": len(final[1]), "phases": run["phases"]}


def compile_bytecode(env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", "core"], cwd=ROOT, env=env,
                   check=True, stdout=subprocess.DEVNULL)


def report(i: int, r: dict[str, Any]) -> None:
    ph = ", ".join(f"{k} {v:.2f}" for k, v in r["phases"].items())
    print(f"run {i}: correct view {r['correct']:.2f} s, the daemon's CPU by then {r['cpu']:.2f} s"
          f" (first goal+gauge {r['first']:.2f} s; "
          f"{r['goals']} goals, {r['gauges']} gauges; status --json agrees: "
          f"{r['status_matches']}; oracle disagreements: {len(r['wrong'])}) — phases: {ph}")
    for line in r["wrong"][:10]:
        print("   ", line)


def codex_alone(tree: Path) -> Path:
    """TREE's Codex history without its Claude one (made once, beside TREE)."""
    alone = tree.with_name(tree.name + "-codex-alone")
    manifest = json.loads((tree / "manifest.json").read_text())
    manifest["claude"] = {**manifest["claude"], "files": 0, "api_error_lines": 0}
    (alone / "claude" / "projects").mkdir(parents=True, exist_ok=True)
    if not (alone / "codex").exists():
        (alone / "codex").symlink_to((tree / "codex").resolve(), target_is_directory=True)
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    if not (alone / "manifest.json").exists() or (alone / "manifest.json").read_text() != text:
        (alone / "manifest.json").write_text(text)
    return alone


def compare(args: argparse.Namespace) -> int:
    """Rounds of both trees against the Codex tree alone, alternating, best of N each."""
    alone = codex_alone(args.tree)
    trees = {"both": args.tree, "codex alone": alone}
    wrong = False
    ratios = []
    for round_ in range(1, args.rounds + 1):
        load = os.getloadavg()
        best: dict[str, float] = {}
        for _ in range(args.best_of):
            for label, tree in trees.items():
                run = judge(one_run(tree, args.settle, args.bytecode, args.restart),
                            expected(tree, datetime.now(UTC)))
                wrong |= bool(run["wrong"]) or not run["status_matches"]
                print(f"  round {round_} {label:<11}: correct view {run['correct']:.2f} s "
                      f"(first goal+gauge {run['first']:.2f} s; CPU {run['cpu']:.2f} s; "
                      f"{run['goals']} goals, {run['gauges']} gauges, "
                      f"{len(run['wrong'])} disagreements)")
                best[label] = min(best.get(label, float("inf")), run["correct"])
        ratios.append(best["both"] / best["codex alone"])
        print(f"round {round_}: best correct view, both trees {best['both']:.2f} s, Codex alone "
              f"{best['codex alone']:.2f} s: ratio {ratios[-1]:.2f}  (target <= 1.30; load "
              "average {:.2f} {:.2f} {:.2f} before the round)".format(*load))
    print("ratios: " + ", ".join(f"{r:.2f}" for r in ratios) + "; load average now "
          "{:.2f} {:.2f} {:.2f} ({} CPUs)".format(*os.getloadavg(), os.cpu_count()))
    return 1 if wrong else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("tree", nargs="?", default="/tmp/gk-trees", type=Path)
    parser.add_argument("--generate", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--restart", action="store_true",
                        help="time a second start on the data directory of a first one")
    parser.add_argument("--no-bytecode", dest="bytecode", action="store_false",
                        help="compile every module on each start (no bytecode cache)")
    parser.add_argument("--compare", action="store_true",
                        help="rounds of TREE against its Codex tree alone (see above)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--best-of", type=int, default=2)
    args = parser.parse_args(argv)
    if args.generate and not (args.tree / "manifest.json").exists():
        subprocess.run([sys.executable, str(GENERATOR), "--out", str(args.tree), "--quiet"],
                       check=True)
    if args.bytecode:
        compile_bytecode(daemon_env(args.tree, Path(tempfile.gettempdir()), Path("/nonexistent"),
                                    True))
    if args.compare:
        return compare(args)
    load_before = os.getloadavg()
    runs = []
    for i in range(1, args.repeat + 1):
        run = one_run(args.tree, args.settle, args.bytecode, args.restart)
        runs.append(judge(run, expected(args.tree, datetime.now(UTC))))
        report(i, runs[-1])
    load_after = os.getloadavg()
    for key, label in (("correct", "correct view"), ("cpu", "daemon CPU until correct"),
                       ("first", "first goal+gauge")):
        print(f"median {label}: {statistics.median(float(r[key]) for r in runs):.2f} s")
    for phase in PHASES:
        values = [r["phases"][phase] for r in runs if phase in r["phases"]]
        if values:
            print(f"median {phase}: {statistics.median(values):.2f} s")
    print("load average before: {:.2f} {:.2f} {:.2f}; after: {:.2f} {:.2f} {:.2f} ({} CPUs)"
          .format(*load_before, *load_after, os.cpu_count()))
    return 1 if any(r["wrong"] or not r["status_matches"] for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
