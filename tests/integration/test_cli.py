"""``goalkeeper desktop …`` and ``goalkeeper service …`` as a person runs them (subprocesses,
a private HOME, and a fake ``systemctl`` first on PATH that records what it was asked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.integration import resources

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def person(xdg_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    log = tmp_path / "systemctl.log"
    fake = bin_dir / "systemctl"
    fake.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n'
                    'case "$*" in *is-enabled*) echo disabled; exit 1;; '
                    '*is-active*) echo inactive; exit 3;; esac\nexit 0\n')
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GOALKEEPER_", "XDG_", "JOURNAL_"))}
    return {**env, **xdg_env, "PATH": f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}",
            "GOALKEEPER_HOME": str(tmp_path / "gk")}


def gk(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "core", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=60, check=False)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG desktops")
def test_desktop_install_autostart_and_uninstall(person: dict[str, str]) -> None:
    out = gk(person, "desktop", "install", "--autostart", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert Path(data["command"][0]).is_absolute() and data["problem"] is None
    assert {c["change"] for c in data["changes"]} == {"written"}
    config = Path(person["GOALKEEPER_HOME"]) / "config.toml"
    assert "start_at_login = true" in config.read_text()
    autostart = Path(person["XDG_CONFIG_HOME"]) / "autostart" / resources.DESKTOP_FILE
    assert autostart.exists()
    off = gk(person, "desktop", "install", "--no-autostart")
    assert off.returncode == 0 and not autostart.exists()
    assert "start_at_login" not in config.read_text()  # back to the default
    gone = gk(person, "desktop", "uninstall")
    assert gone.returncode == 0 and "removed" in gone.stdout
    assert not list(Path(person["XDG_DATA_HOME"]).rglob("io.github.goalkeeper.Goalkeeper*"))


def test_desktop_install_with_a_bad_config_changes_nothing(person: dict[str, str]) -> None:
    config = Path(person["GOALKEEPER_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("max_auto_attempts = 0\n")
    out = gk(person, "desktop", "install", "--autostart")
    assert out.returncode == 2 and "max_auto_attempts" in out.stderr
    assert config.read_text() == "max_auto_attempts = 0\n"
    assert not Path(person["XDG_DATA_HOME"]).exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="systemd")
def test_service_install_status_uninstall(person: dict[str, str], tmp_path: Path) -> None:
    out = gk(person, "service", "install")
    assert out.returncode == 0, out.stderr
    assert "systemctl --user enable --now goalkeeper" in out.stdout
    unit = Path(person["XDG_CONFIG_HOME"]) / "systemd" / "user" / "goalkeeper.service"
    text = unit.read_text()
    assert f'"GOALKEEPER_HOME={person["GOALKEEPER_HOME"]}"' in text
    status = json.loads(gk(person, "service", "status", "--json").stdout)
    assert (status["installed"], status["ours"], status["current"]) == (True, True, True)
    assert (status["enabled"], status["active"], status["host"]) == ("disabled", "inactive", None)
    assert gk(person, "service", "uninstall").returncode == 0 and not unit.exists()
    calls = (tmp_path / "systemctl.log").read_text().splitlines()
    assert calls == ["--user daemon-reload", "--user is-enabled goalkeeper.service",
                     "--user is-active goalkeeper.service",
                     "--user disable --now goalkeeper.service", "--user daemon-reload"]


def test_help_lists_the_new_commands() -> None:
    out = subprocess.run([sys.executable, "-m", "core", "--help"], capture_output=True,
                         text=True, cwd=ROOT, check=True)
    assert "desktop" in out.stdout and "service" in out.stdout and "--version" in out.stdout
