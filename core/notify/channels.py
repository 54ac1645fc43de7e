"""The remote channels: what an ntfy message and a webhook request look like.

Each channel turns a :class:`~core.notices.Notification` into one HTTP POST
(:class:`~core.notify.http.Request`); sending and retrying is :mod:`core.notify.delivery`'s job.

* **ntfy** — JSON publishing (docs.ntfy.sh/publish, "Publish as JSON"): a POST to the server's
  root URL with ``topic``, ``title``, ``message``, ``priority`` by kind, ``tags`` (an emoji,
  ``goalkeeper``, the kind, the provider, the host), ``click`` when the goal has a URL,
  ``actions`` (``http`` buttons publishing signed commands, :mod:`core.notify.phone`), and a
  ``sequence_id`` that stays the same across retries. JSON rather than ``Title:`` headers
  because goal titles are UTF-8 and HTTP headers are not. ``Authorization: Bearer`` with the
  keyring's ``ntfy-token`` when there is one.
* **webhook** — one JSON object per notification with exactly the keys ``kind``, ``goal``,
  ``title``, ``provider``, ``host``, ``at``, ``message``, ``next_resume_at`` (times ISO 8601
  UTC, ``Z``), and ``replies`` when answering from the phone is on (a list of ``{"action",
  "label", "url", "method", "body"}``: POST ``body`` to ``url`` to answer). With the
  keyring's ``webhook-secret`` the exact body bytes are signed:
  ``X-Goalkeeper-Signature: sha256=<hex HMAC-SHA256(secret, body)>`` (:func:`signature`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core import __version__
from core.clock import iso
from core.i18n import N_
from core.notices import SPECS, Kind, Notification, at_least, ntfy_root_and_topic, redact

if TYPE_CHECKING:  # sending loads HTTP; listing the channels (``status``) does not (issue 24)
    from core.notify.http import Request
    from core.settings import Settings

NTFY_TOKEN = "ntfy-token"
WEBHOOK_SECRET = "webhook-secret"
SIGNATURE_HEADER = "X-Goalkeeper-Signature"
DELIVERY_HEADER = "X-Goalkeeper-Delivery"
KIND_HEADER = "X-Goalkeeper-Kind"
WEBHOOK_KEYS = ("kind", "goal", "title", "provider", "host", "at", "message", "next_resume_at")


#: the package's version is ``core.__version__`` (tests/integration/test_release.py): no need to
#: read the installed metadata at import
USER_AGENT = f"Goalkeeper/{__version__}"


@dataclass(frozen=True)
class Channel:
    """A configured remote channel. Frozen: the settings make a new one when they change.

    Attributes:
        name: ``ntfy`` or ``webhook``.
        url: where it posts (shown only as :attr:`target`).
        min_kind: the least urgent kind it gets.
    """

    name: str
    url: str
    min_kind: Kind

    #: the keyring entry whose value the channel uses, when there is one
    secret_name = ""
    #: what to check when the server answers 401/403
    auth_hint = ""

    @property
    def target(self) -> str:
        return redact(self.url)

    def admits(self, notification: Notification) -> bool:
        return at_least(notification.kind, self.min_kind)

    def request(self, notification: Notification, secret: str | None, delivery_id: str,
                host: str) -> Request:
        raise NotImplementedError


@dataclass(frozen=True)
class NtfyChannel(Channel):
    secret_name = NTFY_TOKEN
    auth_hint = N_("check the token: `goalkeeper secret set {name}`").format(name=NTFY_TOKEN)

    def request(self, notification: Notification, secret: str | None, delivery_id: str,
                host: str) -> Request:
        from core.notify.http import Request

        root, topic = ntfy_root_and_topic(self.url)
        spec = SPECS[notification.kind]
        tags = [spec.emoji, "goalkeeper", notification.kind.value]
        tags += [t for t in (notification.provider, host) if t]
        message: dict[str, Any] = {
            "topic": topic, "title": notification.title, "message": notification.message,
            "priority": spec.priority, "tags": tags, "sequence_id": f"gk-{delivery_id}",
        }
        if notification.url:
            message["click"] = notification.url
        if notification.replies:  # ntfy's "http" action buttons (docs.ntfy.sh/publish, Actions)
            message["actions"] = [{"action": "http", "label": r.label, "url": r.url,
                                   "method": "POST", "body": r.body, "clear": True}
                                  for r in notification.replies]
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        if secret:
            headers["Authorization"] = f"Bearer {secret}"
        return Request(root, json.dumps(message, ensure_ascii=False).encode(), headers)


@dataclass(frozen=True)
class WebhookChannel(Channel):
    secret_name = WEBHOOK_SECRET
    auth_hint = N_("the receiver refused it (if it checks signatures, is `{name}` the secret "
                   "it expects?)").format(name=WEBHOOK_SECRET)

    def request(self, notification: Notification, secret: str | None, delivery_id: str,
                host: str) -> Request:
        from core.notify.http import Request

        body = webhook_body(notification, host)
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT,
                   DELIVERY_HEADER: delivery_id, KIND_HEADER: notification.kind.value}
        if secret:
            headers[SIGNATURE_HEADER] = signature(body, secret)
        return Request(self.url, body, headers)


def webhook_body(notification: Notification, host: str) -> bytes:
    """The webhook's JSON, compact, UTF-8, keys in :data:`WEBHOOK_KEYS` order."""
    payload: dict[str, Any] = {
        "kind": notification.kind.value, "goal": notification.goal, "title": notification.title,
        "provider": notification.provider, "host": host, "at": iso(notification.at),
        "message": notification.message, "next_resume_at": iso(notification.next_resume_at),
    }
    if notification.replies:
        payload["replies"] = [r.to_json() for r in notification.replies]
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def signature(body: bytes, secret: str) -> str:
    """``sha256=<hex>``: HMAC-SHA256 of the exact body bytes, keyed with the secret (UTF-8)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(body: bytes, header: str, secret: str) -> bool:
    """What a receiver does (in constant time); see the README's example."""
    return hmac.compare_digest(signature(body, secret), header)


def channels_from(settings: Settings) -> list[Channel]:
    """The remote channels the settings configure (none when both URLs are empty)."""
    channels: list[Channel] = []
    if settings.notify_ntfy_url:
        channels.append(NtfyChannel("ntfy", settings.notify_ntfy_url,
                                    settings.notify_ntfy_min_kind))
    if settings.notify_webhook_url:
        channels.append(WebhookChannel("webhook", settings.notify_webhook_url,
                                       settings.notify_webhook_min_kind))
    return channels
