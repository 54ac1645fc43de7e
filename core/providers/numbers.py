"""Numbers read from providers' files and answers: finite and in range, or refused.

JSON has no infinity, but Python's parser reads ``1e999`` as one (and ``NaN`` as not-a-number);
an agent's file can also simply be wrong (a negative percentage). Every provider number that
decides something — a percentage, a reset delay, a window length — goes through :func:`finite`
at its parse point, so one poisoned line is *refused there* (the provider skips it with one log
message) instead of reading as "0 % used" or crashing a ``timedelta`` later on.
"""

from __future__ import annotations

import logging
import math
from typing import Any

log = logging.getLogger("goalkeeper")

#: percentages above 100 are clamped up to this (an overdrawn window); beyond it, refused
MAX_PERCENT_READ = 1000.0
#: a reset further away than this is not a plan (a year and a day)
MAX_RESET_SECONDS = 366 * 86400.0

_warned: set[tuple[str, str]] = set()


class BadNumber(ValueError):
    """A value that is not a finite number within its range."""


def finite(value: Any, name: str, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a float, if it is a finite number (not a bool) in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadNumber(f"{name} is not a number: {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        raise BadNumber(f"{name} is out of range: {value!r}") from None
    if not math.isfinite(number):
        raise BadNumber(f"{name} is not finite: {value!r}")
    if (low is not None and number < low) or (high is not None and number > high):
        raise BadNumber(f"{name} {number:g} is out of range [{low}, {high}]")
    return number


def percent(value: Any, name: str = "used percent") -> float:
    """A used percentage: finite, not negative; 100–1000 reads as 100 (overdrawn)."""
    return min(finite(value, name, 0.0, MAX_PERCENT_READ), 100.0)


def warn_once(source: str, reason: str) -> None:
    """One log line per source and reason: a broken writer must not flood the log."""
    if (source, reason) not in _warned:
        _warned.add((source, reason))
        log.warning("skipping a bad value from %s: %s", source, reason)


def forget_warnings() -> None:
    """Warn again about what was warned about (a new provider instance; tests)."""
    _warned.clear()
