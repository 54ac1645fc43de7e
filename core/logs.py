"""Logging: a rotating file in the log directory (and stdout for headless hosts).

One line per state change and decision (the engine logs every history row). Secrets are never
passed to a logger: provider code logs names of secrets, never values — and every line is
masked anyway (:data:`core.redact.KNOWN`), in every encoding a secret can take.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from core.redact import KNOWN, remember, secret_environment

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _UtcFormatter(logging.Formatter):
    """UTC times; every known secret masked in the whole line, traceback included."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + (
            f".{int(record.msecs):03d}Z")

    def format(self, record: logging.LogRecord) -> str:
        return KNOWN.text(super().format(record))


def setup_logging(log_file: Path | None, stdout: bool = False,
                  level: int = logging.INFO,
                  environ: Mapping[str, str] | None = None) -> list[logging.Handler]:
    """Attach handlers to the ``goalkeeper`` and ``core`` loggers; returns them for removal.

    The host's secret-looking environment variables (``*_API_KEY``, ``*TOKEN*``…) are
    remembered first, so that no log line — nor the daemon's output — can show them."""
    remember(secret_environment(os.environ if environ is None else environ))
    handlers: list[logging.Handler] = []
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.handlers.RotatingFileHandler(
            log_file, maxBytes=2_000_000, backupCount=5, encoding="utf-8"))
    if stdout:
        handlers.append(logging.StreamHandler(sys.stdout))
    for handler in handlers:
        handler.setFormatter(_UtcFormatter(FORMAT))
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
