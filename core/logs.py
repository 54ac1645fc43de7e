"""Logging: a rotating file in the log directory (and stdout for headless hosts).

One line per state change and decision (the engine logs every history row). Secrets are never
passed to a logger: provider code logs names of secrets, never values.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
import time
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _UtcFormatter(logging.Formatter):
    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + (
            f".{int(record.msecs):03d}Z")


def setup_logging(log_file: Path | None, stdout: bool = False,
                  level: int = logging.INFO) -> list[logging.Handler]:
    """Attach handlers to the ``goalkeeper`` and ``core`` loggers; returns them for removal."""
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
