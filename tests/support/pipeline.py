"""Pipeline test helpers: an engine hosting the ``digest`` pipeline goal, its ``run`` control
op, and waiting until that goal has settled in a state."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from core.clock import FakeClock
from core.engine import Engine
from core.models import GoalState
from core.paths import Paths
from core.providers.pipeline.catalog import PipelineCatalog
from core.providers.pipeline.provider import PipelineProvider
from core.settings import Settings
from tests.pipeline.support import FakeSecrets, write_goal
from tests.support.engine import EngineFactory
from tests.support.fakes import until

GOAL = "pipeline:digest"


def settings(**kw: Any) -> Settings:
    return Settings(resume_jitter_seconds=0, resume_margin_seconds=5, stable_seconds=5,
                    **kw)


async def host(make_engine: EngineFactory, paths: Paths, clock: FakeClock,
               tmp_path: Path, sources: list[dict[str, Any]], stages: list[dict[str, Any]],
               conf: Settings | None = None, **top: Any) -> tuple[Engine, PipelineProvider]:
    conf = conf or settings()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GOALKEEPER_")}
    provider = PipelineProvider(conf, paths, clock, environ, FakeSecrets({"TOKEN": "tok-12345"}),
                                random.Random(1))
    path = write_goal(tmp_path / "goals", {"name": "digest", **top}, sources, stages)
    _, _, digest = PipelineCatalog(paths.data_dir / "pipelines").add(path, clock.now())
    engine: Engine = await make_engine(provider, settings=conf)
    await approve(engine, provider, "digest", digest)
    return engine, provider


async def approve(engine: Engine, provider: PipelineProvider, name: str, digest: str) -> None:
    """What `goalkeeper add` does after adding: the goal file's approval, recorded by the host."""
    assert await provider.approve(name, digest)
    await engine.refresh()


async def run_op(provider: PipelineProvider, **request: Any) -> dict[str, Any]:
    return await provider.control_ops()["run"]({"op": "run", "goal": "digest", **request})


def state(engine: Engine) -> GoalState:
    return engine.goals[GOAL].state


async def settled(engine: Engine, wanted: GoalState, timeout: float = 15.0) -> None:
    await until(lambda: state(engine) is wanted and not engine.goals[GOAL].hosted
                if wanted is not GoalState.RUNNING else state(engine) is wanted, timeout)
    await engine.drain()
