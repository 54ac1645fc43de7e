"""``codex-usage`` keeps what each rollout held for its next run (issue 24): an unchanged rollout
is not read again, a changed, new or vanished one is noticed, and a cache that cannot be
trusted — corrupt, of another version of the scan, not private, not this user's — is ignored,
never an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from core.cli import main
from core.providers.codex import history, usage_cache, usage_workers
from core.providers.codex.history import rollouts
from core.providers.codex.usage_cache import FILE_NAME, UsageCache, UsageRun
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    THREAD_B,
    CodexHome,
    call,
    five_and_week,
    meta,
    turn,
)

M = timedelta(minutes=1)
H = timedelta(hours=1)


def quota(used: float) -> dict:
    return five_and_week(used, T0 + 5 * H, 2.0, T0 + 90 * H)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CodexHome:
    found = CodexHome(tmp_path / "codex")
    monkeypatch.setenv("CODEX_HOME", str(found.root))
    return found


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The rollouts read (in this process: small histories are read here)."""
    seen: list[Path] = []
    scan_file = history.scan_file

    def counted(path: Path) -> tuple[history.Stamp, history.UsageHistory] | None:
        seen.append(path)
        return scan_file(path)

    monkeypatch.setattr(history, "scan_file", counted)
    monkeypatch.setattr(usage_workers, "scan_file", counted)
    return seen


def two(home: CodexHome) -> tuple[Path, Path]:
    a = home.rollout(THREAD_A, T0, meta(THREAD_A, T0), turn("gpt-5.2", T0),
                     call(T0 + M, 1, quota(10.0)), call(T0 + 2 * H, 2, quota(30.5)))
    b = home.rollout(THREAD_B, T0 + H, meta(THREAD_B, T0 + H), call(T0 + H + M, 4))
    return a, b


def usage(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["codex-usage", "--json", *args]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # nothing to say about a cache, whatever became of it
    return dict(json.loads(out))


def cache_file() -> Path:
    return Path(os.environ["GOALKEEPER_HOME"]) / FILE_NAME


def test_an_unchanged_history_is_not_read_again(home: CodexHome, reads: list[Path],
                                                capsys: pytest.CaptureFixture[str]):
    two(home)
    first = usage(capsys)
    assert len(reads) == 2 and first["total"]["calls"] == 3 and first["quota"]
    reads.clear()
    assert usage(capsys) == first  # the same answer, quota points to the microsecond
    assert reads == []
    assert cache_file().stat().st_mode & 0o777 == 0o600


def test_an_appended_rollout_is_read_again_and_only_it(home: CodexHome, reads: list[Path],
                                                      capsys: pytest.CaptureFixture[str]):
    _, b = two(home)
    usage(capsys)
    reads.clear()
    home.append(b, call(T0 + 3 * H, 5))
    found = usage(capsys)
    assert reads == [b] and found["total"]["calls"] == 4


def test_new_and_vanished_rollouts(home: CodexHome, reads: list[Path],
                                   capsys: pytest.CaptureFixture[str]):
    a, b = two(home)
    usage(capsys)
    b.unlink()
    reads.clear()
    assert usage(capsys)["total"]["calls"] == 2 and reads == []
    assert [row[0] for row in json.loads(cache_file().read_text())["files"]] == [str(a)]
    c = home.rollout("019a0000-0000-7000-8000-00000000000c", T0 + 4 * H,
                     meta("019a0000-0000-7000-8000-00000000000c", T0 + 4 * H),
                     call(T0 + 4 * H + M, 9))
    assert usage(capsys)["total"]["calls"] == 3 and reads == [c]


@pytest.mark.parametrize("content", [
    b"", b"{", b"\xff\xfe not json", b"[]", b'{"format": 1}', b'{"format": 1, "key": 3}',
    b"[" * 200_000,  # nested too deep for a parser that recurses
    None,  # a valid cache whose rows are wrong (filled in below)
])
def test_a_corrupt_cache_is_ignored_and_written_anew(home: CodexHome, reads: list[Path],
                                                    capsys: pytest.CaptureFixture[str],
                                                    content: bytes | None):
    two(home)
    first = usage(capsys)
    if content is None:
        held = json.loads(cache_file().read_text())
        held["files"][0][3][0][2] = "many"  # a count that is not a number
        content = json.dumps(held).encode()
    cache_file().write_bytes(content)
    reads.clear()
    assert usage(capsys) == first and len(reads) == 2
    reads.clear()
    assert usage(capsys) == first and reads == []  # written anew


def test_a_cache_of_another_scan_or_not_private_or_not_ours_is_ignored(
        home: CodexHome, reads: list[Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch):
    two(home)
    first = usage(capsys)
    monkeypatch.setattr(usage_cache, "scan_key", lambda: "a changed scan")
    reads.clear()
    assert usage(capsys) == first and len(reads) == 2
    cache_file().chmod(0o644)
    reads.clear()
    assert usage(capsys) == first and len(reads) == 2
    monkeypatch.setattr(os, "getuid", lambda: 12345)  # the file is another user's
    assert UsageCache.load(cache_file(), "a changed scan").entries == {}


def test_a_cache_that_cannot_be_written_costs_nothing(home: CodexHome, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch):
    two(home)
    first = usage(capsys)
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    run = UsageRun(rollouts(home.sessions), lambda size: 1, blocked / FILE_NAME, home.sessions)
    assert run.history().totals() == history.scan_files(rollouts(home.sessions)).totals()
    run.save()  # (cannot be written: nothing said, nothing lost)
    assert first["total"]["calls"] == 3


def test_another_codex_homes_rollouts_stay_kept(home: CodexHome, tmp_path: Path,
                                               reads: list[Path],
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch):
    """Two accounts, two homes, asked about in turn: neither's answers push out the other's."""
    two(home)
    other = CodexHome(tmp_path / "other")
    other.rollout(THREAD_A, T0, meta(THREAD_A, T0), call(T0 + M, 7))
    first = usage(capsys)
    monkeypatch.setenv("CODEX_HOME", str(other.root))
    assert usage(capsys)["total"]["calls"] == 1
    monkeypatch.setenv("CODEX_HOME", str(home.root))
    reads.clear()
    assert usage(capsys) == first and reads == []
    monkeypatch.setenv("CODEX_HOME", str(other.root))
    assert usage(capsys)["total"]["calls"] == 1 and reads == []


def test_the_scan_key_follows_the_scans_code():
    assert usage_cache.scan_key() == usage_cache.scan_key()
    assert len(usage_cache.scan_key()) == 64


def test_the_command_keeps_its_cache_across_processes(home: CodexHome, tmp_path: Path):
    """The real command, forked workers and all: the second run reads nothing and answers
    the same."""
    for i in range(6):
        thread = f"019a{i:04x}-0000-7000-8000-000000000000"
        at = T0 + i * H
        home.rollout(thread, at, meta(thread, at), turn("gpt-5.2", at),
                     *(call(at + (k + 1) * M, k + 1, quota(5.0 + k)) for k in range(i + 2)))
    env = {**os.environ, "CODEX_HOME": str(home.root), "GOALKEEPER_HOME": str(tmp_path / "gk")}
    code = ("import sys; from core.cli import main; from core.providers.codex import usage_cache; "
            "answer = usage_cache.UsageRun.history; usage_cache.UsageRun.history = "
            "lambda run: (print(len(run.todo), file=sys.stderr), answer(run))[1]; "
            "sys.exit(main(['codex-usage', '--json', '--workers', '3']))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=60, env=env) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert json.loads(runs[0].stdout) == json.loads(runs[1].stdout)
    assert json.loads(runs[0].stdout)["total"]["calls"] == sum(i + 2 for i in range(6))
    assert [r.stderr.strip() for r in runs] == ["6", "0"]  # rollouts read by each run
