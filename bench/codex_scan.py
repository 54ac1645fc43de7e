#!/usr/bin/env python3
"""Codex provider figures on a synthetic ``$CODEX_HOME`` (default 1 GiB), printed as a table.

Run from the repository root:

    .venv/bin/python bench/codex_scan.py [--tree /tmp/gk-bench/codex] [--codex-mb 1024]

Without ``--tree`` the tree is generated (once) by ``bench/gen_usage_trees.py`` under
``/tmp/gk-bench`` — never inside the repository. Each phase runs in its own process so its peak
RSS is its own:

  a. start → correct gauges and goal list: ``CodexProvider.start()`` + ``discover()`` +
     ``read_quotas()`` (target < 0.5 s); checked against a plain line-by-line reading of the tree.
     Cold: no start index, so every rollout's last goal line is searched for (there is no goals
     database in a generated tree); warm: with the start index a previous start left;
  b. the full-history scan behind the usage chart, in one process and with one worker per CPU
     (target ≥ 1,000 MiB/s); its token totals are checked against the generator's manifest;
     Then the scan's own time per phase (walk, read, search, decode, sum), one process;
  c. one incremental update after a 1 KB append to the newest rollout: ``provider.poll()``
     end to end (target < 5 ms); the file is truncated back afterwards.

Times are the best of ``--repeat`` runs (median in brackets): the tree is in the page cache after
the first pass, and the best run is the least disturbed by other work on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GENERATOR = Path(__file__).resolve().parent / "gen_usage_trees.py"
MIB = 1 << 20


# -- the tree ---------------------------------------------------------------------------------


def ensure_tree(out: Path, size_mb: float) -> Path:
    manifest = out / "manifest.json"
    if manifest.exists() and json.loads(manifest.read_text()).get("codex", {}).get(
            "requested_mb") == size_mb:
        return out / "codex"
    print(f"generating a {size_mb:g} MiB Codex tree under {out} ...", file=sys.stderr)
    subprocess.run([sys.executable, str(GENERATOR), "--out", str(out), "--only", "codex",
                    "--codex-mb", str(size_mb), "--quiet"], check=True)
    return out / "codex"


def expected(home: Path) -> dict[str, Any]:
    """The reference answer, read the slow and obvious way (cached beside the tree)."""
    cache = home.parent / "codex-expected.json"
    if cache.exists():
        return dict(json.loads(cache.read_text()))
    latest: tuple[str, list[Any]] | None = None
    goals: dict[str, str] = {}
    for path in sorted((home / "sessions").rglob("rollout-*.jsonl")):
        with path.open("rb") as handle:
            for line in handle:
                if b"token_count" not in line and b"thread_goal_updated" not in line:
                    continue
                record = json.loads(line)
                payload = record.get("payload") or {}
                if payload.get("type") == "token_count" and payload.get("rate_limits"):
                    # the generator clamps times to the end of its span: the newest instant
                    # may carry several snapshots, and any of them is a correct answer
                    if latest is None or record["timestamp"] > latest[0]:
                        latest = (record["timestamp"], [payload["rate_limits"]])
                    elif record["timestamp"] == latest[0]:
                        latest[1].append(payload["rate_limits"])
                elif payload.get("type") == "thread_goal_updated":
                    goals[payload["goal"]["threadId"]] = payload["goal"]["status"]
    answer = {"latest": latest, "goals": goals}
    cache.write_text(json.dumps(answer))
    return answer


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def children_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


# -- phases (each in its own process) ---------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.readings: list[Any] = []
        self.goals: list[Any] = []

    def goal_observed(self, provider: str, observation: Any) -> None:
        self.goals.append(observation)

    def quota_observed(self, reading: Any) -> None:
        self.readings.append(reading)


def provider_for(home: Path, index_file: Path | None = None) -> Any:
    from core.clock import SystemClock
    from core.providers.codex.config import from_settings
    from core.providers.codex.provider import CodexProvider
    from core.settings import Settings

    environ = {"CODEX_HOME": str(home), "PATH": os.environ.get("PATH", ""),
               "HOME": os.environ.get("HOME", "")}
    provider = CodexProvider(from_settings(Settings(), environ), SystemClock(), index_file)
    provider.attach(Sink())  # type: ignore[arg-type]
    return provider


async def start_once(home: Path, index_file: Path | None) -> tuple[float, Any, Any]:
    began = time.perf_counter()
    provider = provider_for(home, index_file)
    await provider.start()
    goals = await provider.discover()
    readings = await provider.read_quotas()
    elapsed = time.perf_counter() - began
    await provider.stop()
    return elapsed, goals, readings


def check_start(home: Path, goals: Any, readings: Any) -> tuple[bool, str]:
    from core.models import GoalState
    from core.providers.codex.goals import state_for
    from core.providers.codex.limits import from_rollout
    from core.providers.codex.readings import to_readings

    answer = expected(home)
    # a generated tree has no goals database: a rollout's `active` is status unknown (paused)
    ok_goals = {o.id.removeprefix("codex:"): o.state for o in goals} == {
        thread: GoalState.PAUSED if status == "active" else state_for(status)[0]
        for thread, status in answer["goals"].items()}
    stamp, candidates = answer["latest"]
    when = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC)
    wants = [{(r.window_id, r.used_percent, r.resets_at)
              for r in to_readings(from_rollout(limits, when), when, 1e12)}
             for limits in candidates]
    got = {(r.window_id, r.used_percent, r.resets_at) for r in readings}
    states = Counter(o.state.value for o in goals)
    gauges = ", ".join(f"{w} {u:g} %" for w, u, _ in sorted(got) if u is not None)
    return ok_goals and got in wants, (f"{len(goals)} goals {dict(states)}; gauges {gauges} "
                                       f"(snapshot of {stamp})")


def phase_start(home: Path, repeat: int, warm: bool) -> dict[str, Any]:
    """Cold: no start index (every rollout searched). Warm: the index of a previous start."""
    with tempfile.TemporaryDirectory() as scratch:
        index_file = Path(scratch) / "codex-start-index.json" if warm else None
        if warm:
            asyncio.run(start_once(home, index_file))  # the previous start, not timed
        times, goals, readings = [], None, None
        for _ in range(repeat):
            elapsed, goals, readings = asyncio.run(start_once(home, index_file))
            times.append(elapsed)
    ok, what = check_start(home, goals, readings)
    return {"times": times, "ok": ok, "what": what, "rss": peak_rss_mib()}


def phase_history(home: Path, repeat: int, workers: int) -> dict[str, Any]:
    from core.providers.codex.history import rollouts
    from core.providers.codex.usage_workers import scan_usage

    manifest = json.loads((home.parent / "manifest.json").read_text())["codex"]
    paths = rollouts(home / "sessions")
    times, history = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        history = scan_usage(paths, workers)
        times.append(time.perf_counter() - began)
    assert history is not None
    total = history.totals()
    ok = (total.total_tokens == manifest["total_tokens"]
          and total.input_tokens == manifest["input_tokens"]
          and total.output_tokens == manifest["output_tokens"]
          and total.calls == manifest["token_count_events"] - manifest["token_count_null_info"])
    points = sum(len(p) for p in history.quota.values())
    return {"times": times, "ok": ok, "mib": history.size / MIB, "rss": peak_rss_mib(),
            "children_rss": children_rss_mib(),
            "what": f"{total.calls:,} calls, {total.total_tokens:,} tokens, "
                    f"{len(history.daily)} day×model rows, {points} quota points"}


async def incremental(home: Path, rounds: int) -> tuple[list[float], int]:
    from core.providers.codex.follow import HOT_NEWEST  # noqa: F401 - the hot set is what is polled

    provider = provider_for(home)
    await provider.start()
    newest = max(provider.index.files.values(), key=lambda s: s.mtime_ns).path
    original, st = newest.stat().st_size, newest.stat()
    sink: Sink = provider.sink
    times = []
    try:
        for i in range(rounds):
            line = _kilobyte_line(i)
            with newest.open("ab") as handle:
                handle.write(line)
            before = len(sink.readings)
            began = time.perf_counter()
            await provider.poll(full=False)
            times.append(time.perf_counter() - began)
            assert len(sink.readings) > before, "the appended snapshot was not reported"
    finally:
        os.truncate(newest, original)
        os.utime(newest, ns=(st.st_atime_ns, st.st_mtime_ns))
        await provider.stop()
    return times, len(line)


def _kilobyte_line(i: int) -> bytes:
    now = datetime.now(UTC)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    reset = int(now.timestamp()) + 3600
    usage = {"input_tokens": 1000 + i, "cached_input_tokens": 900, "output_tokens": 50,
             "reasoning_output_tokens": 10, "total_tokens": 1050 + i}
    payload = {"type": "token_count",
               "info": {"total_token_usage": usage, "last_token_usage": usage,
                        "model_context_window": 258400},
               "rate_limits": {"limit_id": "codex", "limit_name": None,
                               "primary": {"used_percent": float(i % 100), "window_minutes": 300,
                                           "resets_at": reset},
                               "secondary": {"used_percent": 12.0, "window_minutes": 10080,
                                             "resets_at": reset + 86400},
                               "credits": {"has_credits": False, "unlimited": False,
                                           "balance": "0"},
                               "plan_type": "plus", "note": "x" * 300}}
    text = json.dumps({"timestamp": stamp, "type": "event_msg", "payload": payload},
                      separators=(",", ":"))
    return (text + "\n").encode()


#: the scan's own phases, and the functions of :mod:`core.providers.codex.history` each is
#: timed in (a function of one phase called inside another's counts as its own phase only)
SCAN_PHASES = {"walk": ("rollouts",), "read": ("_window",),
               "search": ("_calls", "_segments"), "decode": ("_usage", "_quota_point"),
               "sum": ("TokenCounts.add_sums", "combine")}


def phase_breakdown(home: Path, repeat: int) -> dict[str, Any]:
    """The scan's own time per phase, in one process (no workers): walk (the file list), read
    (mapping each window, pre-faulted), search (finding the lines that count, their days and
    models), decode (the calls' usage objects — summed column by column as they are decoded —
    and the quota points' JSON), sum (adding each run's sums into the day × model table, and
    combining); "other" is the rest of the scan (its loops, opening files). Each phase's
    functions are wrapped with a timer."""
    from core.providers.codex import history

    spent: dict[str, float] = dict.fromkeys(SCAN_PHASES, 0.0)
    depth = [0]

    def timed(phase: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return function(*args, **kwargs)
            depth[0] += 1
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[phase] += time.perf_counter() - began
                depth[0] -= 1
        return wrapper

    for phase, names in SCAN_PHASES.items():
        for name in names:
            owner: Any = history
            if "." in name:
                cls, name = name.split(".")
                owner = getattr(history, cls)
            setattr(owner, name, timed(phase, getattr(owner, name)))
    runs = []
    for _ in range(repeat):
        for phase in spent:
            spent[phase] = 0.0
        began = time.perf_counter()
        paths = history.rollouts(home / "sessions")
        history.combine([history.scan_files(paths)])
        total = time.perf_counter() - began
        runs.append({**spent, "other": total - sum(spent.values()), "total": total})
    best = min(runs, key=lambda run: run["total"])
    return {"times": [run["total"] for run in runs], "ok": True, "phases": best,
            "rss": peak_rss_mib(), "what": "  ".join(
                f"{phase} {seconds:.3f} s ({seconds / best['total']:.0%})"
                for phase, seconds in best.items() if phase != "total")}


def phase_calibrate(home: Path, repeat: int) -> dict[str, Any]:
    """This machine's yardsticks: one plain ``find`` pass over the tree (memory-mapped), and
    plain ``for line in file`` iteration — the two figures the issue quotes for its machine."""
    import mmap

    paths = sorted((home / "sessions").rglob("rollout-*.jsonl"))
    size = sum(p.stat().st_size for p in paths) / MIB
    finds, lines = [], []
    for _ in range(repeat):
        began = time.perf_counter()
        for path in paths:
            with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0,
                                                      access=mmap.ACCESS_READ) as data:
                data.find(b'"no such needle in any rollout"')
        finds.append(time.perf_counter() - began)
    for _ in range(min(repeat, 2)):
        began = time.perf_counter()
        for path in paths:
            with path.open("rb") as handle:
                for _line in handle:
                    pass
        lines.append(time.perf_counter() - began)
    return {"times": finds, "lines": lines, "ok": True, "mib": size, "rss": peak_rss_mib(),
            "what": f"plain line iteration: {size / min(lines):,.0f} MiB/s"}


def phase_incremental(home: Path, rounds: int) -> dict[str, Any]:
    times, size = asyncio.run(incremental(home, rounds))
    return {"times": times, "ok": True, "what": f"{rounds} appends of {size} bytes",
            "rss": peak_rss_mib()}


# -- driver -----------------------------------------------------------------------------------


def run_phase(args: argparse.Namespace, home: Path, *extra: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--phase", *extra, "--tree", str(home.parent),
               "--repeat", str(args.repeat)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def child(args: argparse.Namespace) -> None:
    home = Path(args.tree) / "codex"
    name = args.phase[0]
    if name == "calibrate":
        result = phase_calibrate(home, args.repeat)
    elif name == "start":
        result = phase_start(home, args.repeat, args.phase[1] == "warm")
    elif name == "phases":
        result = phase_breakdown(home, args.repeat)
    elif name == "history":
        result = phase_history(home, args.repeat, int(args.phase[1]))
    else:
        result = phase_incremental(home, 20)
    print(json.dumps(result))


def show(label: str, result: dict[str, Any], target: str, mib: float | None = None) -> None:
    best, median = min(result["times"]), statistics.median(result["times"])
    if mib is not None:
        figure = f"{mib / best:,.0f} MiB/s  [{mib / median:,.0f}]  ({best:.3f} s)"
    elif best < 0.05:
        worst = max(result["times"])
        figure = f"{best * 1000:.2f} ms  [{median * 1000:.2f} ms, max {worst * 1000:.2f}]"
    else:
        figure = f"{best:.3f} s  [{median:.3f} s]"
    rss = f"peak RSS {result['rss']:.0f} MiB"
    if result.get("children_rss"):
        rss += f" (+ workers {result['children_rss']:.0f} MiB each at most)"
    status = "ok" if result["ok"] else "WRONG"
    print(f"{label:<38} {figure:<44} target {target:<12} {status}  {rss}")
    print(f"{'':<38} {result['what']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", help="a directory holding codex/ (made by the generator)")
    parser.add_argument("--codex-mb", type=float, default=1024)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--phase", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        child(args)
        return 0
    home = Path(args.tree) / "codex" if args.tree else ensure_tree(Path("/tmp/gk-bench"),
                                                                     args.codex_mb)
    size = sum(p.stat().st_size for p in (home / "sessions").rglob("rollout-*.jsonl")) / MIB
    files = sum(1 for _ in (home / "sessions").rglob("rollout-*.jsonl"))
    print(f"Codex tree {home}: {files} rollouts, {size:,.0f} MiB; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    expected(home)  # the reference answer, computed once (and the tree read into the cache)
    calibration = run_phase(args, home, "calibrate")
    show("this machine: one find pass, no work", calibration, "(yardstick)", calibration["mib"])
    show("(a) start → gauges + goal list, cold", run_phase(args, home, "start", "cold"),
         "< 0.5 s")
    show("(a) start, warm (start index kept)", run_phase(args, home, "start", "warm"), "< 0.5 s")
    show("(b) the scan's own time per phase, 1 process", run_phase(args, home, "phases"),
         "(where)")
    cpus = os.cpu_count() or 1
    for workers in sorted({1, cpus}):
        result = run_phase(args, home, "history", str(workers))
        show(f"(b) full-history scan, {workers} process{'es' if workers > 1 else ''}", result,
             "≥ 1000 MiB/s", result["mib"])
    show("(c) incremental update, 1 KB append", run_phase(args, home, "incremental"), "< 5 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
