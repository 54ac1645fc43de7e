"""``service install`` / ``uninstall`` / ``status``: the systemd user unit and the launchd agent."""

from __future__ import annotations

import os
import plistlib
import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from core.integration import launchd, systemd, unit
from core.integration.files import Change
from core.integration.service import ServiceUnsupported, service_manager
from tests.support.integration import Tool


class FakeManager:
    """Records the commands a service manager was given; answers from a table."""

    def __init__(self, answers: dict[str, tuple[int, str]] | None = None) -> None:
        self.calls: list[list[str]] = []
        self.answers = answers or {}

    def __call__(self, argv: Sequence[str]) -> tuple[int, str]:
        self.calls.append(list(argv))
        for key, answer in self.answers.items():
            if key in " ".join(argv):
                return answer
        return 0, ""


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def env(xdg_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**xdg_env, "PATH": "/opt/agents/bin:/usr/bin:/bin",
            "GOALKEEPER_HOME": str(tmp_path / "gk data"), "CODEX_HOME": "/srv/codex",
            "ANTHROPIC_API_KEY": "sk-never-copied", "GOALKEEPER_RESUME_MARGIN_SECONDS": "5"}


# -- systemd -------------------------------------------------------------------------------------

def test_the_unit_restarts_on_failure_stops_cleanly_and_logs_to_the_journal(
        env: dict[str, str]) -> None:
    manager = service_manager(env, ["/opt/gk dir/goalkeeper"], FakeManager(), "linux")
    report = manager.install()
    assert report.file.change is Change.WRITTEN and report.problem is None
    path = Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user" / "goalkeeper.service"
    assert report.file.path == path
    lines = path.read_text().splitlines()
    assert lines[0] == systemd.MARK
    for expected in ('ExecStart="/opt/gk dir/goalkeeper" "daemon"', "Restart=on-failure",
                     "RestartPreventExitStatus=2", "KillSignal=SIGTERM", "KillMode=mixed",
                     "StandardOutput=journal", "StandardError=journal",
                     "SyslogIdentifier=goalkeeper", "WantedBy=default.target",
                     f'Environment="GOALKEEPER_HOME={env["GOALKEEPER_HOME"]}"',
                     'Environment="PATH=/opt/agents/bin:/usr/bin:/bin"',
                     'Environment="CODEX_HOME=/srv/codex"'):
        assert expected in lines
    text = "\n".join(lines)
    assert "sk-never-copied" not in text and "RESUME_MARGIN" not in text
    assert "systemctl --user enable --now goalkeeper" in report.next_steps


def test_install_reloads_systemd_and_says_when_it_could_not(env: dict[str, str]) -> None:
    fake = FakeManager({"daemon-reload": (1, "Failed to connect to bus: No medium found")})
    report = service_manager(env, ["/usr/bin/goalkeeper"], fake, "linux").install()
    assert fake.calls == [["systemctl", "--user", "daemon-reload"]]
    assert report.problem is None and "No medium found" in report.notes[0]
    again = service_manager(env, ["/usr/bin/goalkeeper"], fake, "linux").install()
    assert again.file.change is Change.UNCHANGED and len(fake.calls) == 1


def test_a_unit_goalkeeper_did_not_write_is_never_touched(env: dict[str, str]) -> None:
    path = Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user" / "goalkeeper.service"
    path.parent.mkdir(parents=True)
    path.write_text("[Service]\nExecStart=/usr/local/bin/my-goalkeeper\n")
    fake = FakeManager()
    manager = service_manager(env, ["/usr/bin/goalkeeper"], fake, "linux")
    report = manager.install()
    assert report.problem is not None and report.file.change is Change.KEPT
    assert manager.uninstall().file.change is Change.KEPT
    assert path.read_text().startswith("[Service]") and fake.calls == []


def test_uninstall_disables_removes_and_reloads(env: dict[str, str]) -> None:
    fake = FakeManager()
    manager = service_manager(env, ["/usr/bin/goalkeeper"], fake, "linux")
    manager.install()
    report = manager.uninstall()
    assert report.file.change is Change.REMOVED and not report.file.path.exists()
    assert fake.calls[1:] == [["systemctl", "--user", "disable", "--now", "goalkeeper.service"],
                              ["systemctl", "--user", "daemon-reload"]]
    assert manager.uninstall().file.change is Change.ABSENT


def test_status_reports_file_and_manager_state(env: dict[str, str]) -> None:
    fake = FakeManager({"is-enabled": (0, "enabled"), "is-active": (0, "active")})
    manager = service_manager(env, ["/usr/bin/goalkeeper"], fake, "linux")
    before = manager.status()
    assert (before.installed, before.ours, before.current) == (False, False, False)
    manager.install()
    status = manager.status()
    assert (status.installed, status.ours, status.current) == (True, True, True)
    assert (status.enabled, status.active, status.notes) == ("enabled", "active", ())
    moved = service_manager(env, ["/elsewhere/goalkeeper"], fake, "linux").status()
    assert moved.ours and not moved.current


def test_status_without_a_user_manager_says_so(env: dict[str, str]) -> None:
    fake = FakeManager({"is-": (1, "Failed to connect to bus: No medium found")})
    status = service_manager(env, ["/usr/bin/goalkeeper"], fake, "linux").status()
    assert status.enabled is None and status.active is None
    assert "No medium found" in status.notes[0]


def test_systemd_analyze_verify_accepts_the_unit(env: dict[str, str], tmp_path: Path,
                                                 systemd_analyze: Tool) -> None:
    """A real ExecStart (verify checks that it is executable), quoting with spaces and %."""
    script = _executable(tmp_path / "my apps" / "100%" / "goalkeeper")
    manager = service_manager(env, [str(script)], FakeManager(), "linux")
    path = manager.install().file.path
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    out = systemd_analyze("--user", "verify", path,
                          env={"XDG_RUNTIME_DIR": str(runtime), **env})
    assert (out.returncode, out.stdout + out.stderr) == (0, "")


def test_systemd_analyze_verify_is_not_a_rubber_stamp(env: dict[str, str], tmp_path: Path,
                                                      systemd_analyze: Tool) -> None:
    """It exits 0 on a bad value but warns: the test above insists on no output at all."""
    script = _executable(tmp_path / "goalkeeper")
    path = service_manager(env, [str(script)], FakeManager(), "linux").install().file.path
    path.write_text(path.read_text().replace("Restart=on-failure", "Restart=sometimes"))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    out = systemd_analyze("--user", "verify", path, env={"XDG_RUNTIME_DIR": str(runtime), **env})
    assert "restart specifier, ignoring: sometimes" in out.stdout + out.stderr
    script.unlink()
    out = systemd_analyze("--user", "verify", path, env={"XDG_RUNTIME_DIR": str(runtime), **env})
    assert out.returncode != 0


# -- launchd -------------------------------------------------------------------------------------

def test_the_launch_agent_restarts_on_failure_and_runs_at_login(env: dict[str, str],
                                                                tmp_path: Path) -> None:
    manager = service_manager(env, ["/Applications/Goalkeeper/goalkeeper"], FakeManager(),
                              "darwin", uid=501, log_dir=tmp_path / "Logs")
    report = manager.install()
    path = Path(env["HOME"]) / "Library" / "LaunchAgents" / f"{launchd.LABEL}.plist"
    assert report.file.path == path and report.file.change is Change.WRITTEN
    agent = plistlib.loads(path.read_bytes())
    assert agent["Label"] == launchd.LABEL
    assert agent["ProgramArguments"] == ["/Applications/Goalkeeper/goalkeeper", "daemon"]
    assert agent["RunAtLoad"] is True and agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["ExitTimeOut"] == unit.STOP_TIMEOUT_SECONDS
    assert agent["EnvironmentVariables"] == {
        "PATH": env["PATH"], "GOALKEEPER_HOME": env["GOALKEEPER_HOME"],
        "CODEX_HOME": "/srv/codex", "PYTHONUNBUFFERED": "1",
        "XDG_DATA_HOME": env["XDG_DATA_HOME"], "XDG_CONFIG_HOME": env["XDG_CONFIG_HOME"]}
    assert agent["StandardErrorPath"] == str(tmp_path / "Logs" / "daemon.stderr.log")
    assert any("launchctl bootstrap gui/501 " in step for step in report.next_steps)


def test_launch_agent_status_and_uninstall(env: dict[str, str]) -> None:
    fake = FakeManager({"print": (0, "gui/501/x = {\n\tstate = running\n\tpid = 4242\n}")})
    manager = service_manager(env, ["/usr/local/bin/goalkeeper"], fake, "darwin", uid=501)
    assert manager.status().active == "running"
    manager.install()
    status = manager.status()
    assert (status.installed, status.ours, status.current, status.enabled) == (
        True, True, True, "at login")
    report = manager.uninstall()
    assert report.file.change is Change.REMOVED
    assert ["launchctl", "bootout", f"gui/501/{launchd.LABEL}"] in fake.calls
    fake.answers = {"print": (113, "Could not find service")}
    assert manager.status().active == "not loaded"


def test_a_plist_with_another_label_is_not_ours(env: dict[str, str]) -> None:
    path = launchd.agent_path(env)
    path.parent.mkdir(parents=True)
    path.write_bytes(plistlib.dumps({"Label": "com.example.other"}))
    manager = service_manager(env, ["/usr/local/bin/goalkeeper"], FakeManager(), "darwin", 501)
    assert manager.install().problem is not None
    assert plistlib.loads(path.read_bytes())["Label"] == "com.example.other"


def test_no_service_manager_elsewhere(env: dict[str, str]) -> None:
    with pytest.raises(ServiceUnsupported):
        service_manager(env, ["goalkeeper"], FakeManager(), "win32")


def test_the_real_runner_reports_a_missing_program() -> None:
    from core.integration.unit import run_command

    code, out = run_command([os.path.join("/nonexistent", "systemctl"), "--user"])
    assert code == 127 and "not found" in out


def test_directories_are_carried_as_absolute_paths(env: dict[str, str],
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    from core.integration.unit import carried_environment

    monkeypatch.chdir(tmp_path)
    carried = carried_environment({**env, "GOALKEEPER_HOME": "gk", "CODEX_HOME": "~/codex"})
    assert carried["GOALKEEPER_HOME"] == str(tmp_path / "gk")
    assert carried["CODEX_HOME"] == os.path.expanduser("~/codex")


def test_the_xdg_base_directories_are_carried_when_set_and_absolute(env: dict[str, str]) -> None:
    from core.integration.unit import carried_environment

    carried = carried_environment({**env, "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c",
                                   "XDG_STATE_HOME": "relative/s"})
    assert carried["XDG_DATA_HOME"] == "/d" and carried["XDG_CONFIG_HOME"] == "/c"
    assert "XDG_STATE_HOME" not in carried  # the spec: a relative path is ignored
    bare = carried_environment({k: v for k, v in env.items() if not k.startswith("XDG_")})
    assert not any(name.startswith("XDG_") for name in bare)


def test_the_systemd_unit_names_the_xdg_directories(env: dict[str, str]) -> None:
    from core.integration.systemd import unit_text
    from core.integration.unit import carried_environment

    text = unit_text(["/bin/goalkeeper", "daemon"],
                     carried_environment({**env, "XDG_STATE_HOME": "/st"}))
    assert "XDG_STATE_HOME=/st" in text
