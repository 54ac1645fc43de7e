"""The `goalkeeper` command: JSON shapes, exit codes, and actions through a running daemon."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import ROOT, run, seed


def test_status_json_shape(tmp_path: Path) -> None:
    seed(tmp_path)
    out = run(tmp_path, "status", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    goal = data["goals"][0]
    assert {"id", "title", "provider", "state", "pause_reason", "auto_resume", "next_resume_at",
            "auto_resume_note", "attempts"} <= set(goal)
    assert goal["id"] == "fake:g" and goal["next_resume_at"] == "2026-07-07T12:00:00Z"
    quota = data["quotas"][0]
    assert {"id", "provider", "label", "used_percent", "resets_at", "exactness",
            "observed_at"} <= set(quota)
    assert quota["id"] == "fake:5h" and quota["resets_at"] == "2030-01-01T00:00:00Z"
    assert quota["exactness"] == "stale"  # observed long before now
    human = run(tmp_path, "status")
    assert "fake:g" in human.stdout and "Migrate the tests" in human.stdout


def test_history_json_and_unknown_goal(tmp_path: Path) -> None:
    seed(tmp_path)
    out = run(tmp_path, "history", "fake:g", "--json", "--limit", "5")
    rows = json.loads(out.stdout)
    assert rows[0]["event"] == "paused" and rows[0]["at"] == "2026-07-07T12:00:00Z"
    assert {"at", "goal", "event", "trigger", "outcome", "reason"} <= set(rows[0])
    assert run(tmp_path, "history", "nope").returncode == 3


def test_actions_check_the_goal_first_then_need_a_host(tmp_path: Path) -> None:
    seed(tmp_path)
    unknown = run(tmp_path, "resume", "nope")
    assert unknown.returncode == 3 and "unknown goal" in unknown.stderr
    no_host = run(tmp_path, "resume", "fake:g")
    assert no_host.returncode == 5
    assert "no Goalkeeper host is running" in no_host.stderr and "daemon" in no_host.stderr


def test_usage_and_configuration_errors_exit_2(tmp_path: Path) -> None:
    assert run(tmp_path, "auto-resume", "x", "maybe").returncode == 2
    (tmp_path / "config.toml").parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.toml").write_text("max_auto_attempts = 0\n")
    bad = run(tmp_path, "status")
    assert bad.returncode == 2
    assert "max_auto_attempts = 0" in bad.stderr and "config.toml" in bad.stderr


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOALKEEPER_")}
    env |= {"GOALKEEPER_HOME": str(home), "GOALKEEPER_DEMO_ENABLED": "true"}
    proc = subprocess.Popen([sys.executable, "-m", "core", "daemon"], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while not (home / "host.json").exists() or run(home, "status").returncode != 0 or not (
            json.loads(run(home, "status", "--json").stdout)["goals"]):
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        assert time.monotonic() < deadline, "daemon did not come up"
        time.sleep(0.1)
    yield home, proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    if proc.stdout:
        proc.stdout.close()


def action(home: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = run(home, *args, "--json")
    return out.returncode, json.loads(out.stdout) if out.stdout else {}


def test_actions_through_a_running_daemon(daemon: tuple[Path, subprocess.Popen[str]]) -> None:
    home, _ = daemon
    assert action(home, "start", "demo:tests")[0] == 0
    code, result = action(home, "pause", "demo:tests")
    assert (code, result["outcome"], result["state"]) == (0, "paused", "paused")
    assert action(home, "pause", "demo:tests")[1]["outcome"] == "already_paused"
    code, result = action(home, "resume", "demo:tests")
    assert (code, result["outcome"]) == (0, "resumed")
    assert action(home, "resume", "demo:tests")[1]["outcome"] == "already_running"
    assert action(home, "cancel", "demo:tests")[1]["outcome"] == "cancelled"
    code, result = action(home, "resume", "demo:tests")
    assert (code, result["outcome"], result["reason"]) == (4, "refused", "not paused: cancelled")
    code, result = action(home, "auto-resume", "demo:docs", "on")
    assert (code, result["outcome"]) == (0, "updated")
    history = json.loads(run(home, "history", "demo:tests", "--json").stdout)
    origins = {r["origin"] for r in history if r["event"] == "resume_requested"}
    assert origins == {"cli"}


def test_a_second_host_names_the_first_and_sigterm_stops_cleanly(
        daemon: tuple[Path, subprocess.Popen[str]]) -> None:
    home, proc = daemon
    second = run(home, "daemon", timeout=30)
    assert second.returncode == 1
    assert f"pid {proc.pid}" in second.stderr and "already the host" in second.stderr
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert not (home / "host.json").exists()
    assert run(home, "resume", "demo:docs").returncode == 5


@pytest.mark.parametrize("how", ["--headless", "no display"])
def test_headless_demo_shows_a_quota_pause_and_an_automatic_resume(tmp_path: Path,
                                                                   how: str) -> None:
    flags = ["--headless"] if how == "--headless" else []
    out = run(tmp_path / "demo", "demo", *flags, "--period", "4", "--step", "0.1",
              "--timeout", "60",
              env={"GOALKEEPER_RESUME_MARGIN_SECONDS": "0.3", "GOALKEEPER_STABLE_SECONDS": "0.2",
                   "GOALKEEPER_RESUME_JITTER_SECONDS": "0"}, timeout=90,
              unset=("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    if how == "no display":
        assert "No display to open a window on: running the demo headless." in text
    assert "paused — quota" in text and "auto-resume scheduled" in text
    assert "resumed (auto, scheduler)" in text
    assert "demo:refactor  done" in text and "demo:tests     done" in text
    assert "demo:docs      not scheduled — auto-resume is off" in text
    status = json.loads(run(tmp_path / "demo", "status", "--json").stdout)
    docs = next(g for g in status["goals"] if g["id"] == "demo:docs")
    assert (docs["state"], docs["pause_reason"]) == ("paused", "quota")
    # the closing hints work as printed: the host is gone, so resuming needs a demo running
    assert "demo --headless`) and, while it runs," in text and "resume demo:docs" in text
    assert "history` shows what happened" in text
    # nothing runs any more: no window runs out, and no forecast names a time already past —
    # once the pace has decayed (it holds a tenth of this 4 s window after the last rise, then
    # falls to zero over as long again: asked at once, the last reading may be 0.1 s old)
    time.sleep(1.0)
    status = json.loads(run(tmp_path / "demo", "status", "--json").stdout)
    assert [q["forecast"]["runs_out_at"] for q in status["quotas"]] == [None] * len(
        status["quotas"])


def test_the_demo_hints_name_the_program_as_it_was_started() -> None:
    from core.cli.hosts import program

    assert program("/home/a b/.venv/bin/goalkeeper") == "'/home/a b/.venv/bin/goalkeeper'"
    assert program(".venv/bin/goalkeeper") == ".venv/bin/goalkeeper"
    assert program("goalkeeper") == "goalkeeper"
    assert program("/x/core/__main__.py") == "goalkeeper"


def _serve_once(path: Path, reply: bytes | None) -> None:
    import socket
    import threading

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        if reply is None:
            time.sleep(1.0)  # never answers within the client's timeout
        else:
            conn.sendall(reply)
        conn.close()
        server.close()

    threading.Thread(target=answer, daemon=True).start()


@pytest.mark.parametrize(("reply", "message"), [
    (b'{"goal": "fake:g", "outc', "cut off or unreadable"),
    (None, "host not responding: the host did not answer within 0.2 s"),
])
def test_a_broken_or_silent_host_gets_a_clear_message(tmp_path: Path, reply: bytes | None,
                                                      message: str) -> None:
    import argparse

    from core.cli.common import CliError, Context
    from core.paths import resolve_paths

    paths = resolve_paths({"GOALKEEPER_HOME": str(tmp_path / "h")})
    paths.ensure()
    _serve_once(paths.socket_path, reply)
    ctx = Context(argparse.Namespace(), paths, request_timeout=0.2)
    with pytest.raises(CliError, match=message) as err:
        ctx.ask_host({"op": "resume", "goal": "fake:g"})
    assert err.value.code == (1 if reply else 6)


def test_the_daemon_loads_only_what_its_start_needs() -> None:
    """Timed to its first gauges (bench/startup_gauges.py): no other command's module, no demo,
    no PostgreSQL driver for a one-machine store."""
    code = ("import sys; from core.cli import build_parser; build_parser(['daemon']); "
            "import core.host, core.providers.registry; "
            "print(sorted(m for m in sys.modules if m.startswith('core.cli.') "
            "or m in ('core.demo', 'psycopg')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "['core.cli.common', 'core.cli.hosts']"
