"""The daemon under systemd: stdout lines carry syslog priorities and no time of their own."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest

from core.logs import remove_handlers, setup_logging, stream_is_journal


def _journal_env(handle: object) -> str:
    info = os.fstat(handle.fileno())  # type: ignore[attr-defined]
    return f"{info.st_dev}:{info.st_ino}"


def test_a_stream_is_the_journal_only_when_journal_stream_names_it(tmp_path: Path) -> None:
    with open(tmp_path / "out", "w") as handle, open(tmp_path / "other", "w") as other:
        assert stream_is_journal(handle, {"JOURNAL_STREAM": _journal_env(handle)})
        assert not stream_is_journal(handle, {"JOURNAL_STREAM": _journal_env(other)})
        assert not stream_is_journal(handle, {})
        assert not stream_is_journal(handle, {"JOURNAL_STREAM": "garbage"})


@pytest.mark.parametrize("journal", [True, False])
def test_stdout_format_follows_the_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           journal: bool) -> None:
    with open(tmp_path / "stdout", "w") as handle:
        monkeypatch.setattr(sys, "stdout", handle)
        if journal:
            monkeypatch.setenv("JOURNAL_STREAM", _journal_env(handle))
        else:
            monkeypatch.delenv("JOURNAL_STREAM", raising=False)
        handlers = setup_logging(tmp_path / "log" / "goalkeeper.log", stdout=True)
        try:
            logging.getLogger("core.test").warning("quota low\nsecond line")
            logging.getLogger("core.test").info("resumed")
        finally:
            remove_handlers(handlers)
    lines = (tmp_path / "stdout").read_text().splitlines()
    if journal:
        assert lines == ["<4>core.test: quota low", "<4>second line", "<6>core.test: resumed"]
    else:
        assert lines[0].endswith("WARNING core.test: quota low") and lines[0][:4].isdigit()
    file_line = (tmp_path / "log" / "goalkeeper.log").read_text().splitlines()[0]
    assert file_line.endswith("WARNING core.test: quota low") and file_line[:4].isdigit()
