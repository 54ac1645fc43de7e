"""The goal state machine: every (state, event) pair is either allowed with its target or raises."""

from __future__ import annotations

import itertools

import pytest

from core.goals.machine import TRANSITIONS, GoalEvent, IllegalTransition, allowed, next_state
from core.models import GoalState as S

EXPECTED = {
    (S.IDLE, GoalEvent.START): S.RUNNING,
    (S.IDLE, GoalEvent.PAUSE): S.PAUSED,
    (S.IDLE, GoalEvent.COMPLETE): S.DONE,
    (S.IDLE, GoalEvent.CANCEL): S.CANCELLED,
    (S.IDLE, GoalEvent.FAIL): S.FAILED,
    (S.IDLE, GoalEvent.OBSERVE_RUNNING): S.RUNNING,
    (S.RUNNING, GoalEvent.PAUSE): S.PAUSED,
    (S.RUNNING, GoalEvent.COMPLETE): S.DONE,
    (S.RUNNING, GoalEvent.CANCEL): S.CANCELLED,
    (S.RUNNING, GoalEvent.FAIL): S.FAILED,
    (S.RUNNING, GoalEvent.REST): S.IDLE,
    (S.PAUSED, GoalEvent.PAUSE): S.PAUSED,
    (S.PAUSED, GoalEvent.CLAIM_RESUME): S.RESUMING,
    (S.PAUSED, GoalEvent.COMPLETE): S.DONE,
    (S.PAUSED, GoalEvent.CANCEL): S.CANCELLED,
    (S.PAUSED, GoalEvent.FAIL): S.FAILED,
    (S.PAUSED, GoalEvent.OBSERVE_RUNNING): S.RUNNING,
    (S.RESUMING, GoalEvent.RESUME_SUCCEEDED): S.RUNNING,
    (S.RESUMING, GoalEvent.RESUME_FAILED): S.PAUSED,
    (S.RESUMING, GoalEvent.PAUSE): S.PAUSED,
    (S.RESUMING, GoalEvent.COMPLETE): S.DONE,
    (S.RESUMING, GoalEvent.CANCEL): S.CANCELLED,
    (S.RESUMING, GoalEvent.FAIL): S.FAILED,
    (S.FAILED, GoalEvent.CANCEL): S.CANCELLED,
    (S.FAILED, GoalEvent.RESET): S.IDLE,
    (S.FAILED, GoalEvent.OBSERVE_RUNNING): S.RUNNING,
}


@pytest.mark.parametrize(("state", "event"), list(itertools.product(S, GoalEvent)))
def test_every_pair_is_allowed_with_its_target_or_rejected(state: S, event: GoalEvent) -> None:
    if (state, event) in EXPECTED:
        assert next_state("g", state, event) is EXPECTED[(state, event)]
        assert allowed(state, event)
    else:
        with pytest.raises(IllegalTransition, match=f"{event.value} is not allowed from"):
            next_state("g", state, event)
        assert not allowed(state, event)


def test_the_table_is_exactly_the_expected_one() -> None:
    assert TRANSITIONS == EXPECTED


@pytest.mark.parametrize("terminal", [S.DONE, S.CANCELLED])
def test_terminal_states_have_no_way_out(terminal: S) -> None:
    assert terminal.terminal
    assert not [e for e in GoalEvent if allowed(terminal, e)]


def test_only_the_claim_and_an_observation_leave_paused_for_work() -> None:
    """Nothing but the resume entry point's claim starts a paused goal (observations reflect
    that the agent was resumed elsewhere)."""
    into_work = {e for e in GoalEvent if allowed(S.PAUSED, e)
                 and next_state("g", S.PAUSED, e) in (S.RUNNING, S.RESUMING)}
    assert into_work == {GoalEvent.CLAIM_RESUME, GoalEvent.OBSERVE_RUNNING}
