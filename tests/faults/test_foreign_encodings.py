"""config.toml and goal files as editors save them (issue 19), through real processes: every CLI
command, ``goalkeeper daemon``, the app started without a display, and ``goalkeeper add FILE``.

UTF-8 with a byte-order mark is read as if it had none; GBK, UTF-16, random bytes, 100,000-deep
nesting, a value over the limit and a 50 MB value each end in exit 2 (the systemd unit's
``RestartPreventExitStatus``: no restart loop) with one message naming the file (and line), never
a traceback, never the 50 MB echoed; nothing stored is touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.cli.common import EXIT_USAGE
from core.paths import Paths
from core.providers.pipeline.catalog import PipelineCatalog
from tests.support.daemon import ROOT, running_daemon
from tests.support.foreign_files import CASES, COMMENT, IDS, Case, expected, fingerprint

CONFIG = COMMENT + "resume_margin_seconds = 30\n"
CONFIG_KEY = "codex_continuation_text"
GOAL = COMMENT + 'name = "digest"\n[[stage]]\nname = "a"\ncommand = ["true"]\n'
GOAL_KEY, GOAL_KEY_SHOWN = "cwd", "stage[1].cwd"  # the key lands in the last [[stage]]
REFUSED = [case for case in CASES if case.expected is not None]


def goalkeeper(*args: str, env: dict[str, str] | None = None, timeout: float = 120
               ) -> subprocess.CompletedProcess[str]:
    """``python -m core ARGS``; on a time-out its whole process group is killed (a daemon that
    accepted a file it should have refused must not outlive the test)."""
    full = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            **(env or {})}
    with subprocess.Popen([sys.executable, "-m", "core", *args], cwd=ROOT, env=full,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def assert_refused(run: subprocess.CompletedProcess[str], message: str) -> None:
    assert run.returncode == EXIT_USAGE, run.stderr[-3000:]
    assert message in run.stderr, run.stderr[:3000]
    assert "Traceback" not in run.stderr + run.stdout
    assert len(run.stderr) < 2000  # a 50 MB (or 138 KB) value is never echoed whole


@pytest.fixture
def config(paths: Paths) -> Path:
    return paths.config_file


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_command_says_what_is_wrong_with_config_toml(config: Path, case: Case) -> None:
    case.write(config, CONFIG, CONFIG_KEY)
    before = fingerprint(config.parent)
    run = goalkeeper("status")
    if case.expected is None:
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr
    else:
        assert_refused(run, expected(case, config, CONFIG, CONFIG_KEY))
    after = fingerprint(config.parent)
    # settings it validated are kept for the next read-only command (core.settings.snapshot);
    # settings it refused never are
    snapshot = after.pop("settings-snapshot.json", None)
    assert (snapshot is None) == (case.expected is not None)
    assert after == before


@pytest.mark.parametrize("case", [CASES[0], CASES[4]], ids=[CASES[0].name, CASES[4].name])
@pytest.mark.parametrize("command", [["history"], ["hosts"], ["quota", "list"], ["resume", "x"],
                                     ["codex-usage"], ["notify", "test"], ["track", "x"]],
                         ids=lambda command: command[0])
def test_so_does_every_other_command_that_reads_settings(config: Path, case: Case,
                                                         command: list[str]) -> None:
    """Every command reads the language setting first (where deep nesting used to end in a
    RecursionError), and these the settings: each ends with the same message. (A command that
    needs no setting, such as ``runs``, still works: the file is not its business.)"""
    case.write(config, CONFIG, CONFIG_KEY)
    assert_refused(goalkeeper(*command), expected(case, config, CONFIG, CONFIG_KEY))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_daemon_exits_2_or_starts(config: Path, paths: Paths, case: Case,
                                      tmp_path: Path) -> None:
    case.write(config, CONFIG, CONFIG_KEY)
    if case.expected is None:
        with running_daemon(tmp_path) as proc:  # up: its lease and socket exist
            assert proc.poll() is None
        assert proc.returncode == 0
        return
    before = fingerprint(paths.config_dir)
    # (a daemon that accepted the file would run until killed: 60 s ends the test, not the run)
    assert_refused(goalkeeper("daemon", timeout=60), expected(case, config, CONFIG, CONFIG_KEY))
    assert fingerprint(paths.config_dir) == before
    assert not paths.database.exists()  # refused before anything was opened


@pytest.mark.parametrize("case", REFUSED, ids=[case.name for case in REFUSED])
def test_the_app_without_a_display_says_it_on_stderr(config: Path, case: Case) -> None:
    """No window can show the dialog: the app says the config's problem first, exit 2 (a file
    with a BOM is read: tests/gui/test_app.py)."""
    case.write(config, CONFIG, CONFIG_KEY)
    bare = {k: v for k, v in os.environ.items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    run = subprocess.run([sys.executable, "-m", "core"], cwd=ROOT, env=bare,
                         capture_output=True, text=True, timeout=120)
    assert_refused(run, expected(case, config, CONFIG, CONFIG_KEY))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_add_says_what_is_wrong_with_the_goal_file(paths: Paths, case: Case,
                                                   tmp_path: Path) -> None:
    catalog = PipelineCatalog(paths.data_dir / "pipelines")
    kept = tmp_path / "kept.toml"
    kept.write_text(GOAL.replace("digest", "kept"), encoding="utf-8")
    catalog.add(kept, datetime(2026, 12, 1, tzinfo=UTC))  # a goal already stored
    goal = case.write(tmp_path / "digest.toml", GOAL, GOAL_KEY)
    before = fingerprint(paths.data_dir)
    run = goalkeeper("add", str(goal), "--yes")
    if case.expected is None:
        assert run.returncode == 0, run.stderr
        entry = catalog.get("digest")
        assert entry is not None and entry.error is None and entry.goal is not None
        assert (entry.directory / "goal.toml").read_text(encoding="utf-8") == GOAL
        return
    assert_refused(run, expected(case, goal, GOAL, GOAL_KEY_SHOWN))
    assert fingerprint(paths.data_dir) == before
