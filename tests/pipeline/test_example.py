"""The shipped example runs: complete with its secret, degraded without, blocked on demand."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from core.clock import FakeClock
from core.models import GoalState, PauseReason
from core.paths import Paths
from core.providers.pipeline.catalog import PipelineCatalog
from core.providers.pipeline.provider import PipelineProvider
from core.settings import Settings
from tests.pipeline.support import FakeSecrets
from tests.support.engine import EngineFactory
from tests.support.fakes import until
from tests.support.pipeline import approve

pytestmark = pytest.mark.asyncio
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hotspot-digest"
GOAL = "pipeline:hotspot-digest"


async def test_the_example_degrades_completes_and_blocks(make_engine: EngineFactory,
                                                         paths: Paths, clock: FakeClock,
                                                         tmp_path: Path) -> None:
    copy = tmp_path / "hotspot-digest"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("outbox", "faults.json",
                                                                 "__pycache__"))
    secrets = FakeSecrets()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GOALKEEPER_")}
    provider = PipelineProvider(Settings(), paths, clock, environ, secrets, random.Random(1))
    _, _, digest = PipelineCatalog(paths.data_dir / "pipelines").add(
        copy / "hotspot-digest.toml", clock.now())
    engine = await make_engine(provider)
    await approve(engine, provider, "hotspot-digest", digest)

    async def run() -> None:
        await provider.control_ops()["run"]({"goal": "hotspot-digest"})
        await until(lambda: not provider.is_active(GOAL), 30)
        await engine.drain()

    await run()
    assert engine.goals[GOAL].state is GoalState.IDLE
    [digest] = (copy / "outbox").glob("*.md")
    assert "Incomplete data" in digest.read_text() and "3/4" in digest.read_text()

    secrets.values["AIHOT_TOKEN"] = "token-1234"
    await run()
    newest = max((copy / "outbox").glob("*.md"), key=lambda p: p.stat().st_mtime_ns)
    assert "Incomplete" not in newest.read_text() and "sources: 4/4" in newest.read_text()

    subprocess.run(["python3", "fault.py", "filter", "few"], cwd=copy, check=True,
                   capture_output=True)
    await run()
    goal = engine.goals[GOAL]
    assert goal.state is GoalState.PAUSED and goal.pause_reason is PauseReason.ERROR
    assert "too few valid items (2 items, need at least 5)" in (goal.pause_detail or "")
