"""A goal's own resume policy: priority, budget per window period, allowed hours.

Stored with the goal (the ``policy`` column), set with ``goalkeeper goal set GOAL KEY VALUE`` or
the details dialog — both through :meth:`GoalPolicy.with_value`, so they say the same thing about
a bad value.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.i18n import N_
from core.policies.hours import parse_hours

#: the keys ``goal set`` accepts, in the order they are shown
GOAL_KEYS = ("priority", "budget_percent", "auto_resume_hours")
_CLEAR = ("", "none", "off", "-")


class PolicyValueError(ValueError):
    """A per-goal value was refused; the message names the key and the value."""


class GoalPolicy(BaseModel):
    """Attributes:
        priority: goals waiting on the same window resume highest first (-100…100, default 0).
        budget_percent: at most this share of a window per window period (an *episode*); None
            means no budget.
        auto_resume_hours: allowed hours for this goal's automatic resumes, replacing the
            global ``auto_resume_hours``; empty means "the global ones".
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    priority: int = Field(0, ge=-100, le=100)
    budget_percent: float | None = Field(None, gt=0, le=100)
    auto_resume_hours: str = ""

    @field_validator("auto_resume_hours")
    @classmethod
    def _valid_hours(cls, text: str) -> str:
        weekly = parse_hours(text)  # raises HoursError, a ValueError, with the reason
        return weekly.text if weekly is not None else ""

    def with_value(self, key: str, text: str) -> GoalPolicy:
        """This policy with ``key`` set from its textual ``text`` ("" / "none" clears it)."""
        if key not in GOAL_KEYS:
            raise PolicyValueError(N_("unknown key {key!r}: use one of {keys}").format(
                key=key, keys=", ".join(GOAL_KEYS)))
        value: Any = text.strip()
        if value.lower() in _CLEAR:
            value = GoalPolicy.model_fields[key].default
        try:
            return GoalPolicy.model_validate({**self.model_dump(), key: value})
        except ValidationError as exc:
            message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            raise PolicyValueError(N_("{key} = {value!r}: {message}").format(
                key=key, value=text, message=message)) from None

    def value_text(self, key: str) -> str:
        value = getattr(self, key)
        if value is None or value == "":
            return ""
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)
