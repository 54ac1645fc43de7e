"""The notification kinds, their order of urgency, and the notification value itself. Qt-free.

Nine kinds come from the history (see :mod:`core.notify.classify`), plus ``test`` for
``goalkeeper notify test``. Their declaration order is their urgency, lowest first: a channel's
*minimum kind* (``notify_ntfy_min_kind``, ``notify_webhook_min_kind``) admits that kind and every
kind after it, so ``failed`` on a phone means "failures, goals that wait for you and give-ups".
A goal that needs the user (``needs_attention``, ``gave_up``) ranks above one that failed for good;
a pipeline's finished run (``rested``) is as routine as a scheduled resume.

Each kind has a switch (``notify_<name>``) shared by the tray and every remote channel;
``could_not_resume`` shares ``notify_failed`` (one switch, "failed or could not be resumed", as
the tray has always had it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Kind(StrEnum):
    """What a notification is about; the values are the webhook's ``kind`` (public: add, never
    rename)."""

    SCHEDULED = "scheduled"  # an automatic resume was scheduled
    RESTED = "rested"  # a recurring goal (a pipeline) finished a run; idle until its next one
    RESUMED = "resumed"  # resumed automatically (scheduler, wake, start-up)
    DONE = "done"
    RELIMITED = "relimited"  # ran out of quota again soon after an automatic resume
    COULD_NOT_RESUME = "could_not_resume"  # the claim was won, the agent did not start
    FAILED = "failed"
    #: a run Goalkeeper started stopped paused for auth or an error (a blocked pipeline run, an
    #: agent that exited): never resumed automatically, it waits for the user
    NEEDS_ATTENTION = "needs_attention"
    GAVE_UP = "gave_up"  # the attempt cap was reached: needs a person
    TEST = "test"  # `goalkeeper notify test`: never switched off, never filtered


@dataclass(frozen=True)
class KindSpec:
    """How a kind is switched and shown.

    Attributes:
        switch: the ``Settings`` field that turns the kind on or off (None: always on).
        priority: the ntfy priority, 1 (min) … 5 (max); "needs attention" is 4 (high).
        emoji: an ntfy tag that ntfy shows as an emoji in front of the title.
    """

    switch: str | None
    priority: int
    emoji: str


SPECS: dict[Kind, KindSpec] = {
    Kind.SCHEDULED: KindSpec("notify_scheduled", 2, "hourglass_flowing_sand"),
    Kind.RESTED: KindSpec("notify_rested", 2, "zzz"),
    Kind.RESUMED: KindSpec("notify_resumed", 3, "arrow_forward"),
    Kind.DONE: KindSpec("notify_done", 3, "white_check_mark"),
    Kind.RELIMITED: KindSpec("notify_relimited", 3, "hourglass"),
    Kind.COULD_NOT_RESUME: KindSpec("notify_failed", 4, "warning"),
    Kind.FAILED: KindSpec("notify_failed", 4, "x"),
    Kind.NEEDS_ATTENTION: KindSpec("notify_needs_attention", 4, "raised_hand"),
    Kind.GAVE_UP: KindSpec("notify_gave_up", 4, "rotating_light"),
    Kind.TEST: KindSpec(None, 3, "test_tube"),
}

#: the kinds a channel's minimum may name, lowest urgency first
RANKED: tuple[Kind, ...] = tuple(k for k in Kind if k is not Kind.TEST)
_RANK = {kind: i for i, kind in enumerate(RANKED)}


def at_least(kind: Kind, minimum: Kind) -> bool:
    """Whether ``kind`` is as urgent as ``minimum`` or more (a test message always is)."""
    if kind is Kind.TEST:
        return True
    return _RANK[kind] >= _RANK[minimum]


def check_minimum(kind: Kind) -> Kind:
    """A channel's minimum kind must be one of :data:`RANKED`."""
    if kind not in _RANK:
        raise ValueError(f"{kind.value!r} cannot be a minimum kind; use one of "
                         + ", ".join(k.value for k in RANKED))
    return kind


@dataclass(frozen=True)
class Notification:
    """One notification, as every channel receives it.

    Attributes:
        kind: what it is about.
        title: ``Resumed: Refactor the parser`` (the goal's title is in it).
        message: one or two sentences.
        at: when it happened (the history row's instant, UTC).
        goal / goal_title / provider: the goal it is about (None for a test message).
        next_resume_at: the goal's next automatic resume, when one is scheduled.
        url: a web page for the goal (``goal.data["url"]``, http/https only), for ntfy's click.
    """

    kind: Kind
    title: str
    message: str
    at: datetime
    goal: str | None = None
    goal_title: str | None = None
    provider: str | None = None
    next_resume_at: datetime | None = None
    url: str | None = None
