"""The typed result every goal action returns — views render it, never their own guess."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.clock import iso, parse_iso
from core.models import GoalState, Outcome


@dataclass(frozen=True)
class ActionResult:
    """What ``resume`` / ``pause`` / ``cancel`` / ``set_auto_resume`` did.

    Attributes:
        goal: the goal id asked about.
        outcome: resumed, already_running, already_resuming, deferred, refused, failed, ...
        reason: a human sentence (why refused, why deferred, what the runner said).
        not_before: for ``deferred``, the new not-before instant.
        state: the goal's state after the call (None for an unknown goal).
        notice: something the user must be told once (e.g. turning auto-resume on for a goal
            whose provider bills headless runs differently); the CLI prints it as a warning.
    """

    goal: str
    outcome: Outcome
    reason: str
    not_before: datetime | None = None
    state: GoalState | None = None
    notice: str | None = None

    @property
    def carried_out(self) -> bool:
        return self.outcome.carried_out

    def to_json(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "outcome": self.outcome.value,
            "reason": self.reason,
            "not_before": iso(self.not_before),
            "state": self.state.value if self.state else None,
            "notice": self.notice,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ActionResult:
        return cls(
            goal=str(data["goal"]),
            outcome=Outcome(data["outcome"]),
            reason=str(data.get("reason") or ""),
            not_before=parse_iso(data.get("not_before")),
            state=GoalState(data["state"]) if data.get("state") else None,
            notice=str(data["notice"]) if data.get("notice") else None,
        )
