"""Quota arithmetic and the quota state machine with hysteresis.

Three kinds of window (see :class:`core.models.QuotaKind`): periodic windows reset at an instant,
capacity quotas only when refilled by hand, token buckets refill continuously. A reading is turned
into its *effective* value at a given instant — a periodic window whose reset instant has passed
counts as empty (``inferred``), a bucket has refilled (``estimated``), an old reading is ``stale``.

Each window's tracker is a small state machine, written as data like the goal machine
(:mod:`core.goals.machine`): the states are :class:`WindowState` (``unknown → ok ⇄ exhausted``),
each evaluation of the effective reading is one :class:`QuotaEvent`, and :data:`TRANSITIONS` is
the one table of moves, consulted by :func:`next_window_state`. A window enters ``exhausted`` at
the pause threshold (or when the provider says so) and leaves it only when the effective reading
has stayed at or below the resume threshold for ``stable_seconds`` — so readings flapping around
the boundary never make goals oscillate. Edges are reported once:
:class:`~core.events.QuotaExhausted` on the falling edge, :class:`~core.events.QuotaRecovered` on
the rising edge; sustained states report nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from core.models import Exactness, QuotaKind

if TYPE_CHECKING:
    from typing import TypeAlias

    from core.events import QuotaExhausted, QuotaRecovered
    from core.models import QuotaReading

    QuotaEdge: TypeAlias = QuotaExhausted | QuotaRecovered
else:
    def __getattr__(name: str) -> Any:
        """``QuotaEdge``: the events are loaded by what announces edges, not by a command
        that only shows a window (``effective``, issue 24)."""
        if name == "QuotaEdge":
            from core.events import QuotaExhausted, QuotaRecovered

            return QuotaExhausted | QuotaRecovered
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class HysteresisPolicy:
    """When a window counts as exhausted, and when as recovered again.

    Attributes:
        pause_threshold_percent: used % at or above which the window is exhausted.
        resume_threshold_percent: used % at or below which it may count as recovered.
        stable_seconds: how long it must stay there before it does.
        stale_after_seconds: readings older than this are shown as ``stale``.
    """

    pause_threshold_percent: float = 100.0
    resume_threshold_percent: float = 90.0
    # 30 s, not the forecast's 120 s (``core/quota/forecast.py`` ``_MIN_SPAN``), on purpose:
    # the two answer different questions. This one asks "is the drop real, not one flapping
    # reading?" — a reset is a jump from ~100 % to ~0 %, seen again by the next reading or two
    # (Codex writes one per turn, the Claude and fallback polls come ≥ 30 s apart), and every
    # automatic resume also takes a fresh reading right before it starts; waiting longer only
    # delays the resume. The forecast asks "how fast is it rising?" — a pace over less than
    # two minutes of readings is noise.
    stable_seconds: float = 30.0
    stale_after_seconds: float = 600.0

    def __post_init__(self) -> None:
        if not 0 < self.pause_threshold_percent <= 100:
            raise ValueError("pause_threshold_percent must be in (0, 100]")
        if not 0 <= self.resume_threshold_percent < self.pause_threshold_percent:
            raise ValueError("resume_threshold_percent must be in [0, pause_threshold_percent)")
        if self.stable_seconds < 0 or self.stale_after_seconds <= 0:
            raise ValueError("stable_seconds must be >= 0 and stale_after_seconds > 0")


def used_percent(reading: QuotaReading) -> float | None:
    """The used share of a reading, from whichever fields it has."""
    if reading.used_percent is not None:
        return reading.used_percent
    if reading.used is not None and reading.limit:
        return 100.0 * reading.used / reading.limit
    if reading.tokens is not None and reading.burst:
        return 100.0 * (1.0 - reading.tokens / reading.burst)
    return None


def effective(reading: QuotaReading, now: datetime, policy: HysteresisPolicy) -> QuotaReading:
    """What ``reading`` implies at ``now``: resets passed, buckets refilled, age marked."""
    if reading.kind is QuotaKind.TOKEN_BUCKET:
        return _refilled_bucket(reading, now)
    if reading.kind is QuotaKind.PERIODIC and reading.resets_at and reading.resets_at <= now:
        return _after_reset(reading, now)
    age = (now - reading.observed_at).total_seconds()
    if age > policy.stale_after_seconds and reading.exactness is Exactness.EXACT:
        return reading.model_copy(update={"exactness": Exactness.STALE})
    return reading


def _after_reset(reading: QuotaReading, now: datetime) -> QuotaReading:
    assert reading.resets_at is not None
    next_reset: datetime | None = None
    if reading.window_seconds:
        period = timedelta(seconds=reading.window_seconds)
        next_reset = reading.resets_at + period
        while next_reset <= now:
            next_reset += period
    return reading.model_copy(
        update={
            "used_percent": 0.0,
            "used": 0.0 if reading.used is not None else None,
            "limit_reached": False,
            "exactness": Exactness.INFERRED,
            "resets_at": next_reset,
            "note": f"reset at {reading.resets_at.isoformat()} has passed",
        }
    )


def _refilled_bucket(reading: QuotaReading, now: datetime) -> QuotaReading:
    if reading.tokens is None or not reading.burst or reading.rate_per_second is None:
        return reading
    elapsed = max(0.0, (now - reading.observed_at).total_seconds())
    tokens = min(reading.burst, reading.tokens + reading.rate_per_second * elapsed)
    if elapsed == 0:
        return reading
    return reading.model_copy(
        update={
            "tokens": tokens,
            "used_percent": 100.0 * (1.0 - tokens / reading.burst),
            "limit_reached": tokens < 1.0,
            "exactness": Exactness.ESTIMATED,
        }
    )


def seconds_until_tokens(reading: QuotaReading, units: float, now: datetime) -> float | None:
    """Seconds until a token bucket holds ``units`` tokens; None if it never will."""
    if reading.kind is not QuotaKind.TOKEN_BUCKET or reading.tokens is None:
        return None
    if reading.burst is not None and units > reading.burst:
        return None
    current = _refilled_bucket(reading, now).tokens or 0.0
    if current >= units:
        return 0.0
    if not reading.rate_per_second:
        return None
    return (units - current) / reading.rate_per_second


def is_exhausted(reading: QuotaReading, policy: HysteresisPolicy) -> bool:
    if reading.limit_reached:
        return True
    used = used_percent(reading)
    return used is not None and used >= policy.pause_threshold_percent


def is_recovered_level(reading: QuotaReading, policy: HysteresisPolicy) -> bool:
    if reading.limit_reached:
        return False
    if reading.no_timed_reset and reading.limit_reached is False:
        # nothing but a refill lifts such a window, and its authority says it is lifted: a
        # capacity quota refilled from 0 to 5 % left is usable, though far above the band
        return True
    used = used_percent(reading)
    return used is not None and used <= policy.resume_threshold_percent


def recovery_instant(
    reading: QuotaReading, now: datetime, policy: HysteresisPolicy
) -> datetime | None:
    """When an exhausted window is expected to be usable again; None when no clock lifts it."""
    if reading.no_timed_reset or reading.kind is QuotaKind.CAPACITY:
        return None
    if reading.kind is QuotaKind.TOKEN_BUCKET and reading.burst:
        target = reading.burst * (1.0 - policy.resume_threshold_percent / 100.0)
        wait = seconds_until_tokens(reading, max(1.0, target), now)
        return None if wait is None else now + timedelta(seconds=wait)
    return reading.resets_at


class WindowState(StrEnum):
    UNKNOWN = "unknown"
    OK = "ok"
    EXHAUSTED = "exhausted"


class QuotaEvent(StrEnum):
    """What one evaluation found the effective reading to be, against the policy's band."""

    AT_LIMIT = "at_limit"  # at or above the pause threshold, or the provider says it is reached
    IN_BAND = "in_band"  # below the pause threshold, above the resume threshold
    BELOW_BAND = "below_band"  # at or below the resume threshold, not yet for stable_seconds
    STABLY_BELOW = "stably_below"  # at or below the resume threshold for stable_seconds


class Announce(StrEnum):
    """The edge a move reports (sustained states report nothing)."""

    NOTHING = "nothing"
    EXHAUSTED = "exhausted"  # QuotaExhausted: the falling edge
    RECOVERED = "recovered"  # QuotaRecovered: the rising edge


W, Q = WindowState, QuotaEvent

#: Every (state, event) pair and where it leads; the table is total (every reading leads
#: somewhere), and only the two edges announce anything.
TRANSITIONS: dict[tuple[WindowState, QuotaEvent], tuple[WindowState, Announce]] = {
    (W.UNKNOWN, Q.AT_LIMIT): (W.EXHAUSTED, Announce.EXHAUSTED),
    (W.UNKNOWN, Q.IN_BAND): (W.OK, Announce.NOTHING),
    (W.UNKNOWN, Q.BELOW_BAND): (W.OK, Announce.NOTHING),
    (W.UNKNOWN, Q.STABLY_BELOW): (W.OK, Announce.NOTHING),
    (W.OK, Q.AT_LIMIT): (W.EXHAUSTED, Announce.EXHAUSTED),
    (W.OK, Q.IN_BAND): (W.OK, Announce.NOTHING),
    (W.OK, Q.BELOW_BAND): (W.OK, Announce.NOTHING),
    (W.OK, Q.STABLY_BELOW): (W.OK, Announce.NOTHING),
    (W.EXHAUSTED, Q.AT_LIMIT): (W.EXHAUSTED, Announce.NOTHING),
    # the hysteresis: inside the band, or below it for less than stable_seconds, stays exhausted
    (W.EXHAUSTED, Q.IN_BAND): (W.EXHAUSTED, Announce.NOTHING),
    (W.EXHAUSTED, Q.BELOW_BAND): (W.EXHAUSTED, Announce.NOTHING),
    (W.EXHAUSTED, Q.STABLY_BELOW): (W.OK, Announce.RECOVERED),
}


class IllegalQuotaMove(Exception):
    """A (state, event) pair the table does not hold; always a bug."""

    def __init__(self, state: WindowState, event: QuotaEvent) -> None:
        super().__init__(f"quota window: {event.value} is not allowed from {state.value}")
        self.state = state
        self.event = event


def next_window_state(state: WindowState, event: QuotaEvent) -> tuple[WindowState, Announce]:
    """Where ``event`` moves a window in ``state`` and the edge it announces, or raise
    :class:`IllegalQuotaMove`."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalQuotaMove(state, event) from None


@dataclass
class WindowTracker:
    """The hysteresis state of one window; fed readings and re-evaluated as time passes."""

    window_id: str
    policy: HysteresisPolicy
    reading: QuotaReading | None = None
    state: WindowState = WindowState.UNKNOWN
    recovered_since: datetime | None = None

    def observe(self, reading: QuotaReading, now: datetime) -> list[QuotaEdge]:
        previous = self.reading
        if previous is not None and reading.observed_at < previous.observed_at:
            return []  # out of order: an older observation never overrides a newer one
        self.reading = reading
        if self._confirms_reset(previous, reading, now):
            assert previous is not None and previous.resets_at is not None
            # the window has been empty since it reset; this reading only confirms it
            self.recovered_since = previous.resets_at
        return self.evaluate(now)

    def _confirms_reset(self, previous: QuotaReading | None, reading: QuotaReading,
                        now: datetime) -> bool:
        return (
            self.state is WindowState.EXHAUSTED
            and self.recovered_since is None
            and previous is not None
            and previous.kind is QuotaKind.PERIODIC
            and previous.resets_at is not None
            and previous.resets_at <= reading.observed_at
            and is_recovered_level(effective(reading, now, self.policy), self.policy)
        )

    def evaluate(self, now: datetime) -> list[QuotaEdge]:
        from core.events import QuotaExhausted, QuotaRecovered

        if self.reading is None:
            return []
        current = effective(self.reading, now, self.policy)
        event, since = self._classify(current, now)
        if event is QuotaEvent.AT_LIMIT or self.state is WindowState.EXHAUSTED:
            self.recovered_since = since  # the hysteresis clock runs only while exhausted
        self.state, announce = next_window_state(self.state, event)
        if announce is Announce.EXHAUSTED:
            return [QuotaExhausted(self.window_id, current)]
        if announce is Announce.RECOVERED:
            assert since is not None
            return [QuotaRecovered(self.window_id, current, since)]
        return []

    def _classify(self, current: QuotaReading, now: datetime
                  ) -> tuple[QuotaEvent, datetime | None]:
        """The event ``current`` is at ``now``, and since when it has been at or below the
        resume threshold (None when it is not)."""
        if is_exhausted(current, self.policy):
            return QuotaEvent.AT_LIMIT, None
        if not is_recovered_level(current, self.policy):
            return QuotaEvent.IN_BAND, None
        since = self.recovered_since or self._recovered_from(current)
        if (now - since).total_seconds() >= self.policy.stable_seconds:
            return QuotaEvent.STABLY_BELOW, since
        return QuotaEvent.BELOW_BAND, since

    def _recovered_from(self, current: QuotaReading) -> datetime:
        assert self.reading is not None
        if current.exactness is Exactness.INFERRED and self.reading.resets_at is not None:
            return self.reading.resets_at  # recovered since the reset instant itself
        return current.observed_at

    def next_check(self, now: datetime) -> datetime | None:
        """When evaluating again could change the state without a new reading."""
        if self.state is not WindowState.EXHAUSTED or self.reading is None:
            return None
        if self.recovered_since is not None:
            return self.recovered_since + timedelta(seconds=self.policy.stable_seconds)
        instant = recovery_instant(effective(self.reading, now, self.policy), now, self.policy)
        return instant if instant is not None and instant > now else None

    @property
    def recovered(self) -> bool:
        return self.state is not WindowState.EXHAUSTED


class QuotaManager:
    """All windows' trackers; turns readings and the passing of time into quota edges.

    It owns no timers: the scheduler asks :meth:`next_check` when to call :meth:`evaluate`.
    """

    def __init__(self, policy: HysteresisPolicy) -> None:
        self.policy = policy
        self._trackers: dict[str, WindowTracker] = {}

    def tracker(self, window_id: str) -> WindowTracker:
        if window_id not in self._trackers:
            self._trackers[window_id] = WindowTracker(window_id, self.policy)
        return self._trackers[window_id]

    def observe(self, reading: QuotaReading, now: datetime) -> list[QuotaEdge]:
        return self.tracker(reading.window_id).observe(reading, now)

    def evaluate(self, now: datetime) -> list[QuotaEdge]:
        edges: list[QuotaEdge] = []
        for tracker in self._trackers.values():
            edges.extend(tracker.evaluate(now))
        return edges

    def next_check(self, now: datetime) -> datetime | None:
        times = [t for tr in self._trackers.values() if (t := tr.next_check(now)) is not None]
        return min(times, default=None)

    def effective(self, window_id: str, now: datetime) -> QuotaReading | None:
        tracker = self._trackers.get(window_id)
        if tracker is None or tracker.reading is None:
            return None
        return effective(tracker.reading, now, self.policy)

    def is_recovered(self, window_id: str) -> bool:
        """True unless the window is known exhausted (a window never read does not block)."""
        tracker = self._trackers.get(window_id)
        return tracker is None or tracker.recovered

    def readings(self, now: datetime) -> list[QuotaReading]:
        result = []
        for window_id in sorted(self._trackers):
            if (reading := self.effective(window_id, now)) is not None:
                result.append(reading)
        return result
