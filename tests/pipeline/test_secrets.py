"""Secrets: only in the keyring, wrapped calls, a clear message without a usable backend."""

from __future__ import annotations

import asyncio
import io
import json
import sys

import pytest

from core.cli import main
from tests.support.fake_keyring import MemoryKeyring
from tests.support.pipeline import approve


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_secret_commands_use_only_the_keyring(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch,
                                              memory_keyring: MemoryKeyring) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("hunter2-canary\n"))
    code, out, _ = cli(capsys, "secret", "set", "GITHUB_TOKEN")
    assert code == 0 and "hunter2" not in out
    assert memory_keyring.entries[("Goalkeeper", "GITHUB_TOKEN")] == "hunter2-canary"
    code, out, _ = cli(capsys, "secret", "list", "--json")
    assert json.loads(out) == [{"name": "GITHUB_TOKEN", "present": True}]
    assert cli(capsys, "secret", "delete", "GITHUB_TOKEN")[0] == 0
    assert cli(capsys, "secret", "delete", "GITHUB_TOKEN")[0] == 1
    assert cli(capsys, "secret", "list")[1].strip() == "no secrets stored"
    code, _, err = cli(capsys, "secret", "set", "9-bad")
    assert code == 1 and "not a valid secret name" in err


def test_without_a_usable_keyring_the_message_says_how_to_get_one(
        capsys: pytest.CaptureFixture[str]) -> None:
    import keyring
    from keyring.backends import fail, null

    for backend in (fail.Keyring(), null.Keyring()):
        keyring.set_keyring(backend)
        code, _, err = cli(capsys, "secret", "list")
        assert code == 2 and "no usable keyring backend" in err and "gnome-keyring" in err


class ExplodingKeyring(MemoryKeyring):
    """Fails like an unhealthy Secret Service does: not with a KeyringError."""

    def get_password(self, service: str, username: str) -> str | None:
        raise ConnectionError("org.freedesktop.DBus.Error.TimedOut")


def test_backend_failures_are_wrapped_without_values() -> None:
    from core.secrets import SecretStore, SecretStoreError

    store = SecretStore(backend=ExplodingKeyring())
    with pytest.raises(SecretStoreError, match="failed to read TOKEN: ConnectionError"):
        store.get("TOKEN")


@pytest.mark.asyncio
async def test_fetch_runs_off_the_loop_with_a_time_limit() -> None:
    import threading

    from core.secrets import SecretStore, SecretStoreError

    release = threading.Event()

    class Hanging(MemoryKeyring):
        def get_password(self, service: str, username: str) -> str | None:
            release.wait(5)
            return None

    store = SecretStore(backend=Hanging(), timeout=0.2)
    try:
        with pytest.raises(SecretStoreError, match=r"did not answer within 0\.2 s"):
            await store.fetch(["TOKEN"])
    finally:
        release.set()
    ok = SecretStore(backend=MemoryKeyring())
    ok.put("TOKEN", "abcd-1234")
    assert await ok.fetch(["TOKEN", "OTHER"]) == {"TOKEN": "abcd-1234", "OTHER": None}


def test_empty_values_are_refused(memory_keyring: MemoryKeyring) -> None:
    from core.secrets import SecretStore, SecretStoreError

    with pytest.raises(SecretStoreError, match="empty"):
        SecretStore().put("TOKEN", "")
    assert memory_keyring.entries == {}


CANARY = "canary-7f3a9c1e-do-not-leak"


@pytest.mark.asyncio
async def test_a_canary_secret_never_reaches_a_file_goalkeeper_writes(
        make_engine: object, paths: object, clock: object, tmp_path: object,
        memory_keyring: MemoryKeyring) -> None:
    """The secret reaches the step (which echoes it everywhere it can) and nothing else."""
    import os
    import random
    from pathlib import Path

    from core.logs import remove_handlers, setup_logging
    from core.providers.pipeline.catalog import PipelineCatalog
    from core.providers.pipeline.provider import PipelineProvider
    from core.secrets import SecretStore
    from core.settings import Settings
    from tests.pipeline.support import step, write_goal

    SecretStore().put("API_TOKEN", CANARY)
    leak = {"stdout": "$SECRET:API_TOKEN", "stderr": "$SECRET:API_TOKEN",
            "report": {"status": "auth_failed", "detail": "$SECRET:API_TOKEN"}}
    ok_leak = {"stdout": "$SECRET:API_TOKEN", "stderr": "$SECRET:API_TOKEN",
               "report": {"status": "ok", "items": 1, "detail": "$SECRET:API_TOKEN"}}
    goal_file = write_goal(Path(str(tmp_path)) / "goals", {"name": "leaky", "min_sources": 1},
                           [step("a", leak, secrets=["API_TOKEN"]),
                            step("b", ok_leak, secrets=["API_TOKEN"])],
                           [step("deliver", {"exit": 75}, leak, secrets=["API_TOKEN"],
                                 retries=1, backoff=0.01, backoff_max=0.01)])
    home = paths.data_dir  # type: ignore[attr-defined]
    handlers = setup_logging(paths.log_file)  # type: ignore[attr-defined]
    try:
        settings = Settings(resume_jitter_seconds=0)
        environ = {k: v for k, v in os.environ.items() if not k.startswith("GOALKEEPER_")}
        provider = PipelineProvider(settings, paths, clock, environ,  # type: ignore[arg-type]
                                    rng=random.Random(1))
        _, _, digest = PipelineCatalog(home / "pipelines").add(goal_file, clock.now())  # type: ignore
        engine = await make_engine(provider, settings=settings)  # type: ignore[operator]
        await approve(engine, provider, "leaky", digest)
        await provider.control_ops()["run"]({"goal": "leaky"})
        for _ in range(2000):  # the retry backoff sleeps on the fake clock: move it along
            if engine.goals["pipeline:leaky"].state.value == "paused" and not (
                    provider.is_active("pipeline:leaky")):
                break
            clock.advance(0.05)  # type: ignore[attr-defined]
            await asyncio.sleep(0.01)
        await engine.drain()
        run_dir = home / "pipelines" / "leaky" / "runs" / "leaky-2026-07-07"
        assert "********" in (run_dir / "b.out").read_text()  # the step did print it
        assert "auth_failed" in (engine.goals["pipeline:leaky"].pause_detail or "")
        await engine.stop()
    finally:
        remove_handlers(handlers)
    written = [p for p in Path(str(paths.data_dir)).rglob("*") if p.is_file()]  # type: ignore
    written += [p for p in Path(str(paths.log_dir)).rglob("*") if p.is_file()]  # type: ignore
    assert any(p.name == "goalkeeper.db" for p in written)
    assert any(p.name == "goalkeeper.log" for p in written)
    assert any(p.name == "state.json" for p in written)
    for path in written:
        assert CANARY.encode() not in path.read_bytes(), f"the secret leaked into {path}"
