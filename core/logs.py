"""Logging: a rotating file in the log directory (and stdout for headless hosts).

One line per state change and decision (the engine logs every history row). Secrets are never
passed to a logger: provider code logs names of secrets, never values — and every line is
masked anyway (:data:`core.redact.KNOWN`), in every encoding a secret can take.

When stdout is the systemd journal (``$JOURNAL_STREAM`` names its device and inode, as systemd
sets it for ``StandardOutput=journal``), stdout lines carry the level as a syslog priority
prefix (``<4>`` for a warning, which journald turns into the entry's priority) and no time
(the journal has its own).
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from core.atomic import open_private, private_dir
from core.redact import KNOWN, remember, secret_environment

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
JOURNAL_FORMAT = "%(name)s: %(message)s"
#: syslog priorities of the logging levels (sd-daemon(3): "<N>" at the start of a line)
_PRIORITIES = ((logging.CRITICAL, 2), (logging.ERROR, 3), (logging.WARNING, 4),
               (logging.INFO, 6))


class _UtcFormatter(logging.Formatter):
    """UTC times; every known secret masked in the whole line, traceback included."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + (
            f".{int(record.msecs):03d}Z")

    def format(self, record: logging.LogRecord) -> str:
        return KNOWN.text(super().format(record))


class _JournalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        priority = next((p for lvl, p in _PRIORITIES if record.levelno >= lvl), 7)
        text = super().format(record)
        return "\n".join(f"<{priority}>{line}" for line in text.splitlines() or [""])


def stream_is_journal(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``stream`` is the journal stream systemd connected (``$JOURNAL_STREAM``)."""
    value = (os.environ if environ is None else environ).get("JOURNAL_STREAM", "")
    device, _, inode = value.partition(":")
    try:
        info = os.fstat(stream.fileno())
        return (info.st_dev, info.st_ino) == (int(device), int(inode))
    except (OSError, ValueError, AttributeError):
        return False


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """The log file, 0600 whatever the umask (the rotated files keep it: they are renamed)."""

    def _open(self) -> io.TextIOWrapper:
        fd = open_private(Path(self.baseFilename), os.O_WRONLY | os.O_APPEND)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


def _stdout_handler() -> logging.Handler:
    handler = logging.StreamHandler(sys.stdout)
    journal = stream_is_journal(sys.stdout)
    handler.setFormatter(_JournalFormatter(JOURNAL_FORMAT) if journal
                         else _UtcFormatter(FORMAT))
    return handler


def setup_logging(log_file: Path | None, stdout: bool = False,
                  level: int = logging.INFO,
                  environ: Mapping[str, str] | None = None) -> list[logging.Handler]:
    """Attach handlers to the ``goalkeeper`` and ``core`` loggers; returns them for removal.

    The host's secret-looking environment variables (``*_API_KEY``, ``*TOKEN*``…) are
    remembered first, so that no log line — nor the daemon's output — can show them."""
    remember(secret_environment(os.environ if environ is None else environ))
    handlers: list[logging.Handler] = []
    if log_file is not None:
        private_dir(log_file.parent)
        handlers.append(_PrivateRotatingFileHandler(
            log_file, maxBytes=2_000_000, backupCount=5, encoding="utf-8"))
        handlers[-1].setFormatter(_UtcFormatter(FORMAT))
    if stdout:
        handlers.append(_stdout_handler())
    for name in ("goalkeeper", "core", "gui"):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        for handler in handlers:
            logger.addHandler(handler)
    return handlers


def remove_handlers(handlers: list[logging.Handler]) -> None:
    for name in ("goalkeeper", "core", "gui"):
        logger = logging.getLogger(name)
        for handler in handlers:
            logger.removeHandler(handler)
    for handler in handlers:
        handler.close()
