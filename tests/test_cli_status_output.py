"""``goalkeeper status`` prints, byte for byte, what it printed before its settings came from a
snapshot and before its models were built on first use (issue 24).

``tests/golden/`` holds the output of the code before that change (commit 133aeaf), for the
store of :mod:`tests.support.status_store` at its fixed instant: the text in English and in
Chinese, and ``--json``. Each is compared twice: the first run validates ``config.toml`` (no
snapshot yet), the second reads the snapshot that run wrote.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from core.cli import main
from core.clock import FakeClock
from core.paths import resolve_paths
from tests.support.status_store import NOW, seed_status_home

GOLDEN = Path(__file__).parent / "golden"


def status(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["status", *argv], clock=FakeClock(NOW))
    return code, out.getvalue()


@pytest.mark.parametrize(("argv", "lang", "golden"), [
    ((), "C.UTF-8", "status.txt"),
    ((), "zh_CN.UTF-8", "status.zh_CN.txt"),
    (("--json",), "C.UTF-8", "status.json"),
])
def test_status_prints_what_it_printed_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              argv: tuple[str, ...], lang: str,
                                              golden: str) -> None:
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", lang)
    monkeypatch.setenv("GOALKEEPER_HOME", str(tmp_path))
    seed_status_home(tmp_path)
    snapshot = resolve_paths().settings_snapshot
    expected = (GOLDEN / golden).read_text(encoding="utf-8")
    assert not snapshot.exists()
    assert status(*argv) == (0, expected)  # validated
    assert snapshot.exists()
    assert status(*argv) == (0, expected)  # from the snapshot
