"""The run state machine: every (state, event) pair is allowed with its target or refused."""

from __future__ import annotations

import itertools

import pytest

from core.models import GoalState
from core.providers.pipeline.machine import (
    RUN_TRANSITIONS,
    IllegalRunTransition,
    RunEvent,
    RunState,
    enter_event,
    goal_state_for,
    next_run_state,
    stage_phase,
)

R, E = RunState, RunEvent

EXPECTED = {
    (R.IDLE, E.TRIGGER): R.TRIGGERED,
    (R.TRIGGERED, E.START): R.SOURCE_CHECK,
    (R.SOURCE_CHECK, E.SOURCES_READY): R.FETCHING,
    (R.SOURCE_CHECK, E.FAIL): R.BLOCKED,
    (R.FETCHING, E.ALL_FETCHED): R.AGGREGATING,
    (R.FETCHING, E.SOME_FETCHED): R.PARTIAL_AGGREGATING,
    (R.FETCHING, E.FAIL): R.BLOCKED,
    (R.AGGREGATING, E.ENTER_FILTERING): R.FILTERING,
    (R.AGGREGATING, E.ENTER_DELIVERING): R.DELIVERING,
    (R.AGGREGATING, E.FINISH): R.COMPLETED,
    (R.AGGREGATING, E.FAIL): R.BLOCKED,
    (R.PARTIAL_AGGREGATING, E.ENTER_FILTERING): R.FILTERING,
    (R.PARTIAL_AGGREGATING, E.ENTER_DELIVERING): R.DELIVERING,
    (R.PARTIAL_AGGREGATING, E.FINISH): R.COMPLETED,
    (R.PARTIAL_AGGREGATING, E.FAIL): R.BLOCKED,
    (R.FILTERING, E.ENTER_FILTERING): R.FILTERING,
    (R.FILTERING, E.ENTER_DELIVERING): R.DELIVERING,
    (R.FILTERING, E.FAIL): R.BLOCKED,
    (R.DELIVERING, E.FINISH): R.COMPLETED,
    (R.DELIVERING, E.FAIL): R.BLOCKED,
    (R.BLOCKED, E.ALERTED): R.IDLE,
}


@pytest.mark.parametrize("state", list(RunState))
@pytest.mark.parametrize("event", list(RunEvent))
def test_every_pair(state: RunState, event: RunEvent) -> None:
    if (state, event) in EXPECTED:
        assert next_run_state("r", state, event) is EXPECTED[(state, event)]
    else:
        with pytest.raises(IllegalRunTransition):
            next_run_state("r", state, event)


def test_the_table_is_exactly_the_expected_one() -> None:
    assert RUN_TRANSITIONS == EXPECTED


def test_every_failing_state_has_a_failure_exit_to_blocked() -> None:
    failing = {R.SOURCE_CHECK, R.FETCHING, R.AGGREGATING, R.PARTIAL_AGGREGATING, R.FILTERING,
               R.DELIVERING}
    assert {s for (s, e), t in RUN_TRANSITIONS.items() if e is E.FAIL} == failing
    assert all(RUN_TRANSITIONS[(s, E.FAIL)] is R.BLOCKED for s in failing)


def test_completed_is_final() -> None:
    assert not [e for (s, e) in RUN_TRANSITIONS if s is R.COMPLETED]


@pytest.mark.parametrize(("count", "degraded", "phases"), [
    (1, False, [R.AGGREGATING]),
    (2, True, [R.PARTIAL_AGGREGATING, R.DELIVERING]),
    (3, False, [R.AGGREGATING, R.FILTERING, R.DELIVERING]),
    (4, False, [R.AGGREGATING, R.FILTERING, R.FILTERING, R.DELIVERING]),
])
def test_stages_map_onto_phases_by_position(count: int, degraded: bool,
                                            phases: list[RunState]) -> None:
    assert [stage_phase(i, count, degraded) for i in range(count)] == phases
    for before, after in itertools.pairwise(phases):
        assert next_run_state("r", before, enter_event(after)) is after


def test_runs_map_onto_goal_states() -> None:
    assert goal_state_for(R.FETCHING) is GoalState.RUNNING
    assert goal_state_for(R.DELIVERING, waiting_for_quota=True) is GoalState.PAUSED
    assert goal_state_for(R.BLOCKED) is GoalState.PAUSED
    assert goal_state_for(R.COMPLETED) is GoalState.IDLE
