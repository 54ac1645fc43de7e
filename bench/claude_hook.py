#!/usr/bin/env python3
"""Benchmark of the Claude StopFailure hook: process start → durable spool write.

    python bench/claude_hook.py [--runs N]

Claude Code 2.1.328 in print mode sends SIGTERM to a hook process about 25 ms after starting it
(B0). This starts the hook exactly as ``goalkeeper hooks install claude`` installs it — ``sh -c
"trap '' TERM; exec <python> -I -S …/stop_hook.py <spool>"`` — N times with a real StopFailure
payload on stdin, and measures from just before the spawn to the moment the line is durable: the
hook's ``fsync`` has returned (the time the script's own ``os.fsync`` returns is recorded by
wrapping it; see ``_timed_hook``). For comparison it also times the full ``goalkeeper hook
claude-stop-failure`` command (which imports the whole CLI). Prints median, p90 and max in ms;
target < 10 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.providers.claude import stop_hook  # noqa: E402
from core.providers.claude.hooks import stop_failure_command  # noqa: E402

PAYLOAD = json.dumps({
    "session_id": "5fec7e4e-7da0-4aa8-bcf3-ae2afe304ba3",
    "transcript_path": "/home/dev/.claude/projects/-home-dev-myrepo/5fec7e4e.jsonl",
    "cwd": "/home/dev/myrepo", "prompt_id": "66ca1191-edca-4ef8-b096-be295337e348",
    "effort": {"level": "medium"}, "hook_event_name": "StopFailure", "error": "rate_limit",
    "last_assistant_message": "You've hit your 5-hour limit · resets 11:36pm (UTC)"}).encode()


def _timed_hook(directory: Path) -> Path:
    """The hook script, unchanged, plus a line that prints the wall time once fsync returned."""
    source = Path(stop_hook.__file__).read_text()
    timed = source.replace("                os.fsync(fd)\n",
                           "                os.fsync(fd)\n"
                           "                os.write(2, b'%.6f' % time.time())\n")
    assert timed != source, "stop_hook.py changed shape: update the bench"
    path = directory / "stop_hook_timed.py"
    path.write_text(timed)
    return path


def fast_hook(runs: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="gk-hook-") as tmp:
        script = _timed_hook(Path(tmp))
        spool = Path(tmp) / "claude" / "hook-events.jsonl"
        command = stop_failure_command(sys.executable, script, spool)
        times = []
        for _ in range(runs):
            t0 = time.time()
            done = subprocess.run(["sh", "-c", command], input=PAYLOAD, capture_output=True,
                                  check=True)
            times.append((float(done.stderr) - t0) * 1000)
        assert len(spool.read_bytes().splitlines()) == runs
    return times


def full_command(runs: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="gk-hook-") as tmp:
        spool = Path(tmp) / "claude" / "hook-events.jsonl"
        times = []
        for _ in range(runs):
            t0 = time.time()
            subprocess.run([sys.executable, "-m", "core", "hook", "claude-stop-failure"],
                           input=PAYLOAD, capture_output=True, check=True, cwd=ROOT,
                           env={"GOALKEEPER_HOME": tmp, "PATH": "/usr/bin:/bin"})
            times.append((spool.stat().st_mtime - t0) * 1000)  # the last write's mtime
    return times


def report(label: str, times: list[float]) -> None:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    print(f"{label}: median {statistics.median(ordered):.1f} ms, p90 {p90:.1f} ms, "
          f"max {ordered[-1]:.1f} ms ({len(ordered)} runs)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args(argv)
    report("installed hook (sh + trap + python -I -S), start → fsync done", fast_hook(args.runs))
    report("goalkeeper hook claude-stop-failure, start → spool written",
           full_command(max(5, args.runs // 10)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
