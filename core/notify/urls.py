"""The channels' URLs: what the settings accept, and how a URL is named where people can see it.

Both URLs may be secrets in themselves — an ntfy topic on a public server is "essentially a
password" (ntfy's docs), a Slack or Discord webhook URL carries its token in the path — so logs,
``goalkeeper status`` and the window name a URL by its scheme and host only (:func:`redact`).
Credentials never go into a URL: the ntfy token and the webhook secret live in the OS keyring.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

from core.i18n import N_

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
