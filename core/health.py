"""What a host knows about its own health: the store, each provider, safe mode.

Frozen values the engine keeps current and announces (:class:`HealthChanged`); the control
socket's ``ping`` returns them, so ``goalkeeper status`` and the window say the same thing:
"store unavailable: <reason> since T", "provider codex: start failed: … (retry at T)", "safe
mode: the database … is damaged …".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.clock import iso, parse_iso
from core.i18n import N_

#: how many unreadable files a problem line names (the log has them all)
_SHOWN_FILES = 3


@dataclass(frozen=True)
class StoreHealth:
    """Whether the store takes writes; when not, why and since when, and what waits."""

    available: bool = True
    reason: str | None = None
    since: datetime | None = None
    waiting: int = 0

    def describe(self) -> str:
        if self.available:
            return N_("store available")
        return N_("store unavailable: {reason} since {since}").format(reason=self.reason,
                                                                       since=iso(self.since))

    def to_json(self) -> dict[str, Any]:
        return {"available": self.available, "reason": self.reason, "since": iso(self.since),
                "waiting": self.waiting, "text": self.describe()}


@dataclass(frozen=True)
class ProviderHealth:
    """A provider's start: ``ok``, or ``failed`` with the reason and when it is tried again."""

    name: str
    state: str = "ok"  # "ok" | "failed"
    reason: str | None = None
    since: datetime | None = None
    retry_at: datetime | None = None
    attempts: int = 0
    #: files it could not read when it started, each ``PATH (reason)`` (it started all the same)
    unreadable: tuple[str, ...] = ()

    def unreadable_text(self) -> str:
        shown = "; ".join(self.unreadable[:_SHOWN_FILES])
        if len(self.unreadable) > _SHOWN_FILES:
            shown += "; …"
        return N_("provider {name}: cannot read {count} file(s): {files}").format(
            name=self.name, count=len(self.unreadable), files=shown)

    def describe(self) -> str:
        if self.state == "ok":
            return N_("provider {name}: ok").format(name=self.name)
        if self.retry_at:
            return N_("provider {name}: start failed since {since}: {reason} (tried {attempts}×, "
                      "again at {retry_at})").format(
                name=self.name, since=iso(self.since), reason=self.reason,
                attempts=self.attempts, retry_at=iso(self.retry_at))
        return N_("provider {name}: start failed since {since}: {reason} (tried {attempts}×)"
                  ).format(name=self.name, since=iso(self.since), reason=self.reason,
                           attempts=self.attempts)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "state": self.state, "reason": self.reason,
                "since": iso(self.since), "retry_at": iso(self.retry_at),
                "attempts": self.attempts, "unreadable": list(self.unreadable),
                "text": self.describe()}


@dataclass(frozen=True)
class AwakeHealth:
    """What the keep-awake room holds and cannot hold (stored English, shown localized).

    ``state``: "off", "idle" (nothing due within the horizon), "holding", "let_go" (due, but
    not held: the battery, or the inhibitor failed).
    """

    state: str = "idle"
    why: str | None = None
    horizon_hours: float = 12.0
    notes: tuple[str, ...] = ()
    after_wake: str | None = None

    def describe(self) -> str:
        if self.state == "off":
            return N_("keep awake: off")
        if self.state == "holding":
            return N_("keep awake: holding a sleep inhibitor — {why}").format(why=self.why)
        if self.state == "let_go":
            return N_("keep awake: not holding — {why}").format(why=self.why)
        return N_("keep awake: nothing due within {hours} h").format(
            hours=f"{self.horizon_hours:g}")

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "why": self.why, "horizon_hours": self.horizon_hours,
                "notes": list(self.notes), "after_wake": self.after_wake,
                "text": self.describe()}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> AwakeHealth:
        return AwakeHealth(str(data.get("state") or "idle"), data.get("why"),
                           float(data.get("horizon_hours") or 12.0),
                           tuple(str(n) for n in data.get("notes") or ()), data.get("after_wake"))


@dataclass(frozen=True)
class HostHealth:
    """Everything above, as one snapshot (what ``ping`` answers)."""

    store: StoreHealth
    providers: tuple[ProviderHealth, ...] = ()
    safe_mode: str | None = None  # the problem text while the store cannot be written at all
    #: goals a provider here reports under an id another host owns (a shared store): not
    #: watched here — say so rather than drop them quietly (stored English, one each)
    clashes: tuple[str, ...] = ()
    #: what a provider needs the user to do first (stored English, one each): a goal file
    #: waiting for approval
    attention: tuple[str, ...] = ()
    #: hosts of the shared store whose clocks are off (stored English, one each: skew_text)
    skewed: tuple[str, ...] = ()
    #: the keep-awake room: what it holds, and what it cannot hold (its notes are problems)
    awake: AwakeHealth | None = None

    def problems(self) -> list[str]:
        lines = [N_("safe mode: {reason}").format(reason=self.safe_mode)] if self.safe_mode else []
        if not self.store.available:
            lines.append(self.store.describe())
        lines.extend(p.describe() for p in self.providers if p.state != "ok")
        lines.extend(p.unreadable_text() for p in self.providers if p.unreadable)
        lines.extend(self.clashes)
        lines.extend(self.attention)
        lines.extend(self.skewed)
        if self.awake is not None:
            if self.awake.state == "let_go":
                lines.append(self.awake.describe())
            lines.extend(self.awake.notes)
        return lines

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store.to_json(), "providers": [p.to_json() for p in self.providers],
                "safe_mode": self.safe_mode, "clashes": list(self.clashes),
                "attention": list(self.attention),
                "skewed": list(self.skewed),
                "awake": self.awake.to_json() if self.awake else None,
                "problems": self.problems()}

    @staticmethod
    def from_json(data: dict[str, Any]) -> HostHealth:
        store = data.get("store") or {}
        providers = tuple(
            ProviderHealth(str(p.get("name")), str(p.get("state") or "ok"), p.get("reason"),
                           parse_iso(p.get("since")), parse_iso(p.get("retry_at")),
                           int(p.get("attempts") or 0),
                           tuple(str(f) for f in p.get("unreadable") or ()))
            for p in data.get("providers") or [] if isinstance(p, dict))
        awake = data.get("awake")
        return HostHealth(
            StoreHealth(bool(store.get("available", True)), store.get("reason"),
                        parse_iso(store.get("since")), int(store.get("waiting") or 0)),
            providers, data.get("safe_mode"), tuple(str(c) for c in data.get("clashes") or ()),
            tuple(str(a) for a in data.get("attention") or ()),
            tuple(str(c) for c in data.get("skewed") or ()),
            AwakeHealth.from_json(awake) if isinstance(awake, dict) else None)


@dataclass(frozen=True)
class HealthChanged:
    """The host's health changed (store availability, a provider's start, safe mode)."""

    health: HostHealth


def clash_text(goal_id: str, owner: str) -> str:
    """A goal of this host's provider whose id another host's goal already has."""
    return N_("goal {goal} belongs to host {host}: this host's goal of the same id is not "
              "watched here (give one of them another name)").format(goal=goal_id, host=owner)


def skew_text(host: str, offset: float) -> str:
    """A host whose clock is ``offset`` seconds off the shared store's (the database's)."""
    text = (N_("host {host}: its clock is {offset} ahead of the store's: its quota readings "
               "are not used until it is corrected") if offset > 0 else
            N_("host {host}: its clock is {offset} behind the store's: its quota readings lose "
               "to every other host's until it is corrected"))
    return text.format(host=host, offset=clock_offset(abs(offset)))


def clock_offset(seconds: float) -> str:
    """``2:00:00`` or ``45 s``: an offset as people read it (digits: no translation)."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"

