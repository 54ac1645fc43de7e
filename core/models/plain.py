"""The read path's records: goals and quota readings read back from the store without pydantic.

``goalkeeper status`` shows what the store holds — rows a host validated with the models of
:mod:`core.models.records` when it wrote them. Building those models again only to show them
costs more than the rest of the command (issue 24), so a store opened with ``plain_reads``
answers ``list_goals`` and ``latest_readings`` with these records instead: the same attributes,
values and types, the few derived values ``status`` asks for (:attr:`PlainGoal.deferred_by`,
:meth:`PlainSteering.stored`, :meth:`PlainRecord.model_copy`), frozen.

They are strict, not lenient: a value of a type the model would not keep as it is, a missing
or unknown field, an unknown enum value raise :class:`ValueError` — and the store then builds
the pydantic model as before, which keeps the value or says what is wrong in its own words.
``tests/test_plain_records.py`` holds each record's fields, order and defaults equal to its
model's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from enum import Enum
from typing import Any, ClassVar, TypeVar

from core.clock import iso, parse_iso
from core.limits import MAX_DESCRIPTION_CHARS, MAX_TITLE_CHARS, clip
from core.models import Exactness, GoalState, PauseReason, QuotaKind, Trigger

R = TypeVar("R", bound="PlainRecord")
Convert = Callable[[Any], Any]
#: field → (converter, default), in the model's order
Fields = dict[str, tuple[Convert, Any]]
#: a required field has no default
REQUIRED = object()


class FrozenValues:
    """Values read back as frozen attributes (a plain record, the settings' snapshot)."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: {name}")


class PlainRecord(FrozenValues):
    """A stored value, read back: attribute access, equality, ``model_copy`` — nothing else."""

    __slots__ = ()
    FIELDS: ClassVar[Fields] = {}

    @classmethod
    def load(cls: type[R], raw: Any) -> R:
        if not isinstance(raw, dict) or not raw.keys() <= cls.FIELDS.keys():
            raise ValueError(f"not a {cls.__name__}")
        values = {}
        for name, (convert, default) in cls.FIELDS.items():
            if name in raw:
                values[name] = convert(raw[name])
            elif default is REQUIRED:
                raise ValueError(f"{cls.__name__}.{name} missing")
            else:
                values[name] = default() if callable(default) else default
        return cls(values)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._values == self._values

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(self._values.items(), key=lambda kv: kv[0]))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._values!r})"

    def model_copy(self: R, update: Mapping[str, Any] | None = None) -> R:
        return type(self)({**self._values, **(update or {})})

    def changed_json(self) -> dict[str, Any]:
        """``model_dump(mode="json", exclude_defaults=True)`` of the model: the fields that
        differ from their defaults, in the model's order, nested records likewise."""
        out = {}
        for name, (_convert, default) in self.FIELDS.items():
            value = self._values[name]
            if default is not REQUIRED and value == (default() if callable(default) else default):
                continue
            out[name] = _json(value)
        return out


def _json(value: Any) -> Any:
    if isinstance(value, PlainRecord):
        return value.changed_json()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_json(item) for item in value]
    return value


# -- strict converters: the value as the model would keep it, else ValueError ----------------------

def _str(value: Any) -> str:
    if type(value) is not str:
        raise ValueError("not a string")
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise ValueError("not an integer")
    return value


def _float(value: Any) -> float:
    if type(value) not in (int, float):
        raise ValueError("not a number")
    return float(value)


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise ValueError("not a boolean")
    return value


def _instant(value: Any) -> datetime:
    instant = parse_iso(_str(value))
    assert instant is not None
    return instant


def _clipped(limit: int) -> Convert:
    return lambda value: clip(_str(value), limit)


def _enum(kind: type[Enum]) -> Convert:
    return lambda value: kind(_str(value))


def _optional(convert: Convert) -> Convert:
    return lambda value: None if value is None else convert(value)


def _table(convert: Convert) -> Convert:
    def table(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise ValueError("not a table")
        return {_str(key): convert(item) for key, item in value.items()}
    return table


def _record(kind: type[PlainRecord]) -> Convert:
    return kind.load


def _strings(value: Any) -> tuple[str, ...]:
    if type(value) not in (list, tuple):
        raise ValueError("not a list")
    return tuple(_str(item) for item in value)


def _json_table(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise ValueError("not a table")
    return dict(value)


# -- the records -----------------------------------------------------------------------------------

class PlainBudgetEntry(PlainRecord):
    __slots__ = ()
    FIELDS: ClassVar[Fields] = {"spent": (_float, REQUIRED), "until": (_instant, REQUIRED)}


class PlainLastRun(PlainRecord):
    __slots__ = ()
    FIELDS: ClassVar[Fields] = {"seconds": (_float, REQUIRED), "ended_at": (_instant, REQUIRED)}


class PlainPolicyPause(PlainRecord):
    __slots__ = ()
    FIELDS: ClassVar[Fields] = {"rule": (_str, REQUIRED), "at": (_instant, REQUIRED)}


class PlainDeferral(PlainRecord):
    __slots__ = ()
    FIELDS: ClassVar[Fields] = {"rule": (_str, REQUIRED), "until": (_instant, REQUIRED)}


class PlainQueuedStart(PlainRecord):
    __slots__ = ()
    FIELDS: ClassVar[Fields] = {"window": (_str, REQUIRED), "after": (_instant, REQUIRED)}


class PlainSteering(PlainRecord):
    __slots__ = ()
    FIELDS: ClassVar[Fields] = {
        "no_reset_note": (_optional(_str), None),
        "resume_slot": (_bool, False),
        "last_resume_trigger": (_optional(_enum(Trigger)), None),
        "auto_resume_block": (_optional(_str), None),
        "budget": (_table(_record(PlainBudgetEntry)), dict),
        "last_run": (_optional(_record(PlainLastRun)), None),
        "policy_pause": (_optional(_record(PlainPolicyPause)), None),
        "queued": (_optional(_record(PlainQueuedStart)), None),
    }

    def stored(self) -> dict[str, Any]:
        """As :meth:`core.models.records.Steering.stored`."""
        return self.changed_json()


class PlainGoalPolicy(PlainRecord):
    """A goal's policy as stored (the hours normalised when it was set)."""

    __slots__ = ()
    FIELDS: ClassVar[Fields] = {
        "priority": (_int, 0),
        "budget_percent": (_optional(_float), None),
        "auto_resume_hours": (_str, ""),
    }


class PlainGoal(PlainRecord):
    __slots__ = ()
    FIELDS: ClassVar[Fields] = {
        "id": (_str, REQUIRED),
        "provider": (_str, REQUIRED),
        "title": (_clipped(MAX_TITLE_CHARS), REQUIRED),
        "state": (_enum(GoalState), GoalState.IDLE),
        "pause_reason": (_optional(_enum(PauseReason)), None),
        "pause_detail": (_optional(_clipped(MAX_DESCRIPTION_CHARS)), None),
        "windows": (_strings, ()),
        "auto_resume": (_bool, False),
        "next_resume_at": (_optional(_instant), None),
        "auto_resume_note": (_optional(_clipped(MAX_DESCRIPTION_CHARS)), None),
        "resets_at": (_optional(_instant), None),
        "attempts": (_int, 0),
        "fence": (_int, 0),
        "hosted": (_bool, False),
        "resumed_at": (_optional(_instant), None),
        "data": (_json_table, dict),
        "steering": (_record(PlainSteering), lambda: PlainSteering.load({})),
        "created_at": (_instant, REQUIRED),
        "updated_at": (_instant, REQUIRED),
        "state_since": (_optional(_instant), None),
        "policy": (_record(PlainGoalPolicy), lambda: PlainGoalPolicy.load({})),
        "deferral": (_optional(_record(PlainDeferral)), None),
        "host": (_str, ""),
    }

    @property
    def deferred_by(self) -> str | None:
        """As :attr:`core.models.records.Goal.deferred_by`."""
        deferral = self.deferral
        if deferral is None or self.next_resume_at is None or (
                deferral.until != self.next_resume_at):
            return None
        rule: str = deferral.rule
        return rule


class PlainQuotaReading(PlainRecord):
    __slots__ = ()
    FIELDS: ClassVar[Fields] = {
        "window_id": (_str, REQUIRED),
        "provider": (_str, REQUIRED),
        "label": (_str, REQUIRED),
        "kind": (_enum(QuotaKind), QuotaKind.PERIODIC),
        "used_percent": (_optional(_float), None),
        "used": (_optional(_float), None),
        "limit": (_optional(_float), None),
        "resets_at": (_optional(_instant), None),
        "window_seconds": (_optional(_float), None),
        "limit_reached": (_optional(_bool), None),
        "no_timed_reset": (_bool, False),
        "rate_per_second": (_optional(_float), None),
        "burst": (_optional(_float), None),
        "tokens": (_optional(_float), None),
        "exactness": (_enum(Exactness), Exactness.EXACT),
        "observed_at": (_instant, REQUIRED),
        "note": (_optional(_str), None),
        "account": (_str, ""),
    }


__all__ = [
    "REQUIRED",
    "PlainBudgetEntry",
    "PlainDeferral",
    "PlainGoal",
    "PlainGoalPolicy",
    "PlainLastRun",
    "PlainPolicyPause",
    "PlainQueuedStart",
    "PlainQuotaReading",
    "PlainRecord",
    "PlainSteering",
]
