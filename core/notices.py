"""What a notification is — its kinds and their urgency, the notification value, how a remote
channel is doing, and the channels' URLs — for the settings, the events and the notify
machinery (:mod:`core.notify`) alike. Qt-free.

The notification kinds, their order of urgency, and the notification value itself. Qt-free.

Nine kinds come from the history (see :mod:`core.notify.classify`), plus ``test`` for
``goalkeeper notify test``. Their declaration order is their urgency, lowest first: a channel's
*minimum kind* (``notify_ntfy_min_kind``, ``notify_webhook_min_kind``) admits that kind and every
kind after it, so ``failed`` on a phone means "failures, goals that wait for you and give-ups".
A goal that needs the user (``needs_attention``, ``gave_up``) ranks above one that failed for good;
a pipeline's finished run (``rested``) is as routine as a scheduled resume.

Each kind has a switch (``notify_<name>``) shared by the tray and every remote channel;
``could_not_resume`` shares ``notify_failed`` (one switch, "failed or could not be resumed", as
the tray has always had it).

How a remote channel is doing, as a frozen value the window and ``goalkeeper status`` render.

States: ``idle`` (configured, nothing sent yet), ``ok`` (the last notification arrived),
``retrying`` (an attempt failed, another is coming), ``failing`` (the last notification could not
be delivered: retries used up, a 4xx, or the server said to wait longer — it stays failing while
later ones are retried, until one gets through), ``off`` (no longer configured). Nothing here is
secret: the target is the redacted URL, the reason names a status or a transport error, never a
header or a token.

The channels' URLs: what the settings accept, and how a URL is named where people can see it.

Both URLs may be secrets in themselves — an ntfy topic on a public server is "essentially a
password" (ntfy's docs), a Slack or Discord webhook URL carries its token in the path — so logs,
``goalkeeper status`` and the window name a URL by its scheme and host only (:func:`redact`).
Credentials never go into a URL: the ntfy token and the webhook secret live in the OS keyring.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any
from urllib.parse import SplitResult, urlsplit

from core.clock import iso, parse_iso
from core.i18n import N_


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
class Reply:
    """One answer a notification offers (issue 23): POST ``body`` to ``url``, the command topic.

    Attributes:
        action: the wire name (``resume``, ``skip``, ``keep-paused``).
        label: the button's text.
        url: the command topic's URL on the ntfy server.
        body: the signed command (:func:`core.notify.phone.sign`).
    """

    action: str
    label: str
    url: str
    body: str

    def to_json(self) -> dict[str, str]:
        return {"action": self.action, "label": self.label, "url": self.url,
                "method": "POST", "body": self.body}


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
        replies: the answers a phone may send (signed commands), when answering is on.
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
    replies: tuple[Reply, ...] = ()


# -- a channel's health ----------------------------------------------------------------------------

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


# -- the channels' URLs ----------------------------------------------------------------------------

#: ntfy's topic names (docs.ntfy.sh/publish, "Picking a topic")
TOPIC_PATTERN = re.compile(r"^[-_A-Za-z0-9]{1,64}$")


def _http_url(text: str, what: str) -> SplitResult:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(N_("{what} must be an http:// or https:// URL with a host name").format(
            what=what))
    if parts.username is not None or parts.password is not None:
        raise ValueError(N_("{what} must not contain a user or password: keep credentials in "
                            "the OS keyring (see `goalkeeper secret set`)").format(what=what))
    if parts.fragment:
        raise ValueError(N_("{what} must not have a #fragment").format(what=what))
    try:
        _ = parts.port
    except ValueError:
        raise ValueError(N_("{what} has an invalid port").format(what=what)) from None
    return parts


def check_ntfy_url(text: str) -> str:
    """Empty (off) or a topic URL: ``https://ntfy.example.org/my-goals``."""
    text = text.strip()
    if not text:
        return text
    parts = _http_url(text, N_("an ntfy URL"))
    if parts.query:
        raise ValueError(N_("an ntfy URL is a topic URL without a ?query"))
    topic = parts.path.rstrip("/").rsplit("/", 1)[-1]
    if not TOPIC_PATTERN.match(topic):
        raise ValueError(N_("an ntfy URL ends with the topic: letters, digits, '-' and '_', "
                            "at most 64 (e.g. https://ntfy.sh/my-goals)"))
    return text


#: what a phone may answer to a notification, in button order (:data:`core.notify.phone.ACTIONS`
#: holds what each does; a test holds the two equal)
PHONE_ACTIONS = ("resume", "skip", "keep-paused")
DEFAULT_PHONE_ACTIONS = "resume,keep-paused"


def check_phone_actions(text: str) -> str:
    """The ``phone_actions`` setting: comma-separated names from :data:`PHONE_ACTIONS`."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if name not in PHONE_ACTIONS:
            raise ValueError(N_("unknown phone action {name!r}; use any of: {known}").format(
                name=name, known=", ".join(PHONE_ACTIONS)))
    return ",".join(dict.fromkeys(names))


def check_webhook_url(text: str) -> str:
    """Empty (off) or the http(s) URL the JSON is POSTed to."""
    text = text.strip()
    if text:
        _http_url(text, N_("a webhook URL"))
    return text


def ntfy_root_and_topic(url: str) -> tuple[str, str]:
    """``https://h/base/topic`` → (``https://h/base/``, ``topic``): ntfy takes JSON messages at
    its root URL, with the topic in the body."""
    parts = urlsplit(url)
    base, _, topic = parts.path.rstrip("/").rpartition("/")
    return parts._replace(path=base + "/").geturl(), topic


def redact(url: str) -> str:
    """``https://ntfy.example.org/…``: scheme and host (and port), never the path or query."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    more = "/…" if parts.path.strip("/") or parts.query else ""
    return f"{parts.scheme}://{host}{port}{more}"
