"""What ntfy and the webhook receive: payloads, headers, the signature, and the URL rules."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from core.notices import Kind, Notification, ntfy_root_and_topic, redact
from core.notify.channels import (
    DELIVERY_HEADER,
    SIGNATURE_HEADER,
    WEBHOOK_KEYS,
    NtfyChannel,
    WebhookChannel,
    channels_from,
    signature,
    verify,
)
from core.settings import Settings

AT = datetime(2026, 7, 7, 16, 0, 5, tzinfo=UTC)
GAVE_UP = Notification(Kind.GAVE_UP, "Gave up on: Réfactor ✓", "Attempt cap reached (3/3).", AT,
                       "codex:abc", "Réfactor ✓", "codex", None, "https://example.org/abc")
SCHEDULED = Notification(Kind.SCHEDULED, "Docs will resume at 18:40", "Out of quota.", AT,
                         "demo:docs", "Docs", "demo", AT + timedelta(hours=2, minutes=40))


def test_ntfy_publishes_json_to_the_root_with_priority_tags_click_and_token() -> None:
    channel = NtfyChannel("ntfy", "https://ntfy.example.org/base/my-goals", Kind.SCHEDULED)
    request = channel.request(GAVE_UP, "tk_secret", "00ff", "box")
    assert request.url == "https://ntfy.example.org/base/"
    assert request.headers["Authorization"] == "Bearer tk_secret"
    assert request.headers["Content-Type"] == "application/json"
    body = json.loads(request.body)
    assert body == {"topic": "my-goals", "title": "Gave up on: Réfactor ✓",
                    "message": "Attempt cap reached (3/3).", "priority": 4,
                    "tags": ["rotating_light", "goalkeeper", "gave_up", "codex", "box"],
                    "sequence_id": "gk-00ff", "click": "https://example.org/abc"}
    plain = channel.request(SCHEDULED, None, "01", "box")
    assert "Authorization" not in plain.headers
    body = json.loads(plain.body)
    assert body["priority"] == 2 and "click" not in body


def test_the_webhook_gets_exactly_the_documented_keys_in_utc() -> None:
    channel = WebhookChannel("webhook", "https://hooks.example.org/x", Kind.SCHEDULED)
    request = channel.request(SCHEDULED, None, "d1", "box")
    assert request.url == "https://hooks.example.org/x"
    payload = json.loads(request.body)
    assert tuple(payload) == WEBHOOK_KEYS
    assert payload == {"kind": "scheduled", "goal": "demo:docs",
                       "title": "Docs will resume at 18:40", "provider": "demo", "host": "box",
                       "at": "2026-07-07T16:00:05Z", "message": "Out of quota.",
                       "next_resume_at": "2026-07-07T18:40:05Z"}
    assert request.headers[DELIVERY_HEADER] == "d1"
    assert SIGNATURE_HEADER not in request.headers


def test_the_signature_is_hmac_sha256_of_the_exact_body() -> None:
    channel = WebhookChannel("webhook", "https://hooks.example.org/x", Kind.SCHEDULED)
    request = channel.request(GAVE_UP, "s3cret", "d2", "box")
    header = request.headers[SIGNATURE_HEADER]
    # what the README tells a receiver to do
    expected = "sha256=" + hmac.new(b"s3cret", request.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(header, expected)
    assert verify(request.body, header, "s3cret")
    assert not verify(request.body + b" ", header, "s3cret")
    assert not verify(request.body, header, "other")
    assert signature(b"{}", "k") == signature(b"{}", "k") != signature(b"{}", "l")


def test_urls_are_checked_and_shown_without_their_secret_part() -> None:
    with pytest.raises(ValidationError, match="user or password"):
        Settings(notify_ntfy_url="https://me:pw@ntfy.sh/goals")
    with pytest.raises(ValidationError, match="ends with the topic"):
        Settings(notify_ntfy_url="https://ntfy.sh/")
    with pytest.raises(ValidationError, match="without a"):
        Settings(notify_ntfy_url="https://ntfy.sh/goals?x=1")
    with pytest.raises(ValidationError, match="http:// or https://"):
        Settings(notify_webhook_url="ftp://example.org/hook")
    with pytest.raises(ValidationError, match="invalid port"):
        Settings(notify_webhook_url="https://example.org:99999/hook")
    with pytest.raises(ValidationError, match="cannot be a minimum kind"):
        Settings(notify_webhook_min_kind="test")  # type: ignore[arg-type]
    ok = Settings(notify_ntfy_url=" https://ntfy.sh/my-goals ",
                  notify_webhook_url="https://hooks.slack.com/services/T0/B0/tok?x=1",
                  notify_webhook_min_kind="failed")  # type: ignore[arg-type]
    assert ok.notify_ntfy_url == "https://ntfy.sh/my-goals"
    assert [(c.name, c.min_kind) for c in channels_from(ok)] == [
        ("ntfy", Kind.SCHEDULED), ("webhook", Kind.FAILED)]
    assert channels_from(Settings()) == []
    assert redact("https://hooks.slack.com/services/T0/B0/tok?x=1") == "https://hooks.slack.com/…"
    assert redact("http://[::1]:8080/topic") == "http://[::1]:8080/…"
    assert redact("https://ntfy.sh") == "https://ntfy.sh"
    assert ntfy_root_and_topic("https://ntfy.sh/goals") == ("https://ntfy.sh/", "goals")
