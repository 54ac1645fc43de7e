"""The wording of Claude Code's limit messages (kept free of heavy imports: scan workers use it).

See ``provider-formats.md`` B2 for every variant.
"""

from __future__ import annotations

import re

WINDOW_5H = "claude:5h"
WINDOW_7D = "claude:7d"
WINDOW_7D_OPUS = "claude:7d-opus"
WINDOW_7D_SONNET = "claude:7d-sonnet"
WINDOW_OVERAGE = "claude:overage"

#: "Claude AI usage limit reached|1783440000": older transcripts and headless results
EPOCH = re.compile(r"usage limit reached\s*\|\s*(\d{9,11})\b", re.IGNORECASE)
_LIMIT_WORDS = re.compile(
    r"usage limit|session limit|weekly limit|(?:5|five)[- ]hour limit|out of extra usage|"
    r"limit will reset|hit your (?:\w+ )?limit|opus limit|sonnet limit",
    re.IGNORECASE,
)


def looks_like_limit(text: str) -> bool:
    """True when ``text`` reads like a usage-limit message (for records without ``error``)."""
    return bool(EPOCH.search(text) or _LIMIT_WORDS.search(text))


def window_of(text: str) -> str:
    """The window a limit message is about: weekly (maybe model-scoped) or the 5-hour one."""
    lowered = text.lower()
    if "weekly" in lowered or "opus limit" in lowered or "sonnet limit" in lowered:
        if "opus" in lowered:
            return WINDOW_7D_OPUS
        if "sonnet" in lowered:
            return WINDOW_7D_SONNET
        return WINDOW_7D
    return WINDOW_5H
