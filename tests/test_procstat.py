"""``/proc/<pid>/stat`` read once for every provider (Linux)."""

from __future__ import annotations

import os
import sys

import pytest

from core.providers import procstat

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


def test_this_process_as_proc_tells_it() -> None:
    me = os.getpid()
    assert procstat.parent(me) == os.getppid()
    assert procstat.state(me) in ("R", "S")
    started = procstat.start_time(me)
    assert started is not None and started.isdigit()
    assert started == procstat.start_time(me)  # the same process, the same start


def test_a_pid_that_does_not_exist_says_nothing() -> None:
    gone = 2 ** 22 + 12345
    assert procstat.stat_fields(gone) is None
    assert (procstat.start_time(gone), procstat.parent(gone), procstat.state(gone)) == (
        None, None, None)
