"""The run that tests/faults/test_cut_run.py cuts: it starts the test PostgreSQL server, a daemon
and a detached process, says where they are, and waits to be killed. Not collected by a normal
run (its name does not start with ``test_``); the parent names it on the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.faults import daemon


def test_start_everything_then_wait_to_be_killed(pg_server: Any, tmp_path: Path) -> None:
    report = os.environ.get("GK_CUT_RUN_REPORT")
    if not report:
        pytest.skip("run by tests/faults/test_cut_run.py only")
    detached = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                start_new_session=True)
    with daemon(tmp_path / "home", goals=False) as host:
        postmaster = int((pg_server.data / "postmaster.pid").read_text().split()[0])
        info = {"postmaster": postmaster, "root": str(pg_server.root), "daemon": host.pid,
                "detached": detached.pid}
        Path(report + ".tmp").write_text(json.dumps(info))
        os.replace(report + ".tmp", report)
        time.sleep(600)
