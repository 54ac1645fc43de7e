"""The set-up assistant in a terminal (``goalkeeper setup``) and its core: what it finds in a
fake Codex home and Claude config directory, and that every choice does what it says — and
nothing happens without a yes (issue 22)."""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.paths import resolve_paths
from core.settings import Settings, load_settings
from core.setup.assistant import Choices, apply, default_context, find
from tests.support.cli import run
from tests.support.setup import AgentHomes, FakeService, agent_homes

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def config(home: Path) -> dict[str, Any]:
    path = home / "config.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def setup_json(home: Path, homes: AgentHomes, *args: str, stdin: str = ""
               ) -> tuple[int, dict[str, Any]]:
    done = run(home, "setup", "--json", *args, env=homes.env)
    assert done.stderr == "" or done.returncode != 0, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_json_alone_reports_what_was_found_and_changes_nothing(tmp_path: Path) -> None:
    homes, home = agent_homes(tmp_path), tmp_path / "gk"
    code, out = setup_json(home, homes)
    assert code == 0 and out["applied"] is None
    assert out["found"]["codex"] == {"home": str(homes.codex), "found": True, "goals": 2}
    claude = out["found"]["claude"]
    assert claude["sessions"] == 3 and claude["hooks_installed"] is False
    assert [q["provider"] for q in out["found"]["quotas"]] == ["codex", "claude"]
    assert "guessed from the usage-limit messages" in out["found"]["quotas"][1]["how"]
    assert {p["provider"] for p in out["found"]["looked_for"]} >= {"codex", "claude"}
    assert not any(out["chosen"].values())
    assert config(home) == {}
    assert homes.claude_settings() == {"theme": "dark"}


def test_yes_takes_the_defaults_which_keep_auto_resume_off(tmp_path: Path) -> None:
    homes, home = agent_homes(tmp_path), tmp_path / "gk"
    code, out = setup_json(home, homes, "--yes")
    assert code == 0 and out["applied"] == []
    assert config(home) == {"setup_done": True}
    settings = load_settings(home / "config.toml", {})
    assert not settings.auto_resume_for("codex") and not settings.auto_resume_for("claude")
    assert homes.claude_settings() == {"theme": "dark"}
    assert not homes.autostart().exists()


def test_every_yes_given_as_an_option_does_what_it_says(tmp_path: Path) -> None:
    homes, home = agent_homes(tmp_path), tmp_path / "gk"
    code, out = setup_json(home, homes, "--yes", "--codex-auto-resume", "--claude-auto-resume",
                           "--claude-hooks", "--start-at-login", "--ntfy", "https://ntfy.sh/mine")
    assert code == 0, out
    assert [a["choice"] for a in out["applied"]] == [
        "codex_auto_resume", "claude_auto_resume", "ntfy", "start_at_login", "claude_hooks"]
    assert all(a["ok"] for a in out["applied"])
    assert config(home) == {"codex_auto_resume": True, "claude_auto_resume": True,
                            "notify_ntfy_url": "https://ntfy.sh/mine", "start_at_login": True,
                            "setup_done": True}
    hooked = homes.claude_settings()
    assert hooked["theme"] == "dark" and "hook claude-statusline" in hooked["statusLine"]["command"]
    assert "StopFailure" in hooked["hooks"]
    assert "X-Goalkeeper-Autostart=true" in homes.autostart().read_text(encoding="utf-8")
    _code, again = setup_json(home, homes)
    assert again["found"]["already"] == {
        "codex_auto_resume": True, "claude_auto_resume": True, "claude_hooks": True,
        "start_at_login": True, "service": False, "ntfy": True}
    assert "read exactly from the rate_limits" in again["found"]["quotas"][1]["how"]


def test_the_questions_default_to_no(tmp_path: Path) -> None:
    homes, home = agent_homes(tmp_path), tmp_path / "gk"
    done = run(home, "setup", env=homes.env)  # stdin is empty: every question is answered no
    assert done.returncode == 0, done.stderr
    assert "Codex goals found: 2" in done.stdout and "Claude Code sessions found: 3" in done.stdout
    assert "Auto-resume Codex goals? [y/N]" in done.stdout
    assert "Nothing changed" in done.stdout
    assert config(home) == {"setup_done": True}


def test_a_yes_typed_at_the_question(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    homes, home = agent_homes(tmp_path), tmp_path / "gk"
    for name, value in {**homes.env, "GOALKEEPER_HOME": str(home)}.items():
        monkeypatch.setenv(name, value)
    answers = iter(["y", "", "n", "", "", "https://ntfy.sh/typed"])
    monkeypatch.setattr("builtins.input", lambda _prompt: next(answers))
    from core.cli import main

    assert main(["setup"]) == 0
    assert config(home) == {"codex_auto_resume": True, "notify_ntfy_url": "https://ntfy.sh/typed",
                            "setup_done": True}
    assert homes.claude_settings() == {"theme": "dark"}


def test_a_bad_ntfy_url_is_refused_and_nothing_is_saved(tmp_path: Path) -> None:
    homes, home = agent_homes(tmp_path), tmp_path / "gk"
    code, out = setup_json(home, homes, "--yes", "--codex-auto-resume", "--ntfy", "not a url")
    assert code == 1
    assert not any(a["ok"] for a in out["applied"])
    assert config(home) == {}


def test_the_service_choice_installs_the_service_only_on_a_yes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    homes = agent_homes(tmp_path)
    for name, value in {**homes.env, "GOALKEEPER_HOME": str(tmp_path / "gk")}.items():
        monkeypatch.setenv(name, value)
    import os

    paths = resolve_paths(os.environ)
    service = FakeService()
    ctx = service.faked(default_context(paths, os.environ, lambda: T0, "goalkeeper", "python"))
    assert apply(Choices(), ctx) == [] and service.installs == 0
    assert not find(Settings(), ctx).already["service"]
    done = apply(Choices(service=True), ctx)
    assert [(a.key, a.ok) for a in done] == [("service", True)] and service.installs == 1
    assert find(Settings(), ctx).already["service"]
    failing = FakeService("no service manager is supported on plan9")
    done = apply(Choices(service=True), failing.faked(ctx))
    assert [(a.key, a.ok, a.text) for a in done] == [
        ("service", False, "no service manager is supported on plan9")]


def test_auto_resume_defaults_are_per_provider() -> None:
    assert not Settings().auto_resume_for("codex")
    assert Settings(codex_auto_resume=True).auto_resume_for("codex")
    assert not Settings(codex_auto_resume=True).auto_resume_for("claude")
    assert Settings(claude_auto_resume=True).auto_resume_for("claude")
    assert Settings(auto_resume_default=True).auto_resume_for("pipeline")


@pytest.mark.asyncio
async def test_a_provider_s_own_default_reaches_its_newly_found_goals(make_engine: Any,
                                                                    clock: Any) -> None:
    from tests.support.fakes import FakeProvider

    codex, claude = FakeProvider(clock, name="codex"), FakeProvider(clock, name="claude")
    codex.observe("codex:t1", title="Port the parser")
    claude.observe("claude:s1", title="Fix the flaky test")
    engine = await make_engine(codex, claude,
                               settings=Settings(resume_jitter_seconds=0, codex_auto_resume=True))
    goals = {g.id: g.auto_resume for g in engine.reads.goals()}
    assert goals == {"codex:t1": True, "claude:s1": False}
