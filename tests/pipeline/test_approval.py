"""Only goal files the user approved run (issue 21): a file that arrives in
``<data dir>/pipelines/<name>/`` another way, or whose text changed since, runs nothing and is a
health problem until ``goalkeeper approve``; ``add`` and ``approve`` show the commands and ask."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.clock import FakeClock
from core.engine import Engine
from core.identity import host_id_of
from core.paths import Paths
from core.providers.pipeline.approval import approval_key
from core.providers.pipeline.catalog import PipelineCatalog
from core.providers.pipeline.provider import PipelineProvider
from core.settings import Settings
from core.store.sqlite import SqliteStore
from tests.pipeline.support import FakeSecrets, step, toml_text, write_goal
from tests.support.daemon import running_daemon
from tests.support.engine import EngineFactory
from tests.support.fakes import until
from tests.support.pipeline import host, run_op, settings

DROPPED = "pipeline:dropped"


def fx(tmp_path: Path) -> dict[str, Any]:
    return {"effect": str(tmp_path / "effects.log")}


def effects(tmp_path: Path) -> list[str]:
    path = tmp_path / "effects.log"
    return sorted(path.read_text().split()) if path.exists() else []


def drop(data_dir: Path, tmp_path: Path, name: str = "dropped") -> Path:
    """A goal file put into the data directory by something other than `goalkeeper add`."""
    directory = data_dir / "pipelines" / name
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "goal.toml"
    target.write_text(toml_text({"name": name, "schedule": "* * * * *", "timezone": "UTC"},
                                [], [step("deliver", fx(tmp_path))]), encoding="utf-8")
    return target


def waiting(engine: Engine, name: str) -> bool:
    return any(f"pipeline goal {name} needs your approval" in p
               and f"`goalkeeper approve {name}`" in p
               for p in engine.reads.health().problems())


@pytest.mark.asyncio
async def test_a_dropped_goal_file_runs_nothing_until_approved(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, tmp_path: Path) -> None:
    goal_file = drop(paths.data_dir, tmp_path)
    provider = PipelineProvider(settings(), paths, clock, {}, FakeSecrets({}), random.Random(1))
    engine = await make_engine(provider, settings=settings())
    assert waiting(engine, "dropped")
    assert engine.goals[DROPPED].data.get("needs_approval") == "goalkeeper approve dropped"
    assert provider.next_wake(clock.now()) is None  # its schedule is not planned
    await clock.run_for(75, step=5)
    assert effects(tmp_path) == []
    refused = await provider.control_ops()["run"]({"goal": "dropped"})
    assert refused["outcome"] == "refused" and "goalkeeper approve dropped" in refused["reason"]
    await engine.refresh()
    assert effects(tmp_path) == [] and waiting(engine, "dropped")

    entry = provider.catalog.get("dropped")
    assert entry is not None
    reply = await provider.control_ops()["pipeline-approve"](
        {"goal": "dropped", "digest": entry.digest})
    assert reply == {"goal": DROPPED, "approved": True}
    await engine.refresh()
    assert not waiting(engine, "dropped")
    await clock.run_for(75, step=15)
    await until(lambda: effects(tmp_path) == ["deliver"], 15)
    assert goal_file.exists()


@pytest.mark.asyncio
async def test_an_added_goal_file_changed_since_waits_for_approval_again(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, tmp_path: Path) -> None:
    engine, provider = await host(make_engine, paths, clock, tmp_path, [],
                                  [step("deliver", fx(tmp_path))])
    assert not waiting(engine, "digest")
    snapshot = paths.data_dir / "pipelines" / "digest" / "goal.toml"
    snapshot.write_text(snapshot.read_text() + "# edited in place\n", encoding="utf-8")
    refused = await run_op(provider)  # refused at once, even before the next discovery
    assert refused["outcome"] == "refused" and "needs your approval" in refused["reason"]
    await engine.refresh()
    assert waiting(engine, "digest") and effects(tmp_path) == []


@pytest.mark.asyncio
async def test_an_approval_of_text_that_changed_meanwhile_approves_nothing(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, tmp_path: Path) -> None:
    drop(paths.data_dir, tmp_path)
    provider = PipelineProvider(settings(), paths, clock, {}, FakeSecrets({}), random.Random(1))
    await make_engine(provider, settings=settings())
    reply = await provider.control_ops()["pipeline-approve"](
        {"goal": "dropped", "digest": "0" * 64})
    assert reply["approved"] is False
    assert provider.attention() and provider.next_wake(clock.now()) is None


# -- the command line --------------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def approved_digest(name: str) -> str | None:
    home = Path(os.environ["GOALKEEPER_HOME"])
    store = SqliteStore(home / "goalkeeper.db")
    try:
        return store.get_meta(approval_key(host_id_of(Settings().host_id, home), name))
    finally:
        store.close()


def test_add_without_a_terminal_refuses_and_says_to_use_yes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_goal(tmp_path, {"name": "digest"}, [], [step("deliver")])
    code, out, err = cli(capsys, "add", str(path))
    assert code == 2 and "--yes" in err and out == ""
    assert "pipeline:digest will run these commands:" in err and "stage deliver: " in err
    assert not (Path(os.environ["GOALKEEPER_HOME"]) / "pipelines" / "digest").exists()


def test_add_asks_and_a_no_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_goal(tmp_path, {"name": "digest"}, [], [step("deliver")])
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    code, _, err = cli(capsys, "add", str(path))
    assert code == 2 and "[y/N]" in err and "nothing was changed" in err
    assert not (Path(os.environ["GOALKEEPER_HOME"]) / "pipelines" / "digest").exists()
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    code, out, _ = cli(capsys, "add", str(path), "--json")
    data = json.loads(out)
    assert code == 0 and data["commands"][0].startswith("stage deliver: ")
    assert approved_digest("digest") == PipelineCatalog(
        Path(os.environ["GOALKEEPER_HOME"]) / "pipelines").get("digest").digest  # type: ignore


def test_approve_records_the_digest_of_the_file_it_showed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["GOALKEEPER_HOME"])
    drop(home, tmp_path)
    assert approved_digest("dropped") is None
    code, _, err = cli(capsys, "approve", "dropped")
    assert code == 2 and "--yes" in err and approved_digest("dropped") is None
    code, out, err = cli(capsys, "approve", "dropped", "--yes")
    assert code == 0 and "approved pipeline:dropped" in out and "stage deliver: " in err
    entry = PipelineCatalog(home / "pipelines").get("dropped")
    assert entry is not None and approved_digest("dropped") == entry.digest
    assert cli(capsys, "approve", "nothing", "--yes")[0] == 3


# -- against a real host -----------------------------------------------------------------------


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    with running_daemon(tmp_path) as proc:
        yield proc


@pytest.mark.slow
def test_a_daemon_shows_a_dropped_file_and_runs_it_once_approved(
        daemon: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["GOALKEEPER_HOME"])
    drop(home, tmp_path)
    code, out, _ = cli(capsys, "run", "dropped")
    assert code == 4 and "goalkeeper approve dropped" in out
    code, out, _ = cli(capsys, "status", "--json")
    problems = json.loads(out)["host"]["health"]["problems"]
    assert any("needs your approval" in p for p in problems), problems
    assert effects(tmp_path) == []
    assert cli(capsys, "approve", "dropped", "--yes")[0] == 0
    code, out, _ = cli(capsys, "run", "dropped", "--wait", "--timeout", "30")
    assert code == 0, out
    assert effects(tmp_path) == ["deliver"]
    code, out, _ = cli(capsys, "status", "--json")
    assert not any("needs your approval" in p
                   for p in json.loads(out)["host"]["health"]["problems"])


def test_approve_refuses_a_file_with_a_plain_secret(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["GOALKEEPER_HOME"])
    directory = home / "pipelines" / "leaky"
    directory.mkdir(parents=True)
    (directory / "goal.toml").write_text(toml_text(
        {"name": "leaky"}, [], [step("deliver", env={"SERVICE_API_KEY": "plain-value-1234"})]))
    code, _, err = cli(capsys, "approve", "leaky", "--yes")
    assert code == 2 and "goalkeeper add FILE" in err and "plain-value-1234" not in err
    assert approved_digest("leaky") is None


@pytest.mark.asyncio
async def test_a_removed_goal_file_put_back_waits_for_approval(
        make_engine: EngineFactory, paths: Paths, clock: FakeClock, tmp_path: Path) -> None:
    engine, provider = await host(make_engine, paths, clock, tmp_path, [], [step("deliver")])
    snapshot = paths.data_dir / "pipelines" / "digest" / "goal.toml"
    text = snapshot.read_text()
    reply = await provider.control_ops()["pipeline-remove"]({"goal": "digest"})
    assert reply["moved_to"]
    snapshot.parent.mkdir(parents=True)
    snapshot.write_text(text)  # the very file that was approved, restored from a backup
    await engine.refresh()
    assert waiting(engine, "digest")
    assert (await run_op(provider))["outcome"] == "refused"
