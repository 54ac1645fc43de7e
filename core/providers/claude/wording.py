"""The wording of Claude Code's limit messages and notices (kept free of heavy imports: scan
workers and the StopFailure hook use it).

See ``provider-formats.md`` B0/B2 for every variant. In 2.1.x the structured fields decide
(``apiError``, ``apiErrorParams.rate_limit_info``, ``apiErrorIsTransient``); the words are read
only where a record carries none (older versions, hook payloads).
"""

from __future__ import annotations

import re

WINDOW_5H = "claude:5h"
WINDOW_7D = "claude:7d"
WINDOW_7D_OPUS = "claude:7d-opus"
WINDOW_7D_SONNET = "claude:7d-sonnet"
#: the model-scoped weekly window 2.1.328 calls "Fable limit" (``seven_day_overage_included``)
WINDOW_7D_FABLE = "claude:7d-fable"
WINDOW_OVERAGE = "claude:overage"

#: how long each window runs, in seconds (the extra-usage window has no fixed length)
WINDOW_SECONDS = {WINDOW_5H: 5 * 3600.0, WINDOW_7D: 7 * 86400.0, WINDOW_7D_OPUS: 7 * 86400.0,
                  WINDOW_7D_SONNET: 7 * 86400.0, WINDOW_7D_FABLE: 7 * 86400.0}

#: Claude's own window names (``rateLimitType``, ``unifiedWindows``, statusline ``rate_limits``)
#: → Goalkeeper's windows. The 2.1.328 bundle's enum: five_hour, seven_day, seven_day_opus,
#: seven_day_sonnet, seven_day_overage_included, overage.
WINDOW_BY_TYPE = {
    "five_hour": WINDOW_5H,
    "seven_day": WINDOW_7D,
    "seven_day_opus": WINDOW_7D_OPUS,
    "seven_day_sonnet": WINDOW_7D_SONNET,
    "seven_day_overage_included": WINDOW_7D_FABLE,
    "overage": WINDOW_OVERAGE,
    "extra_usage": WINDOW_OVERAGE,
}

#: "Claude AI usage limit reached|1783440000": older transcripts and headless results
EPOCH = re.compile(r"usage limit reached\s*\|\s*(\d{9,11})\b", re.IGNORECASE)
_LIMIT_WORDS = re.compile(
    r"usage limit|session limit|weekly limit|(?:5|five)[- ]hour limit|out of extra usage|"
    r"out of usage credits|usage credit limit|limit will reset|hit your (?:\w+ )?limit|"
    r"opus limit|sonnet limit|fable limit",
    re.IGNORECASE,
)
#: 429s that are not a usage limit: the subscriber's "Server is temporarily limiting requests
#: (not your usage limit)" (``apiErrorIsTransient: true``) and the API-key "Request rejected (429)"
_TRANSIENT = re.compile(
    r"temporarily limiting requests|not your usage limit|request rejected \(429\)", re.IGNORECASE)


def looks_like_limit(text: str) -> bool:
    """True when ``text`` reads like a usage-limit message (for records without structure)."""
    if is_transient_text(text):
        return False
    return bool(EPOCH.search(text) or _LIMIT_WORDS.search(text))


def is_transient_text(text: str) -> bool:
    """True for the words of a transient 429 (retried, never a quota pause)."""
    return bool(_TRANSIENT.search(text))


def window_of(text: str) -> str:
    """The window a limit message is about, from its words (weekly, model-scoped, credits)."""
    lowered = text.lower()
    if "fable limit" in lowered:
        return WINDOW_7D_FABLE
    if "opus limit" in lowered or ("weekly" in lowered and "opus" in lowered):
        return WINDOW_7D_OPUS
    if "sonnet limit" in lowered or ("weekly" in lowered and "sonnet" in lowered):
        return WINDOW_7D_SONNET
    if "weekly" in lowered:
        return WINDOW_7D
    if "usage credit" in lowered or "extra usage" in lowered:
        return WINDOW_OVERAGE
    return WINDOW_5H


# -- Claude Code's own auto-continue ("Continue automatically at usage limit"), 2.1.328 -----------
# armed: "Usage limit reached · continuing automatically at 9:35pm · esc to cancel" (or
# "… shortly"), re-armed: "Usage limit reached again · continuing automatically …", a wait the
# user chose in /rate-limit-options: "Claude Code will continue automatically at Dec 5, 8:59am.
# Keep this session open…"; older builds: "… no longer ends this wait".
_NATIVE_WAITING = re.compile(
    r"continuing automatically (?:at|shortly|when)|will continue automatically at|"
    r"no longer ends this wait", re.IGNORECASE)
# fired: "Usage limit reset · Continuing automatically", "Usage limit available again ·
# continuing now"
_NATIVE_FIRED = re.compile(
    r"limit reset\s*·\s*continuing automatically|available again\s*·\s*continuing now",
    re.IGNORECASE)
# every way 2.1.328 stands down: Esc ("Automatic continue cancelled · /rate-limit-options to
# re-arm"), "… Claude Code exited / relaunched during the wait …", moved to the cloud, Desktop,
# the background; "Automatic continue stopped · …" (login changed, more than 24 hours out,
# repeated limits), "… was turned off", "… did not run", the stale "Usage limit has reset ·
# Press enter to continue", "Workflow paused · your login changed or ended …"
_NATIVE_CANCELLED = re.compile(
    r"automatic continue (?:cancelled|canceled|stopped|was turned off|did not run)|"
    r"usage limit has reset\s*·\s*press enter|workflow paused\s*·\s*your login",
    re.IGNORECASE)


def native_kind(text: str) -> str | None:
    """``"cancelled"``, ``"fired"``, ``"waiting"`` for Claude's auto-continue notices, else None."""
    if _NATIVE_CANCELLED.search(text):
        return "cancelled"
    if _NATIVE_FIRED.search(text):
        return "fired"
    if _NATIVE_WAITING.search(text):
        return "waiting"
    return None
