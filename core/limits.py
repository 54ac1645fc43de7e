"""Size limits, checked before anything is stored.

What a user hands Goalkeeper (a goal file, a command's ``--limit``) that is too big is refused
with a typed error saying the limit (:class:`LimitExceeded`, or the goal file's own error). What
arrives from outside without a person to tell (an agent's 10 MB prompt used as a title, a
provider's error text) is cut to size with an ellipsis where the models are built
(:func:`clip`), so no row in the store can grow without bound.
"""

from __future__ import annotations

#: a goal's title
MAX_TITLE_CHARS = 300
#: a pause detail, a note, a history reason
MAX_DESCRIPTION_CHARS = 4000
#: a goal file, in bytes (read and parsed only below this)
MAX_GOAL_FILE_BYTES = 1 << 20
#: config.toml, in bytes (every setting written out is about 5 KB)
MAX_CONFIG_FILE_BYTES = 1 << 20
#: arrays and tables inside one another in a TOML file a person edits (config.toml needs 3,
#: a goal file 4; tomllib recurses once per level and gives up with a traceback near 1000)
MAX_TOML_DEPTH = 32
#: one string (or key) in such a file, in characters: Linux's cap on one argument or
#: environment entry (MAX_ARG_STRLEN, 128 KiB), so no value a step could be given is refused
MAX_TOML_VALUE_CHARS = 128 * 1024
#: how much of a refused value an error message shows
MAX_SHOWN_CHARS = 120
#: steps per pipeline
MAX_STAGES = 200
MAX_SOURCES = 100
#: rows per page of ``history`` (and runs per page of ``runs``)
MAX_PAGE = 1000

ELLIPSIS = "…"


class LimitExceeded(ValueError):
    """Something is larger than Goalkeeper accepts; ``what``, ``size`` and ``limit`` say it."""

    def __init__(self, what: str, size: int, limit: int, unit: str = "") -> None:
        super().__init__(f"{what} is too large: {size}{unit}, at most {limit}{unit}")
        self.what, self.size, self.limit = what, size, limit


def check(what: str, size: int, limit: int, unit: str = "") -> None:
    if size > limit:
        raise LimitExceeded(what, size, limit, unit)


def clip(text: str | None, limit: int) -> str | None:
    """``text`` cut to ``limit`` characters (an ellipsis marking the cut)."""
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1] + ELLIPSIS


def clip_echo(message: str, value: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """``message`` with every copy of ``value`` in it (a validator's message that repeats the
    input it refused) cut to ``limit`` characters, so that no message is as long as its input."""
    if not isinstance(value, str) or len(value) <= limit:
        return message
    for copy in {value, value.strip()}:
        if len(copy) > limit:
            message = message.replace(copy, clip(copy, limit) or "")
    return message

#: how far a host's clock may be from the shared store's (the database's ``now()``) before it
#: is a health problem, and how far ahead of it a quota reading may be stamped before it is
#: refused: NTP keeps machines within milliseconds; a heartbeat's offset is measured at the
#: start of its transaction, so a few seconds also cover a busy store thread
CLOCK_SKEW_LIMIT_SECONDS = 10.0
