#!/usr/bin/env python3
"""What ``goalkeeper status`` must show for a tree of ``bench/gen_usage_trees.py`` —
worked out without Goalkeeper's code, and checked against the generator's manifest.

    python bench/tree_oracle.py TREE            # print the expected goals and gauges

The benches that time how fast the gauges and goals appear (``startup_gauges.py``) compare what
the host shows with this. It reads every line of both trees that can matter (a byte search for
the few keys, ``json.loads`` of the lines that hold them), and first proves it read the whole
tree: its counts of files, ``thread_goal_updated`` events, Codex limit stops and Claude API-error
lines must equal the manifest's. What it then expects:

* **Codex goals**: one per thread with a ``thread_goal_updated`` event; its last status decides
  the state — ``complete`` is done, ``usageLimited`` (or an ``active`` followed by a turn stopped
  with ``usage_limit_exceeded``) is paused for quota, and a bare ``active`` is paused with status
  unknown (``external``: the trees have no goals database, so a rollout's ``active`` says
  nothing about now).
* **Codex gauges**: the newest ``rate_limits`` (by line timestamp, any file): the 5-hour and
  the weekly ``used_percent``, and their resets where the shape gives one.
* **Claude goals**: the sessions whose last message is a limit stop that is recent (24 h) or
  whose reset is ahead — the generator writes none (every stop is followed by more work).
* **Claude gauges**: the newest stop of each window ("weekly" texts: 7 days, the others 5
  hours): exhausted until its reset, then free with the reset moved on by the window's length.

Resets are compared to the minute (a limit text names a minute, Goalkeeper takes its last
second). The facts are cached next to the manifest (``.oracle-<hash>.json``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

GOAL = b'"thread_goal_updated"'
RATES = b'"rate_limits":{'
STOP = b"usage_limit_exceeded"
API_ERROR = b'"isApiErrorMessage":true'
WINDOW = {"claude:5h": timedelta(hours=5), "claude:7d": timedelta(days=7),
          "codex:5h": timedelta(hours=5), "codex:weekly": timedelta(days=7)}
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_CLOCK = re.compile(r"(\d{1,2})(?::(\d{2}))?\s*([ap]m)(?:\s*\(([^)]+)\))?", re.I)


def _lines_with(data: bytes, needle: bytes) -> list[bytes]:
    found, at = [], data.find(needle)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        found.append(data[start:end])
        at = data.find(needle, end)
    return found


def _stamp(raw: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(raw["timestamp"].replace("Z", "+00:00"))


def codex_facts(home: Path) -> dict[str, Any]:
    goals: dict[str, dict[str, Any]] = {}
    newest: tuple[str, dict[str, Any]] | None = None
    counts = {"files": 0, "thread_goal_updated": 0, "limit_stops": 0}
    for path in sorted((home / "sessions").rglob("rollout-*.jsonl")):
        data = path.read_bytes()
        counts["files"] += 1
        events = _codex_events(data)
        counts["thread_goal_updated"] += sum(1 for e in events if e[1] == "goal")
        counts["limit_stops"] += sum(1 for e in events if e[1] == "stop")
        goal_events = [e for e in events if e[1] == "goal"]
        if goal_events:
            last = max(goal_events, key=lambda e: e[0])
            stopped = any(e[1] == "stop" and e[0] > last[0] for e in events)
            goals[last[3]] = {"status": "usageLimited" if last[2] == "active" and stopped
                              else last[2]}
        rates = _last_rates(data)
        if rates is not None and (newest is None or rates[0] > newest[0]):
            newest = rates
    return {"counts": counts, "goals": goals, "rates": newest}


def _codex_events(data: bytes) -> list[tuple[datetime, str, str, str]]:
    """(time, "goal", status, thread) of each goal update; (time, "stop", "", "") of each turn
    stopped at the usage limit."""
    events = []
    for line in _lines_with(data, GOAL):
        raw = json.loads(line)
        if raw.get("payload", {}).get("type") == "thread_goal_updated":
            events.append((_stamp(raw), "goal", raw["payload"]["goal"]["status"],
                           raw["payload"]["threadId"]))
    for line in _lines_with(data, STOP):
        raw = json.loads(line)
        if raw.get("payload", {}).get("type") == "task_complete":
            events.append((_stamp(raw), "stop", "", ""))
    return events


def _last_rates(data: bytes) -> tuple[str, dict[str, Any]] | None:
    """(timestamp, rate_limits) of the file's last line with rate limits."""
    for line in reversed(_lines_with(data[-(1 << 20):], RATES)):
        try:
            raw = json.loads(line)
        except ValueError:
            continue  # cut by the 1 MiB tail
        if raw.get("payload", {}).get("rate_limits"):
            return raw["timestamp"], raw["payload"]["rate_limits"]
    return None


def claude_facts(config: Path) -> dict[str, Any]:
    stops: dict[str, tuple[str, str]] = {}  # window -> (timestamp, text), the newest
    last_is_stop: dict[str, tuple[str, str]] = {}
    counts = {"files": 0, "api_error_lines": 0}
    for path in sorted((config / "projects").rglob("*.jsonl")):
        data = path.read_bytes()
        counts["files"] += 1
        lines = _lines_with(data, API_ERROR)
        for line in lines:
            raw = json.loads(line)
            counts["api_error_lines"] += 1
            text = raw["message"]["content"][0]["text"]
            window = "claude:7d" if "weekly" in text else "claude:5h"
            if window not in stops or raw["timestamp"] > stops[window][0]:
                stops[window] = (raw["timestamp"], text)
        if lines and "/subagents/" not in str(path):
            tail = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
            if API_ERROR in tail:
                raw = json.loads(tail)
                last_is_stop[path.stem] = (raw["timestamp"], raw["message"]["content"][0]["text"])
    return {"counts": counts, "stops": stops, "last_is_stop": last_is_stop}


def facts(tree: Path) -> dict[str, Any]:
    """The facts of ``tree``, from the cache when the manifest is the same."""
    manifest = (tree / "manifest.json").read_bytes()
    cache = tree / f".oracle-{hashlib.sha256(manifest).hexdigest()[:16]}.json"
    if cache.exists():
        found: dict[str, Any] = json.loads(cache.read_text())
        return found
    found = {"codex": codex_facts(tree / "codex"), "claude": claude_facts(tree / "claude")}
    check_manifest(found, json.loads(manifest))
    cache.write_text(json.dumps(found))
    return found


def check_manifest(found: dict[str, Any], manifest: dict[str, Any]) -> None:
    """The oracle read the whole tree: its counts are the generator's."""
    wrong = [f"{kind}.{key}: read {value}, manifest {manifest[kind][key]}"
             for kind in ("codex", "claude") for key, value in found[kind]["counts"].items()
             if manifest[kind][key] != value]
    if wrong:
        raise SystemExit("the oracle disagrees with the manifest: " + "; ".join(wrong))


def _reset_of(text: str, stopped: datetime, local: ZoneInfo) -> datetime:
    """The reset a limit text names (the generator's three wordings), after ``stopped``."""
    day = next((d for d in WEEKDAYS if f"resets {d}" in text.lower()), None)
    if day is not None:  # "resets Monday": the end of that day, in the local zone
        start = stopped.astimezone(local).date()
        ahead = (WEEKDAYS.index(day) - start.weekday()) % 7 or 7
        midnight = datetime.combine(start + timedelta(days=ahead + 1), datetime.min.time())
        return midnight.replace(tzinfo=local).astimezone(UTC)
    match = _CLOCK.search(text.split("reset", 1)[1])
    if match is None:
        raise ValueError(f"no reset in {text!r}")
    hour, minute, half, zone = match.groups()
    where = ZoneInfo(zone) if zone else local
    hour_24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    moment = stopped.astimezone(where).replace(hour=hour_24, minute=int(minute or 0), second=0,
                                               microsecond=0)
    if moment <= stopped:
        moment += timedelta(days=1)
    return moment.astimezone(UTC)


def _gauge(window: str, used: float, reset: datetime | None, now: datetime
           ) -> tuple[str, float, datetime | None, bool]:
    if reset is not None and reset <= now:  # passed: free, the next reset one window on
        while reset <= now:
            reset += WINDOW[window]
        return window, 0.0, reset, False
    return window, used, reset, used >= 100.0


def _codex_gauges(rates: dict[str, Any] | None, at: str, now: datetime) -> list[tuple[Any, ...]]:
    if not rates:
        return []
    observed = datetime.fromisoformat(at.replace("Z", "+00:00"))
    gauges = []
    for slot, window in (("primary", "codex:5h"), ("secondary", "codex:weekly")):
        raw = rates.get(slot)
        if raw is None:
            continue
        reset = (datetime.fromtimestamp(raw["resets_at"], UTC) if "resets_at" in raw else
                 observed + timedelta(seconds=raw["resets_in_seconds"])
                 if "resets_in_seconds" in raw else None)
        gauges.append(_gauge(window, float(raw["used_percent"]), reset, now))
    return gauges


def expected(tree: Path, now: datetime, recent_hours: float = 24.0) -> dict[str, Any]:
    """Goals ``{id: (state, pause reason)}`` and gauges ``{id: (used %, reset, exhausted)}``."""
    found = facts(tree)
    local = _local_zone()
    goals: dict[str, tuple[str, str | None]] = {}
    states = {"complete": ("done", None), "usageLimited": ("paused", "quota"),
              "active": ("paused", "external"), "paused": ("paused", "external")}
    for thread, goal in found["codex"]["goals"].items():
        goals[f"codex:{thread}"] = states[goal["status"]]
    gauges: dict[str, tuple[float, datetime | None, bool]] = {}
    rates = found["codex"]["rates"]
    for window, used, reset, reached in _codex_gauges(rates and rates[1], rates and rates[0],
                                                     now):
        gauges[window] = (used, reset, reached)
    for window, (at, text) in found["claude"]["stops"].items():
        stopped = datetime.fromisoformat(at.replace("Z", "+00:00"))
        _, used, reset, reached = _gauge(window, 100.0, _reset_of(text, stopped, local), now)
        gauges[window] = (used, reset, reached)
    for session, (at, text) in found["claude"]["last_is_stop"].items():
        stopped = datetime.fromisoformat(at.replace("Z", "+00:00"))
        if (now - stopped <= timedelta(hours=recent_hours)
                or _reset_of(text, stopped, local) > now):
            goals[f"claude:{session}"] = ("paused", "quota")
    return {"goals": goals, "gauges": gauges}


def _local_zone() -> ZoneInfo:
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        return ZoneInfo(name)
    try:
        link = os.readlink("/etc/localtime")
        return ZoneInfo(link.split("zoneinfo/", 1)[1])
    except (OSError, IndexError, ValueError):
        return ZoneInfo("UTC")


def disagreements(view: tuple[Any, ...], want: dict[str, Any]) -> list[str]:
    """Where a ``status`` view (see ``startup_gauges.view_of``) differs from :func:`expected`."""
    goal_view, quota_view = view
    shown = {g[0]: (g[1], g[2]) for g in goal_view}
    wrong = [f"goal {gid}: shown {shown.get(gid)}, expected {state}"
             for gid, state in want["goals"].items() if shown.get(gid) != state]
    wrong += [f"goal {gid}: shown {state}, not expected" for gid, state in shown.items()
              if gid not in want["goals"]]
    gauges = {q[0]: q[1:] for q in quota_view}
    for window, (used, reset, reached) in want["gauges"].items():
        got = gauges.get(window)
        if got is None:
            wrong.append(f"gauge {window}: missing")
            continue
        got_used, got_reset, got_reached = got
        got_at = datetime.fromisoformat(got_reset.replace("Z", "+00:00")) if got_reset else None
        same_reset = (got_at is None) == (reset is None) and (
            reset is None or got_at is None or abs((got_at - reset).total_seconds()) < 60)
        if got_used is None or abs(got_used - used) > 0.05 or not same_reset or bool(
                got_reached) != reached:
            wrong.append(f"gauge {window}: shown {got}, expected {(used, reset, reached)}")
    return wrong


def main(argv: list[str]) -> int:
    tree = Path(argv[0] if argv else "/tmp/gk-trees")
    want = expected(tree, datetime.now(UTC))
    for gid, state in sorted(want["goals"].items()):
        print("goal", gid, *state)
    for window, gauge in sorted(want["gauges"].items()):
        print("gauge", window, *gauge)
    print(f"{len(want['goals'])} goals, {len(want['gauges'])} gauges; the manifest's counts match")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
