"""A cut run leaves nothing behind: SIGKILL a pytest that has started the test PostgreSQL server,
a daemon and a detached process; all of them end within seconds (tests/support/reaper.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.faults import ROOT, wait_for

CHILD = "tests/support/cut_run_child.py"


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody has reaped yet counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="the reaper needs Linux's pidfd")
def test_a_killed_run_takes_its_server_and_hosts_with_it(tmp_path: Path) -> None:
    report = tmp_path / "started.json"
    env = {**os.environ, "GK_CUT_RUN_REPORT": str(report)}
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "--basetemp", str(tmp_path / "child"), CHILD], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: report.exists() or run.poll() is not None, timeout=90)
        assert report.exists(), run.communicate()[0]
        started = json.loads(report.read_text())
        pids = [started[k] for k in ("postmaster", "daemon", "detached")]
        assert all(alive(pid) for pid in pids)
    finally:
        run.send_signal(signal.SIGKILL)  # no teardown, no atexit: only the reaper is left
        run.wait(10)
        if run.stdout:
            run.stdout.close()
    began = time.monotonic()
    wait_for(lambda: not any(alive(pid) for pid in pids), timeout=15)
    wait_for(lambda: not Path(started["root"]).exists(), timeout=5)
    # a daemon stops at once on SIGTERM; the server too once its clients are gone
    assert time.monotonic() - began < 10
