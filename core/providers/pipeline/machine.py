"""The run state machine as data: the seed's diagram, generalised to any number of stages.

``idle → triggered → source_check → fetching → aggregating | partial_aggregating → filtering →
delivering → completed``; ``blocked`` is the failure exit of every state that can fail, and
``blocked → idle`` once the alert is out (the run keeps its checkpoint and waits for the next
trigger: a resume continues it). ``completed`` is final for a run.

Stages map onto the phases by position: the first stage is ``aggregating`` (or
``partial_aggregating`` when some sources are missing), the last of two or more is
``delivering``, the ones between are ``filtering``. A one-stage pipeline goes from its only stage
straight to ``completed``.

Mapping onto the core goal states (:func:`goal_state_for`): a run at work is a ``running`` goal; a
run waiting for quota is a goal ``paused`` for ``quota``; a blocked run is a goal ``paused`` for
``auth`` or ``error`` (needs attention, never auto-resumed); a completed run leaves the goal
``idle`` until its next trigger.

==================  ===============================  ==================  =====================
state               entry condition                  success exit        failure exit
==================  ===============================  ==================  =====================
idle                no run in progress / alerted     triggered           —
triggered           schedule, ``run`` or a resume    source_check        —
source_check        run started                      fetching            blocked (too few
                                                                         sources usable)
fetching            enough sources usable            aggregating /       blocked (too few
                                                     partial_aggregating sources answered)
aggregating …       sources fetched                  next stage phase    blocked (stage failed
delivering                                           / completed         or too few items)
completed           last stage succeeded             —                   —
blocked             any failure above                idle (after alert)  —
==================  ===============================  ==================  =====================
"""

from __future__ import annotations

from enum import StrEnum

from core.models import GoalState


class RunState(StrEnum):
    IDLE = "idle"
    TRIGGERED = "triggered"
    SOURCE_CHECK = "source_check"
    FETCHING = "fetching"
    AGGREGATING = "aggregating"
    PARTIAL_AGGREGATING = "partial_aggregating"
    FILTERING = "filtering"
    DELIVERING = "delivering"
    COMPLETED = "completed"
    BLOCKED = "blocked"


STAGE_STATES = frozenset({RunState.AGGREGATING, RunState.PARTIAL_AGGREGATING,
                          RunState.FILTERING, RunState.DELIVERING})


class RunEvent(StrEnum):
    TRIGGER = "trigger"  # schedule, `goalkeeper run`, or a resume of a blocked run
    START = "start"
    SOURCES_READY = "sources_ready"
    ALL_FETCHED = "all_fetched"
    SOME_FETCHED = "some_fetched"
    ENTER_FILTERING = "enter_filtering"
    ENTER_DELIVERING = "enter_delivering"
    FINISH = "finish"
    FAIL = "fail"
    ALERTED = "alerted"


R, E = RunState, RunEvent

RUN_TRANSITIONS: dict[tuple[RunState, RunEvent], RunState] = {
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
    (R.FILTERING, E.ENTER_FILTERING): R.FILTERING,  # the next middle stage
    (R.FILTERING, E.ENTER_DELIVERING): R.DELIVERING,
    (R.FILTERING, E.FAIL): R.BLOCKED,
    (R.DELIVERING, E.FINISH): R.COMPLETED,
    (R.DELIVERING, E.FAIL): R.BLOCKED,
    (R.BLOCKED, E.ALERTED): R.IDLE,
}


class IllegalRunTransition(Exception):
    """A move the table does not allow: a bug, never user input."""

    def __init__(self, run_id: str, state: RunState, event: RunEvent) -> None:
        super().__init__(f"run {run_id}: {event.value} is not allowed from {state.value}")
        self.state = state
        self.event = event


def next_run_state(run_id: str, state: RunState, event: RunEvent) -> RunState:
    try:
        return RUN_TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalRunTransition(run_id, state, event) from None


def stage_phase(index: int, count: int, degraded: bool) -> RunState:
    """The phase stage number ``index`` (0-based) of ``count`` runs in."""
    if index == 0:
        return RunState.PARTIAL_AGGREGATING if degraded else RunState.AGGREGATING
    if index == count - 1:
        return RunState.DELIVERING
    return RunState.FILTERING


def enter_event(phase: RunState) -> RunEvent:
    """The event that moves a run from one stage phase into ``phase`` (a later stage)."""
    if phase is RunState.FILTERING:
        return RunEvent.ENTER_FILTERING
    if phase is RunState.DELIVERING:
        return RunEvent.ENTER_DELIVERING
    raise ValueError(f"{phase.value} is not entered from another stage")


def goal_state_for(state: RunState, waiting_for_quota: bool = False) -> GoalState:
    """The core goal state a run in ``state`` shows as (blocked and quota waits are paused)."""
    if state is RunState.COMPLETED:
        return GoalState.IDLE
    if state is RunState.BLOCKED or waiting_for_quota:
        return GoalState.PAUSED
    if state is RunState.IDLE:
        return GoalState.PAUSED  # an alerted, unfinished run waits for a human
    return GoalState.RUNNING
