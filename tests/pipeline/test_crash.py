"""kill -9 of the host in the middle of every stage, then resume: finished work happens once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.cli import main
from core.paths import resolve_paths
from tests.pipeline.support import step, write_goal

ROOT = Path(__file__).resolve().parents[2]
STEPS = ["github", "rss", "aggregate", "filter", "deliver"]


def start_daemon(home: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GOALKEEPER_HOME": home,
           "GOALKEEPER_PIPELINE_STOP_GRACE_SECONDS": "1",
           "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    handle = open(log, "ab")  # noqa: SIM115 - the child keeps it
    try:
        proc = subprocess.Popen([sys.executable, "-m", "core", "daemon"], cwd=ROOT, env=env,
                                stdout=handle, stderr=subprocess.STDOUT)
    finally:
        handle.close()
    paths = resolve_paths({"GOALKEEPER_HOME": home})
    deadline = time.monotonic() + 20
    while not (paths.host_file.exists() and paths.socket_path.exists()):
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "the daemon did not start"
        time.sleep(0.05)
    return proc


def wait_for(predicate: object, what: str, log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what} did not happen:\n{log.read_text()}"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rfind(")") + 2] != "Z"


@pytest.mark.slow
def test_kill_9_in_every_stage_then_resume_runs_finished_work_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    effects = tmp_path / "effects.log"

    def hang_then_finish(name: str) -> dict[str, object]:
        return step(name, {"sleep": "forever", "marker": f"{name}.started"},
                    {"effect": str(effects), "items": 7})

    goal = write_goal(tmp_path / "goals", {"name": "digest"},
                      [hang_then_finish("github"), hang_then_finish("rss")],
                      [hang_then_finish(n) for n in ("aggregate", "filter", "deliver")])
    home = os.environ["GOALKEEPER_HOME"]
    log = tmp_path / "daemon.log"
    assert main(["add", str(goal), "--yes"]) == 0
    proc = start_daemon(home, log)
    try:
        assert main(["run", "digest"]) == 0
        runs = Path(home) / "pipelines" / "digest" / "runs"
        wait_for(lambda: any(runs.glob("*/github.started")), "the first run", log)
        [run_dir] = list(runs.iterdir())
        killed: list[int] = []
        for phase in (["github", "rss"], ["aggregate"], ["filter"], ["deliver"]):
            wait_for(lambda p=phase: all((run_dir / f"{n}.started").exists() for n in p),
                     f"{phase} starting", log)
            killed += [int((run_dir / f"{n}.started").read_text()) for n in phase]
            proc.send_signal(signal.SIGKILL)  # the host dies mid-stage; its steps live on
            proc.wait()
            assert all(alive(pid) for pid in killed[-len(phase):])
            proc = start_daemon(home, log)  # startup recovery continues the run
        wait_for(lambda: effects.exists() and len(effects.read_text().split()) == 5,
                 "the run completing", log)
        capsys.readouterr()
        wait_for(lambda: main(["runs", "digest", "--json"]) == 0 and json.loads(
            capsys.readouterr().out)[0]["state"] == "completed", "completion recorded", log)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
    assert sorted(effects.read_text().split()) == sorted(STEPS)  # each exactly once
    assert list(runs.iterdir()) == [run_dir]  # one run, continued — never a second one
    assert [p for p in killed if alive(p)] == [], log.read_text()[-3000:]  # stopped on resume
    capsys.readouterr()
    assert main(["history", "pipeline:digest", "--json", "--limit", "500"]) == 0
    events = [row["event"] for row in json.loads(capsys.readouterr().out)]
    assert events.count("step_interrupted") == 5
