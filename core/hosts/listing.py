"""The hosts of a store as shown to people: ``goalkeeper hosts`` and the desktop app's Hosts
dialog read the same lines.

A host is *online* while its heartbeat is younger than ``host_stale_seconds``; one that stopped
says since when, and one that died (SIGKILL, power cut) is offline from its last heartbeat. On
a one-machine store the list has this machine's host only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.clock import iso
from core.health import skew_text
from core.limits import CLOCK_SKEW_LIMIT_SECONDS
from core.store import HostRecord


@dataclass(frozen=True)
class HostLine:
    """One registered host, judged at ``now``.

    Attributes:
        record: what the host last wrote in the store.
        offline_since: None while online; else when it was last known alive.
        silent_seconds: how long ago its last heartbeat was.
        goals: how many goals it owns.
        this_machine: the host is this machine's (the settings' host id).
    """

    record: HostRecord
    offline_since: datetime | None
    silent_seconds: float
    goals: int = 0
    this_machine: bool = False

    @property
    def online(self) -> bool:
        return self.offline_since is None

    def to_json(self) -> dict[str, Any]:
        """What ``goalkeeper hosts --json`` prints per host."""
        host = self.record
        return {"host": host.host_id, "kind": host.kind, "machine": host.machine,
                "pid": host.pid, "state": "online" if self.online else "offline",
                "offline_since": iso(self.offline_since), "since": iso(host.since),
                "heartbeat": iso(host.heartbeat), "silent_seconds": round(self.silent_seconds, 1),
                "epoch": host.epoch, "goals": self.goals, "accounts": host.accounts,
                "version": host.version, "this_machine": self.this_machine,
                "clock_offset_seconds": (round(host.clock_offset, 1)
                                         if host.clock_offset is not None else None),
                "clock_skewed": self.skewed}

    @property
    def skewed(self) -> bool:
        """Its last heartbeat found its clock further off the database's than allowed."""
        return self.online and is_skewed(self.record)


def host_lines(hosts: Iterable[HostRecord], goal_hosts: Iterable[str], now: datetime,
               lease_seconds: float, me: str) -> list[HostLine]:
    """Every host in ``hosts`` (as the store lists them) with the number of goals it owns
    (``goal_hosts``: each goal's owner)."""
    counts: dict[str, int] = {}
    for owner in goal_hosts:
        counts[owner] = counts.get(owner, 0) + 1
    return [HostLine(h, h.offline_since(now, lease_seconds),
                     h.silent_for(now), counts.get(h.host_id, 0),
                     h.host_id == me)
            for h in hosts]


def is_skewed(host: HostRecord) -> bool:
    """``host``'s last heartbeat found its clock more than :data:`CLOCK_SKEW_LIMIT_SECONDS`
    off the database's (a shared store; a one-machine store measures no offset)."""
    return host.clock_offset is not None and abs(host.clock_offset) > CLOCK_SKEW_LIMIT_SECONDS


def skewed_hosts(hosts: Iterable[HostRecord]) -> tuple[str, ...]:
    """The health problem of each host registered as online whose clock is off."""
    return tuple(skew_text(h.host_id, h.clock_offset or 0.0) for h in hosts
                 if h.state == "online" and is_skewed(h))
