"""Issue 21, on real processes: a host started under ``faketime +2h`` (Debian's libfaketime)
neither freezes its account's shared reading nor goes unnoticed — the correct host's readings
keep winning, and ``status`` on both hosts names the skewed one with its offset."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tests.support.multihost import soon, wait_for

pytestmark = pytest.mark.skipif(shutil.which("faketime") is None,
                                reason="needs Debian's faketime (.ci/run installs it)")
NAMED = "host bravo: its clock is 2:00:"


def _used(status: dict[str, Any]) -> float | None:
    window = next((q for q in status["quotas"] if q["id"] == "fake:5h"), None)
    return window["used_percent"] if window else None


def _named(text: str) -> str | None:
    return text if NAMED in text else None


def test_a_host_two_hours_fast_never_freezes_the_shared_reading(hosts: Any) -> None:
    a = hosts("alpha")
    b = hosts("bravo", wrap=("faketime", "-f", "+2h"))
    for host in (a, b):
        host.start()
    for host in (a, b):
        host.ready()
    b.quota([{"window": "fake:5h", "used": 100, "limit_reached": True,
              "resets_at": soon(3 * 3600)}])
    a.quota([{"window": "fake:5h", "used": 10, "limit_reached": False,
              "resets_at": soon(3600)}])
    wait_for(lambda: _used(a.cli_json("status")) == 10, what="alpha's reading is the latest")
    a.quota([{"window": "fake:5h", "used": 20, "limit_reached": False,
              "resets_at": soon(3600)}])
    wait_for(lambda: _used(a.cli_json("status")) == 20, what="alpha's next reading wins too")
    for host in (a, b):
        text = wait_for(lambda h=host: _named(h.cli("status").stdout),
                        what=f"status on {host.host_id} names bravo's clock")
        assert "alpha: its clock" not in text
        problems = host.cli_json("status")["clock_problems"]
        assert len(problems) == 1 and problems[0].startswith(NAMED), problems
    listed = {h["host"]: h for h in a.cli_json("hosts")["hosts"]}
    assert listed["bravo"]["clock_skewed"] and not listed["alpha"]["clock_skewed"]
    assert 7190 < listed["bravo"]["clock_offset_seconds"] < 7210
