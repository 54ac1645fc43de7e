"""Temporary files of interrupted atomic writes are removed when a host starts."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.atomic import atomic_write_text, remove_leftovers
from core.clock import FakeClock
from core.engine import Engine
from core.paths import Paths
from core.settings import Settings
from tests.support.faults import ROOT

KILLED_WRITER = """
import os, sys, tempfile
from pathlib import Path
target = Path(sys.argv[1])
fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp",
                           dir=target.parent)
os.write(fd, b"half a state file")
os.kill(os.getpid(), 9)  # killed between the write and the rename
"""


def _killed_write(target: Path) -> None:
    subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], cwd=ROOT, check=False)


@pytest.mark.asyncio
async def test_a_host_removes_the_leftovers_of_killed_writers_at_start(
        paths: Paths, clock: FakeClock) -> None:
    run_dir = paths.data_dir / "pipelines" / "digest" / "runs" / "digest-1"
    run_dir.mkdir(parents=True)
    atomic_write_text(run_dir / "state.json", "{}")
    _killed_write(run_dir / "state.json")
    _killed_write(paths.data_dir / "host.json")
    legacy = paths.data_dir / ".config.toml.abcd1234.tmp"  # an older name without a pid
    legacy.write_text("old")
    os.utime(legacy, (time.time() - 3600, time.time() - 3600))
    mine = paths.data_dir / "notes.tmp"  # not an atomic write's name: left alone
    mine.write_text("keep")
    leftovers = [p for p in paths.data_dir.rglob("*.tmp") if p != mine]
    assert len(leftovers) == 3
    engine = Engine(paths, Settings(), [], clock, random.Random(1))
    await engine.start()
    try:
        assert [p for p in paths.data_dir.rglob("*.tmp") if p != mine] == []
        assert mine.read_text() == "keep"
        assert (run_dir / "state.json").read_text() == "{}"
    finally:
        await engine.stop()


def test_a_write_under_way_in_a_live_process_is_left_alone(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        busy = tmp_path / f".state.json.{proc.pid}.abcdefgh.tmp"
        busy.write_text("being written")
        assert list(remove_leftovers(tmp_path)) == []
        assert busy.exists()
    finally:
        proc.kill()
        proc.wait()
    assert list(remove_leftovers(tmp_path)) == [busy]
