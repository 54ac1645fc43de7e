"""``goalkeeper codex-usage`` on rollouts the pinned real ``codex`` wrote (both ends of its range),
offline against the mock Responses API.

The README compares ``codex-usage`` with ccusage on a generated tree; this is the claim's
contract with the real CLI: what the byte-level scan counts — calls, tokens, the model, the day
— is what a plain JSON reading of the same files says, on the lines as today's Codex writes them
(an ``ordinal`` before the type, ``cache_write_input_tokens`` in the usage), and a second run
answers the same from the usage cache without reading them again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.real.codex_mock import CodexMock, World, codex_env, running_mock


@pytest.fixture(scope="module")
def mock() -> Iterator[CodexMock]:
    with running_mock() as server:
        yield server


def codex_exec(world: World, prompt: str) -> None:
    """One turn of the real ``codex exec`` in the world's repository (the mock answers text)."""
    done = subprocess.run([str(world.codex_bin), "exec", "-C", str(world.repo), prompt],
                          env=codex_env(world.home), capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]


def plain_reading(sessions: Path) -> tuple[Counter[tuple[str, str]], dict[str, int]]:
    """(calls per (UTC day, model), token sums): every line decoded with ``json``, the model
    the last ``turn_context`` named."""
    calls: Counter[tuple[str, str]] = Counter()
    sums: Counter[str] = Counter()
    for path in sorted(sessions.rglob("rollout-*.jsonl")):
        model = "unknown"
        for raw in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(raw)
            payload = record.get("payload") or {}
            if record.get("type") == "turn_context":
                model = payload.get("model") or model
            info = payload.get("info") if payload.get("type") == "token_count" else None
            if isinstance(info, dict) and isinstance(info.get("last_token_usage"), dict):
                calls[(record["timestamp"][:10], model)] += 1
                sums.update({k: v or 0 for k, v in info["last_token_usage"].items()})
    return calls, dict(sums)


def codex_usage(world: World, data: Path) -> tuple[dict[str, Any], str]:
    code = ("import sys; from core.cli import main; from core.providers.codex import usage_cache;"
            " answer = usage_cache.UsageRun.history; usage_cache.UsageRun.history = "
            "lambda run: (print(len(run.todo), file=sys.stderr), answer(run))[1]; "
            "sys.exit(main(['codex-usage', '--json']))")
    env = {**os.environ, "CODEX_HOME": str(world.home), "GOALKEEPER_HOME": str(data)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr.strip()


def test_codex_usage_counts_what_the_real_cli_wrote(codex_bin: Path, mock: CodexMock,
                                                   tmp_path: Path):
    mock.set(mode="text", delay=0.0, used5=10, used7=5)
    world = World(codex_bin, mock, tmp_path)
    codex_exec(world, "say hello")
    codex_exec(world, "say it again")
    sessions = world.home / "sessions"
    expected_calls, expected_sums = plain_reading(sessions)
    assert sum(expected_calls.values()) >= 2, "the real CLI wrote no usage"
    heads = [line[:80] for path in sessions.rglob("rollout-*.jsonl")
             for line in path.read_text(encoding="utf-8").splitlines()]
    assert heads and all(head.startswith('{"timestamp":"') and '","ordinal":' in head
                         for head in heads)  # 0.169 and later: the ordinal before the type

    found, read = codex_usage(world, tmp_path / "gk")
    assert read == str(len(list(sessions.rglob("rollout-*.jsonl"))))
    got = {(row["date"], row["model"]): row["calls"] for row in found["days"]}
    assert got == dict(expected_calls)
    assert all(model == "gpt-5.1-codex" for _, model in got)
    total = found["total"]
    for name in ("input_tokens", "cached_input_tokens", "output_tokens",
                 "reasoning_output_tokens", "total_tokens"):
        assert total[name] == expected_sums.get(name, 0), name
    assert total["total_tokens"] == 15 * total["calls"]  # what the mock reported per call

    again, read = codex_usage(world, tmp_path / "gk")
    assert again == found and read == "0"  # from the cache, nothing read
