"""The Codex gauges through a running engine: start-up, appends within 5 s, the registry."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.models import Exactness
from core.providers import registry
from core.providers.codex.provider import CodexProvider
from core.settings import Settings, load_settings
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    THREAD_B,
    CodexHome,
    five_and_week,
    meta,
    token_count,
)
from tests.support.fakes import until

H = timedelta(hours=1)
M = timedelta(minutes=1)


def gauges(engine) -> dict[str, float | None]:
    return {r.window_id: r.used_percent for r in engine.quotas.readings(engine.clock.now())}


@pytest.mark.asyncio
async def test_start_shows_the_newest_snapshot(home: CodexHome, make_codex, make_engine):
    home.rollout(THREAD_A, T0 - 9 * H, meta(THREAD_A, T0 - 9 * H),
                 token_count(T0 - 8 * H, five_and_week(99.0, T0 - 6 * H, 80.0, T0 + 90 * H)))
    home.rollout(THREAD_B, T0 - 2 * H, meta(THREAD_B, T0 - 2 * H),
                 token_count(T0 - 5 * M, five_and_week(42.0, T0 + 2 * H, 61.0, T0 + 90 * H)))
    tree = home.tree()
    engine = await make_engine(make_codex())
    assert gauges(engine) == {"codex:5h": 42.0, "codex:weekly": 61.0, "codex:credits": 0.0}
    assert home.tree() == tree  # nothing written into CODEX_HOME


@pytest.mark.asyncio
async def test_an_appended_snapshot_reaches_the_gauges_within_5_s(
        home: CodexHome, make_codex, make_engine, clock: FakeClock):
    path = home.rollout(THREAD_A, T0 - H, meta(THREAD_A, T0 - H),
                        token_count(T0 - M, five_and_week(10.0, T0 + H, 5.0, T0 + 90 * H)))
    engine = await make_engine(make_codex())
    home.append(path, token_count(T0, five_and_week(100.0, T0 + H, 6.0, T0 + 90 * H,
                                                    reached="rate_limit_reached")))
    clock.advance(5)
    await until(lambda: gauges(engine).get("codex:5h") == 100.0)
    assert engine.quotas.tracker("codex:5h").state.value == "exhausted"


@pytest.mark.asyncio
async def test_an_old_snapshot_is_stale_and_its_passed_reset_inferred(
        home: CodexHome, make_codex, make_engine):
    home.rollout(THREAD_A, T0 - 9 * H, meta(THREAD_A, T0 - 9 * H),
                 token_count(T0 - 7 * H, five_and_week(100.0, T0 - 3 * H, 40.0, T0 + 90 * H)))
    engine = await make_engine(make_codex())
    shown = {r.window_id: r for r in engine.quotas.readings(engine.clock.now())}
    assert shown["codex:5h"].exactness is Exactness.INFERRED
    assert shown["codex:5h"].used_percent == 0.0
    assert shown["codex:weekly"].exactness is Exactness.STALE
    assert engine.quotas.is_recovered("codex:5h")


# -- registry ----------------------------------------------------------------------------------


def codex_of(settings: Settings, paths, clock: FakeClock,
             environ: dict[str, str]) -> list[CodexProvider]:
    """The Codex providers the registry builds (other providers may be on by default)."""
    return [p for p in registry.build_providers(settings, paths, clock, environ)
            if isinstance(p, CodexProvider)]


def test_registry_builds_codex_when_its_home_exists(tmp_path: Path, clock: FakeClock, paths):
    home = CodexHome(tmp_path / "ch")
    environ = {"CODEX_HOME": str(home.root), "PATH": "/usr/bin"}
    [provider] = codex_of(Settings(), paths, clock, environ)
    assert provider.config.sessions == home.sessions
    assert provider.index_file == paths.data_dir / "codex-start-index.json"
    looked = dict(registry.looked_for(Settings(), environ))
    assert looked["codex"] == f"Codex sessions in {home.root}: found"


def test_registry_leaves_codex_out_when_missing_or_turned_off(tmp_path: Path, clock: FakeClock,
                                                              paths):
    missing = {"CODEX_HOME": str(tmp_path / "nope")}
    assert codex_of(Settings(), paths, clock, missing) == []
    assert dict(registry.looked_for(Settings(), missing))["codex"].endswith("not found")
    home = CodexHome(tmp_path / "ch")
    present = {"CODEX_HOME": str(home.root)}
    off = Settings(codex_enabled=False)
    assert codex_of(off, paths, clock, present) == []
    assert "off (codex_enabled)" in dict(registry.looked_for(off, present))["codex"]


def test_default_home_is_dot_codex_and_the_setting_wins(tmp_path: Path, clock: FakeClock,
                                                       paths):
    (tmp_path / ".codex").mkdir()
    [provider] = codex_of(Settings(), paths, clock, {"HOME": str(tmp_path)})
    assert provider.config.home == tmp_path / ".codex"
    other = CodexHome(tmp_path / "elsewhere")
    chosen = Settings(codex_home=str(other.root))
    [provider] = codex_of(chosen, paths, clock, {"HOME": str(tmp_path), "CODEX_HOME": "/nowhere"})
    assert provider.config.home == other.root
    assert provider.config.env["CODEX_HOME"] == str(other.root)


def test_codex_settings_come_from_the_environment(tmp_path: Path):
    settings = load_settings(tmp_path / "none.toml", {
        "GOALKEEPER_CODEX_BIN": "/opt/codex/bin/codex", "GOALKEEPER_CODEX_ENABLED": "false",
        "GOALKEEPER_CODEX_CONTINUATION_TEXT": "Keep going."})
    assert settings.codex_bin == "/opt/codex/bin/codex"
    assert settings.codex_enabled is False
    assert settings.codex_continuation_text == "Keep going."
