"""How much Hypothesis runs: little by default (fast local runs), more under CI=true — as much as
fits the test's time budget on CI's machine *loaded*.

CI runs on 2 cores with other work beside it (.ci/run is checked with two CPU hogs running), and
the whole run is cut after 20 minutes. On that machine the cost of an example moves with the
load (the state machine's went from 0.5 s to 1.4 s within an hour), so a fixed CI count that
fits an idle machine overruns a loaded one — 300 state-machine examples took 143 s and tripped
the 120 s limit. The dear property tests therefore bound their *time*: :func:`budgeted` repeats
a whole Hypothesis run of a few examples until the budget is spent (at least once, at most a
cap). Each run is an ordinary Hypothesis run — a failure stops at once and is shrunk and
reported as usual; only *new* runs stop when the time is up.

Under CI=true Hypothesis also runs under the ``ci`` profile (tests/conftest.py): no
per-example deadline, no "too slow" health check (wall-clock limits that fail on load, not on
code).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable


def on_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def examples(default: int, ci: int) -> int:
    return ci if on_ci() else default


def budgeted(run: Callable[[], None], seconds: float, most: int) -> int:
    """Call ``run`` until ``seconds`` have passed or it ran ``most`` times (at least once);
    returns how many times it ran. With ``seconds=0`` it runs once."""
    began = time.monotonic()
    runs = 0
    while True:
        run()
        runs += 1
        if runs >= most or time.monotonic() - began >= seconds:
            return runs
