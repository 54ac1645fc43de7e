"""Claude Code's limit messages, read: which window ran out and when it resets.

A 2.1.x limit stop carries its window and its exact reset in structured fields
(:class:`~core.providers.claude.records.LimitInfo`: ``rateLimitType``, ``resetsAt`` in epoch
seconds); those win over the words. Without them (older versions, hook payloads) the text is
read. It names the reset as a *wall-clock time and an IANA zone without a date* — "You've hit
your session limit · resets 6:40pm (Europe/Berlin)" — so the instant is only defined relative to
the stop itself: the first such wall time after the stop's own timestamp, in that zone, DST
included. Claude truncates the reset to the minute (22:41:54 reads "10:41pm"), so a text reset
is taken as the *last* second of that minute: a resume is never planned before the real reset.
Variants handled (see ``provider-formats.md`` B0/B2):

* "You've hit your weekly limit · resets Tuesday" — a weekday, no time: the end of that day
  (the reset surely happened by then);
* "You're out of extra usage · resets 11:30am (Asia/Colombo)", "… resets Oct 3, 9am (UTC)";
* a trailing sentence: "You've hit your Fable limit · resets Dec 4, 8:17pm (UTC). Switch to
  another model to continue.";
* the older "Claude usage limit reached. Your limit will reset at 12am." — no zone: the user's
  zone (setting ``claude_timezone``, else the system's);
* "Claude AI usage limit reached|1783440000" (older transcripts, headless results) — an epoch,
  hence ``exact``.

Everything derived from wall-clock text is ``inferred``. Text whose reset cannot be read gives a
:class:`ParsedLimit` with ``resets_at=None``: shown, never auto-resumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from core.clock import zone_named
from core.i18n import N_
from core.models import Exactness
from core.providers.claude.records import LimitInfo
from core.providers.claude.wording import EPOCH, WINDOW_BY_TYPE, window_of

#: a reset read from minute-precise text may lie up to this much later than the minute shown
MINUTE_SLACK = timedelta(seconds=59)

# the text after "resets"/"reset at", up to the end of its line or the next "·"
_RESET_TAIL = re.compile(r"\breset(?:s)?\b(?:\s+(?:at|on))?\s+([^\n·]+)", re.IGNORECASE)
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SPEC = re.compile(
    r"""^\s*
    (?:(?P<wd>mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s*)?
    (?:(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+
       (?P<day>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{4}))?,?\s*)?
    (?:at\s+)?
    (?:(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?\s?m\.?)?)?
    \s*(?:\((?P<zone>[^)]*)\))?
    \s*(?:[.!](?:\s+\S.*)?)?$""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class ParsedLimit:
    """What a limit message says.

    Attributes:
        window: the quota window that ran out (``claude:5h``, ``claude:7d``, ...).
        resets_at: when it resets (None: unknown — never auto-resumed).
        exactness: ``exact`` for an epoch, ``inferred`` for wall-clock text.
        note: why the reset is approximate or unknown, for the views and the history.
        text: the message itself (first line), for the goal's pause detail.
    """

    window: str
    resets_at: datetime | None
    exactness: Exactness
    note: str | None
    text: str


def parse_limit(text: str, stopped_at: datetime, default_zone: tzinfo,
                info: LimitInfo | None = None) -> ParsedLimit:
    """Read a limit stop at ``stopped_at`` (aware): its structured ``info`` when it has one,
    else its text. ``default_zone`` applies when the message names no zone."""
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    window = window_of(text)
    if info is not None and info.rate_limit_type in WINDOW_BY_TYPE:
        window = WINDOW_BY_TYPE[info.rate_limit_type]
    if info is not None and info.resets_at is not None:
        instant = datetime.fromtimestamp(info.resets_at, UTC)
        return ParsedLimit(window, instant, Exactness.EXACT, None, _display(first_line))
    if match := EPOCH.search(text):
        instant = datetime.fromtimestamp(int(match.group(1)), UTC)
        return ParsedLimit(window, instant, Exactness.EXACT, None, _display(first_line))
    tail = _RESET_TAIL.search(text)
    if tail is None:
        return ParsedLimit(window, None, Exactness.INFERRED, N_("the message gives no reset time"),
                           first_line)
    resets_at, note = resolve_spec(tail.group(1), stopped_at, default_zone)
    if resets_at is not None and note is None:
        resets_at += MINUTE_SLACK  # "resets 10:41pm" may be 22:41:59
    return ParsedLimit(window, resets_at, Exactness.INFERRED, note, first_line)


def _display(line: str) -> str:
    return EPOCH.sub("usage limit reached", line)


def resolve_spec(spec: str, stopped_at: datetime, default_zone: tzinfo
                 ) -> tuple[datetime | None, str | None]:
    """Turn "6:40pm (Europe/Berlin)", "Tuesday", "Oct 3, 9am (UTC)" into an instant.

    Returns (instant, note); instant None when the text cannot be read.
    """
    match = _SPEC.match(spec)
    if match is None or not (match["wd"] or match["mon"] or match["hour"]):
        return None, N_("cannot read the reset time {text!r}").format(text=spec.strip())
    zone = _zone(match["zone"], default_zone)
    if zone is None:
        return None, N_("unknown time zone {zone!r}").format(zone=match["zone"])
    clock = _clock(match["hour"], match["minute"], match["ampm"])
    if match["hour"] and clock is None:
        return None, N_("cannot read the reset time {text!r}").format(text=spec.strip())
    local_stop = stopped_at.astimezone(zone)
    day = _day(match, local_stop.date())
    if day is None:
        return None, N_("cannot read the reset date {text!r}").format(text=spec.strip())
    if clock is None:
        # a day without a time: the reset happened at some point that day; its end is safe
        instant = _at(day + timedelta(days=1), time(0), zone, stopped_at)
        return instant, N_("reset day given without a time: assumed the end of that day")
    if match["wd"] and not match["mon"]:
        # with a time, today's name is today while that time is still ahead of the stop
        today = _at(day - timedelta(days=7), clock, zone, stopped_at)
        if today is not None and today > stopped_at:
            return today, None
    if match["wd"] or match["mon"]:
        return _at(day, clock, zone, stopped_at), None
    return next_occurrence(clock, zone, stopped_at), None


def _zone(name: str | None, default_zone: tzinfo) -> tzinfo | None:
    if name is None or not name.strip():
        return default_zone
    key = name.strip()
    if key.upper() in ("UTC", "GMT", "Z"):
        return UTC
    return zone_named(key)


def _clock(hour: str | None, minute: str | None, ampm: str | None) -> time | None:
    if hour is None:
        return None
    h, m = int(hour), int(minute or 0)
    if ampm:
        if not 1 <= h <= 12:
            return None
        pm = ampm.lower().startswith("p")
        h = (h % 12) + (12 if pm else 0)
    elif minute is None:
        return None  # a bare "7" could be morning or evening
    if not (0 <= h <= 23 and 0 <= m <= 59):
        return None
    return time(h, m)


def _day(match: re.Match[str], stop_day: date) -> date | None:
    if match["mon"]:
        month = _MONTHS.index(match["mon"][:3].lower()) + 1
        year = int(match["year"]) if match["year"] else stop_day.year
        try:
            day = date(year, month, int(match["day"]))
        except ValueError:
            return None
        if not match["year"] and day < stop_day - timedelta(days=1):
            day = day.replace(year=year + 1)  # "resets Jan 2" said on Dec 30
        return day
    if match["wd"]:
        wanted = _WEEKDAYS.index(match["wd"][:3].lower())
        ahead = (wanted - stop_day.weekday()) % 7 or 7  # today's name means next week
        return stop_day + timedelta(days=ahead)
    return stop_day


def next_occurrence(clock: time, zone: tzinfo, after: datetime) -> datetime:
    """The first instant after ``after`` at which the wall clock in ``zone`` shows ``clock``.

    DST-correct: on a fall-back night a repeated wall time has two instants and the earlier one
    still ahead wins; a wall time skipped by a spring-forward gap is read with the offset in force
    before the jump (2:30 on a night that skips 2:00-3:00 becomes 3:30).
    """
    day = after.astimezone(zone).date()
    for offset in range(3):
        instant = _at(day + timedelta(days=offset), clock, zone, after)
        if instant is not None and instant > after:
            return instant
    raise AssertionError("unreachable: a wall time recurs every day")


def _at(day: date, clock: time, zone: tzinfo, after: datetime) -> datetime | None:
    """The instant of ``day`` + ``clock`` in ``zone``: the earliest one after ``after`` if the
    wall time is ambiguous, else the only one (which may lie before ``after``)."""
    naive = datetime.combine(day, clock)
    candidates = []
    for fold in (0, 1):
        local = naive.replace(tzinfo=zone, fold=fold)
        instant = local.astimezone(UTC)
        if instant.astimezone(zone).replace(tzinfo=None) != naive:
            # in a spring-forward gap: fold 0 reads it with the old offset, i.e. just after
            candidates = [naive.replace(tzinfo=zone, fold=0).astimezone(UTC)]
            break
        candidates.append(instant)
    candidates = sorted(set(candidates))
    later = [c for c in candidates if c > after]
    return later[0] if later else candidates[-1]
