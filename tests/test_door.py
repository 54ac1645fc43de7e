"""The one door: every command has one wire name and one handler, every caller goes through it —
start-up recovery included, which safe mode and a lost lease refuse like any other resume."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.commands import (
    COMMANDS,
    ActionResult,
    Cancel,
    Command,
    Forget,
    Pause,
    Queue,
    Resume,
    SetAutoResume,
    SetGoalPolicy,
    SkipReset,
    Start,
    command_from_json,
)
from core.hosts.control import ControlServer, HostOps
from core.models import GoalState, Outcome, PauseReason, Trigger
from core.paths import Paths
from tests.support.fakes import FakeProvider

EXAMPLES: list[Command] = [
    Resume("fake:g"), Pause("fake:g"), Cancel("fake:g"), SetAutoResume("fake:g", True),
    SetGoalPolicy("fake:g", "budget_percent", "10"), Start("fake:g"), Forget("fake:g"),
    SkipReset("fake:g"),
    Queue("fake:g", provider="codex", cwd="/w", text="Fix it", window="codex:5h", thread="t"),
]


def test_every_intent_is_one_command_with_one_wire_name() -> None:
    assert sorted(COMMANDS) == sorted(c.wire for c in EXAMPLES)
    assert {type(c) for c in EXAMPLES} == set(COMMANDS.values())


@pytest.mark.parametrize("command", EXAMPLES, ids=lambda c: c.wire)
def test_a_command_goes_over_the_wire_and_back_unchanged(command: Command) -> None:
    wire = json.loads(json.dumps(command.to_json()))
    assert wire["op"] == command.wire and wire["goal"] == "fake:g"
    assert command_from_json(wire) == command


def test_a_resume_from_outside_is_always_a_persons() -> None:
    """The scheduler's trigger and context never travel: a routed or socket resume is manual."""
    auto = Resume("fake:g", Trigger.AUTO, {"deadline": "x"})
    assert auto.to_json() == {"op": "resume", "goal": "fake:g"}
    assert command_from_json(auto.to_json()) == Resume("fake:g")
    assert not auto.travels() and Resume("fake:g").travels()
    assert not Forget("fake:g").travels()  # only the owner stops its agent


@pytest.mark.parametrize("bad", [
    {"op": "explode", "goal": "g"}, {"op": "resume"}, {"op": "pause", "goal": ""},
    {"op": "auto-resume", "goal": "g", "enabled": "yes"}, {"op": "goal-set", "goal": "g"},
])
def test_a_bad_request_is_a_value_error_naming_it(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        command_from_json(bad)


@pytest.mark.asyncio
async def test_the_door_answers_every_command(make_engine, fake: FakeProvider) -> None:
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.USER)
    engine = await make_engine(fake)
    assert set(engine.goal_door._handlers) == set(COMMANDS.values())  # one each, no verb chain
    for command in EXAMPLES:
        result = await engine.perform(command, "test")
        assert isinstance(result, ActionResult) and result.goal == "fake:g", command
    assert "fake:g" not in engine.goals  # Forget, last, removed it


@pytest.mark.asyncio
async def test_the_socket_serves_every_command_through_the_door(paths: Paths) -> None:
    seen: list[tuple[Command, str]] = []

    async def perform(command: Command, origin: str) -> ActionResult:
        seen.append((command, origin))
        return ActionResult(command.goal, Outcome.UPDATED, "ok")

    async def refresh() -> None:
        return None

    async def restore(backup: str | None, empty: bool) -> dict[str, Any]:
        return {}

    server = ControlServer(paths, perform, HostOps(dict, refresh, restore))
    for command in EXAMPLES:
        reply = await server.handle({**command.to_json(), "origin": "cli"})
        assert reply["outcome"] == "updated"
    assert [c for c, _ in seen] == [command_from_json(c.to_json()) for c in EXAMPLES]
    assert {o for _, o in seen} == {"cli"}
    assert "error" in await server.handle({"op": "resume"})  # a bad request, not a traceback


@pytest.mark.asyncio
async def test_start_up_recovery_resumes_through_the_door(make_engine, fake) -> None:
    first = await make_engine(fake)
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.INTERRUPTED)
    await first.refresh()
    await first.drain()
    await first.stop()
    engine = await make_engine(fake)  # the next host, on the same store
    assert engine.goals["fake:g"].state is GoalState.RUNNING
    rows = [r for r in await engine.reads.history("fake:g") if r.event == "resume_requested"]
    assert rows and rows[-1].trigger is Trigger.STARTUP and rows[-1].origin == "startup"


@pytest.mark.asyncio
async def test_start_up_recovery_is_refused_in_safe_mode(make_engine, fake) -> None:
    engine = await make_engine(fake)
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.INTERRUPTED)
    await engine.refresh()
    await engine.drain()
    engine.safe_mode.problem = "the database is damaged"
    [result] = await engine.recovery.recover(lambda goal: True)
    assert result.outcome is Outcome.REFUSED and result.reason.startswith("safe mode")
    assert fake.resume_calls == []


@pytest.mark.asyncio
async def test_start_up_recovery_is_refused_on_a_lost_lease(make_engine, fake) -> None:
    engine = await make_engine(fake)
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.INTERRUPTED)
    await engine.refresh()
    await engine.drain()
    engine.lease_lost = "another Goalkeeper took over"
    [result] = await engine.recovery.recover(lambda goal: True)
    assert (result.outcome, result.reason) == (Outcome.REFUSED, "another Goalkeeper took over")
    assert fake.resume_calls == []
