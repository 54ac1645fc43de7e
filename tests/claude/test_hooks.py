"""Installing and removing the two hook entries: the user's settings file round-trips unchanged."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.providers.claude import hooks
from core.providers.claude.config import read_json_object

PROGRAM = "/opt/gk/bin/goalkeeper"
NOW = datetime(2026, 7, 7, 12, tzinfo=UTC)


def listing(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_install_chains_and_uninstall_round_trips_byte_for_byte(claude_dir: Path,
                                                                tmp_path: Path) -> None:
    data_dir = tmp_path / "gk-data"
    settings = claude_dir / "settings.json"
    original = settings.read_bytes()
    before = listing(claude_dir)
    change = hooks.install(claude_dir, data_dir, PROGRAM, NOW)
    assert change.changes == [
        "statusLine: chained through Goalkeeper", "hooks.StopFailure: added Goalkeeper's hook",
        "hooks.Notification: added Goalkeeper's hook (matcher quota_auto_resume_.*)"]
    installed = json.loads(settings.read_bytes())
    assert installed["statusLine"] == {
        "type": "command", "padding": 0,
        "command": f"{PROGRAM} hook claude-statusline --chain "
                   f"{shlex.quote('bash ~/.claude/statusline.sh')}"}
    assert installed["hooks"]["StopFailure"] == [
        {"hooks": [{"type": "command", "command": "notify-send 'Claude stopped'"}]},
        {"hooks": [{"type": "command", "command": f"{PROGRAM} hook claude-stop-failure"}]}]
    # Claude's own auto-continue decisions (notification_type quota_auto_resume_*) only
    assert installed["hooks"]["Notification"] == [
        {"matcher": "quota_auto_resume_.*",
         "hooks": [{"type": "command", "command": f"{PROGRAM} hook claude-stop-failure"}]}]
    original_data = json.loads(original)
    for key in ("permissions", "model"):
        assert installed[key] == original_data[key]
    assert installed["hooks"]["Stop"] == original_data["hooks"]["Stop"]
    # only settings.json changed in the config dir; the backup lives in Goalkeeper's data dir
    after = listing(claude_dir)
    assert set(after) == set(before)
    assert {k for k in after if after[k] != before[k]} == {"settings.json"}
    assert change.backup is not None and change.backup.read_bytes() == original
    assert change.backup.is_relative_to(data_dir)
    assert "dangerously" not in settings.read_text()
    removed = hooks.uninstall(claude_dir, data_dir)
    assert removed.changes
    assert settings.read_bytes() == original
    assert listing(claude_dir) == before


def test_installing_twice_changes_nothing_more(claude_dir: Path, tmp_path: Path) -> None:
    settings = claude_dir / "settings.json"
    original = settings.read_bytes()
    hooks.install(claude_dir, tmp_path, PROGRAM, NOW)
    once = settings.read_bytes()
    assert hooks.install(claude_dir, tmp_path, PROGRAM, NOW).changes == []
    assert settings.read_bytes() == once
    hooks.uninstall(claude_dir, tmp_path)
    assert settings.read_bytes() == original
    assert hooks.uninstall(claude_dir, tmp_path).changes == []
    assert settings.read_bytes() == original


def test_without_a_settings_file_uninstall_removes_the_one_install_made(tmp_path: Path) -> None:
    config = tmp_path / "claude"
    config.mkdir()
    change = hooks.install(config, tmp_path / "data", PROGRAM, NOW)
    assert "statusLine: added (you had none)" in change.changes and change.backup is None
    data = json.loads((config / "settings.json").read_text())
    assert data["statusLine"]["command"] == f"{PROGRAM} hook claude-statusline"
    hooks.uninstall(config, tmp_path / "data")
    assert list(config.iterdir()) == []


def test_a_compact_file_without_a_statusline_round_trips(tmp_path: Path) -> None:
    config = tmp_path / "claude"
    config.mkdir()
    original = b'{"model":"opus","hooks":{"Stop":[]}}'
    (config / "settings.json").write_bytes(original)
    hooks.install(config, tmp_path / "data", PROGRAM, NOW)
    assert b"\n" not in (config / "settings.json").read_bytes().rstrip()
    hooks.uninstall(config, tmp_path / "data")
    assert (config / "settings.json").read_bytes() == original


def test_edits_made_meanwhile_survive_uninstall(claude_dir: Path, tmp_path: Path) -> None:
    settings = claude_dir / "settings.json"
    original = json.loads(settings.read_bytes())
    hooks.install(claude_dir, tmp_path, PROGRAM, NOW)
    edited = json.loads(settings.read_bytes())
    edited["model"] = "claude-opus-4-5"
    settings.write_text(json.dumps(edited, indent=2) + "\n")
    hooks.uninstall(claude_dir, tmp_path)
    after = json.loads(settings.read_bytes())
    assert after == {**original, "model": "claude-opus-4-5"}


def test_uninstall_works_even_if_goalkeepers_record_is_lost(claude_dir: Path,
                                                            tmp_path: Path) -> None:
    settings = claude_dir / "settings.json"
    original = json.loads(settings.read_bytes())
    hooks.install(claude_dir, tmp_path, PROGRAM, NOW)
    (tmp_path / "claude" / "hooks.json").unlink()
    hooks.uninstall(claude_dir, tmp_path)
    assert json.loads(settings.read_bytes()) == original


@pytest.mark.parametrize("text", ['{"model": "opus",', '{"a": ' + "[" * 100_000 + "]" * 100_000
                                  + "}"], ids=["truncated", "100000-deep"])
def test_a_broken_settings_file_is_left_alone(tmp_path: Path, text: str) -> None:
    config = tmp_path / "claude"
    config.mkdir()
    (config / "settings.json").write_text(text)
    with pytest.raises(hooks.HookError, match="not valid JSON"):
        hooks.install(config, tmp_path / "data", PROGRAM, NOW)
    assert (config / "settings.json").read_text() == text
    assert not (tmp_path / "data").exists()


def test_a_settings_file_too_deep_to_read_is_none(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert read_json_object(path) is None


def test_the_program_command_keeps_goalkeeper_home(tmp_path: Path) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "goalkeeper").write_text("#!/bin/sh\n")
    python = str(bin_dir / "python")
    assert hooks.program_command({}, "x", python) == str(bin_dir / "goalkeeper")
    assert hooks.program_command({"GOALKEEPER_HOME": "/srv/g k"}, "x", python) == (
        f"GOALKEEPER_HOME='/srv/g k' {bin_dir / 'goalkeeper'}")
    assert hooks.program_command({}, "x", "/usr/bin/python3") == "/usr/bin/python3 -m core"


def test_reinstalling_after_the_entries_were_removed_by_hand_restores_the_newer_file(
        claude_dir: Path, tmp_path: Path) -> None:
    # installed once; the user then took Goalkeeper's entries out by hand and set up another
    # statusline; installing again and uninstalling must give back *that* file
    settings = claude_dir / "settings.json"
    hooks.install(claude_dir, tmp_path, PROGRAM, NOW)
    data = json.loads(settings.read_bytes())
    data["statusLine"] = {"type": "command", "command": "starship-claude"}
    data["hooks"]["StopFailure"] = data["hooks"]["StopFailure"][:1]
    del data["hooks"]["Notification"]
    settings.write_text(json.dumps(data, indent=2) + "\n")
    newer = settings.read_bytes()
    assert hooks.install(claude_dir, tmp_path, PROGRAM, NOW).changes
    hooks.uninstall(claude_dir, tmp_path)
    assert json.loads(settings.read_bytes()) == json.loads(newer)


def test_a_statusline_set_anew_while_installed_is_the_one_uninstall_restores(
        claude_dir: Path, tmp_path: Path) -> None:
    settings = claude_dir / "settings.json"
    hooks.install(claude_dir, tmp_path, PROGRAM, NOW)
    data = json.loads(settings.read_bytes())
    data["statusLine"] = {"type": "command", "command": "starship-claude"}  # e.g. /statusline
    settings.write_text(json.dumps(data, indent=2) + "\n")
    hooks.install(claude_dir, tmp_path, PROGRAM, NOW)
    hooks.uninstall(claude_dir, tmp_path)
    assert json.loads(settings.read_bytes())["statusLine"] == {"type": "command",
                                                               "command": "starship-claude"}


def test_the_stop_failure_entry_is_the_fast_path_and_replaces_an_older_one(
        claude_dir: Path, tmp_path: Path) -> None:
    settings = claude_dir / "settings.json"
    hooks.install(claude_dir, tmp_path, PROGRAM, NOW)  # an install from before the fast path
    fast = hooks.stop_failure_command("/opt/gk/bin/python", Path("/opt/gk/stop_hook.py"),
                                      tmp_path / "claude" / "hook-events.jsonl")
    assert fast.startswith("trap '' TERM; exec /opt/gk/bin/python -I -S /opt/gk/stop_hook.py ")
    change = hooks.install(claude_dir, tmp_path, PROGRAM, NOW, fast)
    assert change.changes == ["hooks.StopFailure: updated Goalkeeper's hook",
                              "hooks.Notification: updated Goalkeeper's hook"]
    groups = json.loads(settings.read_text())["hooks"]["StopFailure"]
    assert [g["hooks"][0]["command"] for g in groups] == ["notify-send 'Claude stopped'", fast]
    notification = json.loads(settings.read_text())["hooks"]["Notification"]
    assert [g["hooks"][0]["command"] for g in notification] == [fast]
    assert hooks.install(claude_dir, tmp_path, PROGRAM, NOW, fast).changes == []
    hooks.uninstall(claude_dir, tmp_path)
    groups = json.loads(settings.read_text())["hooks"]["StopFailure"]
    assert [g["hooks"][0]["command"] for g in groups] == ["notify-send 'Claude stopped'"]
    assert "Notification" not in json.loads(settings.read_text())["hooks"]


def test_the_users_own_notification_hooks_stay_and_come_back_byte_for_byte(
        claude_dir: Path, tmp_path: Path) -> None:
    settings = claude_dir / "settings.json"
    data = json.loads(settings.read_bytes())
    data["hooks"]["Notification"] = [{"matcher": "idle_prompt", "hooks": [
        {"type": "command", "command": "notify-send 'Claude waits'"}]}]
    settings.write_text(json.dumps(data, indent=2) + "\n")
    original = settings.read_bytes()
    hooks.install(claude_dir, tmp_path, PROGRAM, NOW)
    groups = json.loads(settings.read_bytes())["hooks"]["Notification"]
    assert [g["matcher"] for g in groups] == ["idle_prompt", "quota_auto_resume_.*"]
    hooks.uninstall(claude_dir, tmp_path)
    assert settings.read_bytes() == original


def test_an_install_from_before_the_notification_entry_gains_it_and_still_round_trips(
        claude_dir: Path, tmp_path: Path) -> None:
    """An earlier Goalkeeper installed the statusline and StopFailure only (its record says
    ``had_stop_failure``); installing now adds the Notification entry, and uninstalling still
    gives back the user's file byte for byte."""
    settings = claude_dir / "settings.json"
    original = settings.read_bytes()
    hooks.install(claude_dir, tmp_path, PROGRAM, NOW)
    data = json.loads(settings.read_bytes())  # what the earlier version left: no Notification
    del data["hooks"]["Notification"]
    settings.write_text(json.dumps(data, indent=2) + "\n")
    records_file = tmp_path / "claude" / "hooks.json"
    records = json.loads(records_file.read_text())
    record = records[str(settings)]
    record["had_stop_failure"] = record.pop("had_events")["StopFailure"]
    records_file.write_text(json.dumps(records))
    change = hooks.install(claude_dir, tmp_path, PROGRAM, NOW)
    assert change.changes == [
        "hooks.Notification: added Goalkeeper's hook (matcher quota_auto_resume_.*)"]
    hooks.uninstall(claude_dir, tmp_path)
    assert settings.read_bytes() == original
