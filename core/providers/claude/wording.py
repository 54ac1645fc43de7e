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


# -- Claude Code's own auto-continue ("Continue automatically at usage limit") ---------------------
# The notices come from a copy table the server can change without a release
# (``tengu_functional_llama``), so they are matched by the shape of the phrase, not the sentence.
# armed, up to 2.1.329: "Usage limit reached · continuing automatically at 9:35pm · esc to cancel"
# (or "… shortly", "… when …"); 2.1.330+: "Usage limit reached · set to continue automatically
# at 9:35pm"; re-armed: "Usage limit reached again · …" in either wording. A wait the user chose
# in /rate-limit-options: "Claude Code will continue automatically at Dec 5, 8:59am. Keep this
# session open…" (2.1.330+ drops "Press esc to cancel the wait."); older builds: "… no longer
# ends this wait".
_NATIVE_WAITING = re.compile(
    r"(?:continuing|set to continue|will continue) automatically\s+(?:at|shortly|when)\b|"
    r"no longer ends this wait", re.IGNORECASE)
# fired: "Usage limit reset · Continuing automatically", "Usage limit available again ·
# continuing now" (also when a free or banked 5-hour reset ends the wait early)
_NATIVE_FIRED = re.compile(
    r"limit reset\s*·\s*continuing automatically|available again\s*·\s*continuing now",
    re.IGNORECASE)
# every way Claude Code stands down: Esc ("Automatic continue cancelled · /rate-limit-options to
# re-arm" up to 2.1.329, "… to wait again" from 2.1.330), "… Claude Code exited / relaunched
# during the wait …", moved to the cloud, Desktop, the background; "Automatic continue stopped ·
# …" (login changed, more than 24 hours out, repeated limits), "… was turned off", "… did not
# run", the stale "Usage limit has reset · Press enter to continue", "Workflow paused · your
# login changed or ended …"
_NATIVE_CANCELLED = re.compile(
    r"automatic continue (?:cancelled|canceled|stopped|was turned off|did not run)|"
    r"usage limit has reset\s*·\s*press enter|workflow paused\s*·\s*your login",
    re.IGNORECASE)
# The other ways Claude Code goes on at a limit that leave words in the transcript (the output of
# a local command is written as ``<local-command-stdout>``): "/low-priority" (or "Continue now at
# lower priority" in /rate-limit-options) at a 5-hour limit answers "Continuing now at lower
# priority until your limit resets at 3pm. Your weekly limit still applies, …", and "Lower-priority
# mode is back on …" when run again after a pause (2.1.332's bundle).
_GOING_ON = re.compile(
    r"continuing now at lower priority|lower-priority mode is back on", re.IGNORECASE)


def native_kind(text: str) -> str | None:
    """``"cancelled"``, ``"fired"``, ``"waiting"`` for Claude's auto-continue notices, else None.

    ``"fired"`` covers every notice that says Claude Code is going on by itself now: its own
    wait firing (at the reset, or early after a free or banked reset) and the lower-priority
    continuation.
    """
    if _NATIVE_CANCELLED.search(text):
        return "cancelled"
    if _NATIVE_FIRED.search(text) or _GOING_ON.search(text):
        return "fired"
    if _NATIVE_WAITING.search(text):
        return "waiting"
    return None


def is_armed_notice(text: str) -> bool:
    """The notice that Claude Code armed (or re-armed) its wait, in any known wording."""
    return native_kind(text) == "waiting"


def is_chosen_wait(text: str) -> bool:
    """The wait the user chose in ``/rate-limit-options`` ("Claude Code will continue
    automatically at …"): Claude keeps it even past its 24-hour horizon."""
    return re.search(r"will continue automatically\s+at\b", text, re.IGNORECASE) is not None
