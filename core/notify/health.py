"""How a remote channel is doing, as a frozen value the window and ``goalkeeper status`` render.

States: ``idle`` (configured, nothing sent yet), ``ok`` (the last notification arrived),
``retrying`` (an attempt failed, another is coming), ``failing`` (the last notification could not
be delivered: retries used up, a 4xx, or the server said to wait longer — it stays failing while
later ones are retried, until one gets through), ``off`` (no longer configured). Nothing here is
secret: the target is the redacted URL, the reason names a status or a transport error, never a
header or a token.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from core.clock import iso, parse_iso
from core.notify.kinds import Kind


class ChannelState(StrEnum):
    IDLE = "idle"
    OK = "ok"
    RETRYING = "retrying"
    FAILING = "failing"
    OFF = "off"


@dataclass(frozen=True)
class ChannelHealth:
    """One channel's delivery record since the host started."""

    channel: str
    target: str
    min_kind: Kind
    state: ChannelState = ChannelState.IDLE
    reason: str | None = None
    failing_since: datetime | None = None
    last_delivered_at: datetime | None = None
    last_failed_at: datetime | None = None
    delivered: int = 0
    failed: int = 0
    dropped: int = 0

    @property
    def failing(self) -> bool:
        return self.state is ChannelState.FAILING

    def succeeded(self, at: datetime) -> ChannelHealth:
        return dataclasses.replace(self, state=ChannelState.OK, reason=None, failing_since=None,
                                   last_delivered_at=at, delivered=self.delivered + 1)

    def failed_now(self, at: datetime, reason: str) -> ChannelHealth:
        since = self.failing_since if self.failing_since is not None else at
        return dataclasses.replace(self, state=ChannelState.FAILING, reason=reason,
                                   failing_since=since, last_failed_at=at,
                                   failed=self.failed + 1)

    def retrying(self, at: datetime, reason: str) -> ChannelHealth:
        """An attempt failed and another follows; a failing channel stays failing (with its
        last delivery's reason) until a notification gets through."""
        if self.failing:
            return self
        since = self.failing_since if self.failing_since is not None else at
        return dataclasses.replace(self, state=ChannelState.RETRYING, reason=reason,
                                   failing_since=since)

    def to_json(self) -> dict[str, Any]:
        return {
            "channel": self.channel, "target": self.target, "min_kind": self.min_kind.value,
            "state": self.state.value, "reason": self.reason,
            "failing_since": iso(self.failing_since),
            "last_delivered_at": iso(self.last_delivered_at),
            "last_failed_at": iso(self.last_failed_at),
            "delivered": self.delivered, "failed": self.failed, "dropped": self.dropped,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChannelHealth:
        return cls(
            channel=str(data["channel"]), target=str(data["target"]),
            min_kind=Kind(data["min_kind"]), state=ChannelState(data["state"]),
            reason=data.get("reason"), failing_since=parse_iso(data.get("failing_since")),
            last_delivered_at=parse_iso(data.get("last_delivered_at")),
            last_failed_at=parse_iso(data.get("last_failed_at")),
            delivered=int(data.get("delivered", 0)), failed=int(data.get("failed", 0)),
            dropped=int(data.get("dropped", 0)),
        )
