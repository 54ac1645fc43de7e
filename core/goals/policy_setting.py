"""Setting one of a goal's own resume policies, as a decision the store runs in a transaction.

``goalkeeper goal set GOAL KEY VALUE`` and the details dialog both end here (through
:meth:`core.engine.Engine.set_goal_policy`): the value is checked by
:meth:`~core.policies.goal_policy.GoalPolicy.with_value`, the change recorded in the history, and a
goal waiting for its reset whose allowed hours changed is planned again.
"""

from __future__ import annotations

from core.commands import ActionResult
from core.goals.auto_resume import WAITS_FOR_RESET
from core.goals.decisions import Decide, answer, request_row, result
from core.goals.intake import IntakeContext, schedule
from core.i18n import N_
from core.models import Goal, GoalState, HistoryEvent, Outcome
from core.policies.goal_policy import PolicyValueError
from core.store import Mutation

EVENT = HistoryEvent.GOAL_POLICY_CHANGED


def decide_goal_policy(goal_id: str, key: str, value: str, ctx: IntakeContext,
                       origin: str) -> Decide:
    def decide(current: Goal | None) -> Mutation[ActionResult]:
        if current is None:
            return Mutation(None, result(goal_id, Outcome.UNKNOWN_GOAL, N_("unknown goal")))
        try:
            policy = current.policy.with_value(key, value)
        except PolicyValueError as exc:
            return answer(goal_id, current, EVENT, ctx.now, origin, Outcome.REFUSED, str(exc))
        shown = policy.value_text(key) or N_("(not set)")
        if policy == current.policy:
            return Mutation(None, result(goal_id, Outcome.UNCHANGED,
                                         N_("{key} is already {shown}").format(key=key,
                                                                               shown=shown),
                                         current.state, current.next_resume_at))
        new = current.model_copy(update={"policy": policy, "updated_at": ctx.now})
        rows = [request_row(goal_id, EVENT, ctx.now, origin, Outcome.UPDATED, f"{key} = {shown}")]
        if key == "auto_resume_hours" and new.state is GoalState.PAUSED and (
                new.pause_reason in WAITS_FOR_RESET and new.next_resume_at is not None):
            new, row = schedule(new, new.resets_at, ctx)
            rows.append(row)
        return Mutation(new, result(goal_id, Outcome.UPDATED, f"{key} = {shown}", new.state,
                                    new.next_resume_at), rows)

    return decide
