"""The canary: secrets planted everywhere Goalkeeper can meet them, then every byte it wrote is
scanned — the data directory, the database and its WAL (raw), the logs, an export: 0 hits.

Planted: a non-ASCII and a multi-line keyring secret (a pipeline step's ``secrets``), a secret in
a goal file's ``env`` (moved to the keyring at ``add``), and one in the host's environment. The
pipeline's steps print them raw, JSON-escaped and ``repr``-escaped to stdout, stderr, their
report and their failure detail; the Codex and Claude scenarios carry the host's secret in a goal
objective and a prompt, which become titles.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from core.cli import main as cli_main
from core.clock import FakeClock
from core.engine import Engine
from core.logs import remove_handlers, setup_logging
from core.paths import Paths
from core.providers.claude.provider import ClaudeProvider
from core.providers.codex.config import from_settings
from core.providers.codex.provider import CodexProvider
from core.providers.pipeline.catalog import PipelineCatalog
from core.providers.pipeline.envsecrets import move_to_keyring
from core.providers.pipeline.provider import PipelineProvider
from core.redact import forms
from core.secrets import SecretStore
from core.settings import Settings
from tests.claude.builders import limit_stop, user, write_session
from tests.codex.fixtures import T0, THREAD_A, CodexHome, goal, meta
from tests.pipeline.support import write_goal
from tests.support.fake_keyring import MemoryKeyring, memory_keyring_installed
from tests.support.pipeline import approve

UNICODE = "pässwörd-ünïcode-✓-canary-41"
MULTILINE = "-----BEGIN CANARY KEY-----\nQ2FuYXJ5TGluZU9uZS1hYmNkZWY\nQ2FuYXJ5TGluZVR3by1naGlq\n" \
            "-----END CANARY KEY-----"
GOAL_ENV = "goalfile-env-canary-5d1e9a"
HOST_ENV = "host-env-canary-7f3a9b20"
SECRETS = [UNICODE, MULTILINE, GOAL_ENV, HOST_ENV]

LEAK = r"""
import json, os, sys
values = [os.environ["UNI_SECRET"], os.environ["PEM_SECRET"], os.environ["SERVICE_API_KEY"],
          os.environ["CANARY_API_TOKEN"]]
for v in values:
    print(v); print(json.dumps(v)); print(repr(v)); print(v, file=sys.stderr)
    print(json.dumps({"token": v}, ensure_ascii=False), file=sys.stderr)
json.dump({"status": sys.argv[1], "detail": " | ".join(values)},
          open(os.environ["GOALKEEPER_REPORT"], "w"))
"""


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    with memory_keyring_installed() as backend:
        yield backend


def leaky(name: str, status: str) -> dict[str, object]:
    return {"name": name, "command": [sys.executable, "-c", LEAK, status],
            "secrets": ["UNI_SECRET", "PEM_SECRET"],
            "env": {"SERVICE_API_KEY": GOAL_ENV}, "retries": 0}


def add_pipeline(paths: Paths, tmp_path: Path, clock: FakeClock) -> str:
    store = SecretStore()
    store.put("UNI_SECRET", UNICODE)
    store.put("PEM_SECRET", MULTILINE)
    path = write_goal(tmp_path / "goals", {"name": "leaky", "min_sources": 1},
                      [leaky("a", "ok")], [leaky("deliver", "auth_failed")])
    return PipelineCatalog(paths.data_dir / "pipelines").add(
        path, clock.now(), lambda g, text: move_to_keyring(g, text, path, store))[2]


def agents(tmp_path: Path) -> dict[str, str]:
    codex = CodexHome(tmp_path / "codex-home")
    codex.rollout(THREAD_A, T0 - timedelta(hours=1), meta(THREAD_A, T0 - timedelta(hours=1)),
                  goal(THREAD_A, "active", T0 - timedelta(minutes=50),
                       objective=f"deploy with {HOST_ENV} and {UNICODE}"))
    claude = tmp_path / "claude-config"
    write_session(claude, [user(f"please use the key {HOST_ENV}", T0 - timedelta(minutes=40)),
                           limit_stop("You've hit your limit · resets 3pm (UTC)",
                                      T0 - timedelta(minutes=30))])
    return {"CODEX_HOME": str(codex.root), "CLAUDE_CONFIG_DIR": str(claude),
            "HOME": str(tmp_path / "home"), "CANARY_API_TOKEN": HOST_ENV, "TZ": "UTC",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def scan(paths: Paths, extra: list[bytes]) -> list[str]:
    """Every file Goalkeeper wrote, read raw, for every form of every secret."""
    needles = {f for secret in SECRETS for f in forms(secret)}
    hits = []
    files = [p for root in (paths.data_dir, paths.log_dir) for p in root.rglob("*")
             if p.is_file()]
    blobs = [(str(p), p.read_bytes()) for p in files] + [(f"output {i}", b)
                                                         for i, b in enumerate(extra)]
    for where, data in blobs:
        hits.extend(f"{needle[:12]!r}… in {where}" for needle in needles if needle in data)
    return hits


@pytest.mark.asyncio
async def test_no_planted_secret_reaches_anything_goalkeeper_writes(
        paths: Paths, clock: FakeClock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    environ = agents(tmp_path)
    paths.ensure()
    handlers = setup_logging(paths.log_file, stdout=True, level=logging.DEBUG, environ=environ)
    digest = add_pipeline(paths, tmp_path, clock)
    settings = Settings(resume_jitter_seconds=0)
    pipeline = PipelineProvider(settings, paths, clock, environ, rng=random.Random(1))
    providers = [pipeline, CodexProvider(from_settings(settings, environ), clock),
                 ClaudeProvider(settings, paths, clock, environ)]
    engine = Engine(paths, settings, providers, clock, random.Random(2))
    try:
        await engine.start()
        await approve(engine, pipeline, "leaky", digest)
        await pipeline.control_ops()["run"]({"goal": "leaky"})
        for _ in range(500):
            if engine.goals["pipeline:leaky"].state.value == "paused":
                break
            await asyncio.sleep(0.02)
        await engine.drain()
        logging.getLogger("goalkeeper").error("a provider failed: %s / %r", HOST_ENV, UNICODE)
        assert engine.goals["pipeline:leaky"].pause_reason is not None  # the step did fail
        titles = {g.provider: g.title for g in engine.goals.values()}
        assert "********" in titles["codex"] and "********" in titles["claude"]
        wal = paths.data_dir / "goalkeeper.db-wal"
        assert wal.exists() and wal.stat().st_size > 0  # scanned while the host runs
        live = scan(paths, [])
        await engine.stop()
    finally:
        remove_handlers(handlers)
    os.environ.pop("GOALKEEPER_HOME", None)
    os.environ["GOALKEEPER_HOME"] = str(paths.data_dir)
    assert cli_main(["history", "--json", "--limit", "1000"]) == 0
    assert cli_main(["status", "--json"]) == 0
    exported = capsys.readouterr()
    assert '"event": "resume_requested"' in exported.out or '"event"' in exported.out
    outputs = [exported.out.encode(), exported.err.encode()]
    assert live == []
    assert scan(paths, outputs) == []
    snapshot = (paths.data_dir / "pipelines" / "leaky" / "goal.toml").read_text()
    assert "keyring:leaky_a_SERVICE_API_KEY" in snapshot and GOAL_ENV not in snapshot
