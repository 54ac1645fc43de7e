"""The StopFailure hook's fast path: durable, before anything else, and deaf to SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from core.providers.claude import stop_hook
from core.providers.claude.events import event_from_json
from core.providers.claude.hooks import stop_failure_command

PAYLOAD = (Path(__file__).parent / "fixtures" / "payloads" / "stop_failure.json").read_bytes()


def test_the_spool_line_carries_the_raw_payload() -> None:
    line = stop_hook.spool_line(b'{"a":\n 1}\n', 1796160984.142)
    assert line == b'{"received_at":1796160984.142,"payload":{"a":  1}}\n'
    assert stop_hook.spool_line(b"not json", 1.0) is None
    event = event_from_json(json.loads(stop_hook.spool_line(PAYLOAD, 1796160984.0) or b""))
    assert event is not None and event.kind == "stop_failure"
    assert event.text.startswith("You've hit your session limit")


def test_the_installed_command_survives_sigterm_right_after_it_starts(tmp_path: Path) -> None:
    # print mode sends SIGTERM ~25 ms after starting a hook (B0): here it comes before the
    # payload has even been written to the hook's stdin
    spool = tmp_path / "data" / "claude" / "hook-events.jsonl"
    command = stop_failure_command(sys.executable, Path(stop_hook.__file__), spool)
    proc = subprocess.Popen(["sh", "-c", command], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 10
    while not ignores_sigterm(proc.pid):  # the shell's trap has run (the real CLI gives 25 ms)
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.001)
    proc.send_signal(signal.SIGTERM)
    assert proc.stdin is not None
    proc.stdin.write(PAYLOAD)
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0
    (line,) = spool.read_bytes().splitlines()
    data = json.loads(line)
    assert data["payload"]["hook_event_name"] == "StopFailure"
    assert abs(data["received_at"] - time.time()) < 60
    assert (spool.stat().st_mode & 0o777) == 0o600


def ignores_sigterm(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:"))
    return bool(int(mask, 16) & (1 << (signal.SIGTERM - 1)))


def test_a_broken_payload_is_dropped_and_the_hook_still_exits_0(tmp_path: Path) -> None:
    spool = tmp_path / "spool.jsonl"
    done = subprocess.run([sys.executable, "-I", "-S", stop_hook.__file__, str(spool)],
                          input=b"{broken", capture_output=True, timeout=10, check=False)
    assert done.returncode == 0 and not spool.exists()
