"""A headless host notifies: `goalkeeper daemon` posts to the webhook and `status` shows it."""

from __future__ import annotations

import json
import socket as socketlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cli import main
from tests.pipeline.support import step, write_goal
from tests.real.mockhttp import MockServer, Reply
from tests.support.daemon import running_daemon
from tests.support.notify import Script


@pytest.fixture
def daemon(tmp_path: Path, server: MockServer) -> Iterator[subprocess.Popen[bytes]]:
    with running_daemon(tmp_path, {"GOALKEEPER_NOTIFY_WEBHOOK_URL": f"{server.url}/hook",
                         "GOALKEEPER_NOTIFY_TIMEOUT_SECONDS": "2",
                         "GOALKEEPER_AUTO_RESUME_DEFAULT": "true",
                         "GOALKEEPER_CODEX_ENABLED": "false",
                         "GOALKEEPER_CLAUDE_ENABLED": "false"}) as proc:
        yield proc


def wait_for(predicate: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.05)


@pytest.mark.slow
def test_the_daemon_notifies_and_status_shows_its_channel(
        daemon: subprocess.Popen[bytes], server: MockServer, script: Script, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # a step told to wait 10 minutes: the goal pauses for quota, a resume is scheduled
    limited = {"report": {"status": "rate_limited", "retry_after": 600}}
    path = write_goal(tmp_path / "g", {"name": "digest"}, [], [step("deliver", limited)])
    assert main(["add", str(path), "--yes"]) == 0
    main(["run", "digest"])
    wait_for(lambda: any(r.path == "/hook" for r in server.requests))
    payload = next(r.json() for r in server.requests if r.path == "/hook")
    assert payload["kind"] == "scheduled"
    assert payload["goal"] == "pipeline:digest" and payload["provider"] == "pipeline"
    assert payload["host"] == socketlib.gethostname()
    assert payload["next_resume_at"] is not None and payload["next_resume_at"].endswith("Z")

    def channel_state() -> str:
        capsys.readouterr()
        assert main(["status", "--json"]) == 0
        [channel] = json.loads(capsys.readouterr().out)["notifications"]
        assert channel["channel"] == "webhook" and channel["target"] == f"{server.url}/…"
        return str(channel["state"])

    wait_for(lambda: channel_state() == "ok")
    # the receiver starts refusing; a manual resume runs the step again, which is limited
    # again: another "scheduled" notification, refused
    script.replies = [Reply.json({}, 400)]
    main(["resume", "pipeline:digest"])
    wait_for(lambda: channel_state() == "failing")
    capsys.readouterr()
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "webhook" in out and "FAILING since" in out and "HTTP 400 Bad Request" in out
