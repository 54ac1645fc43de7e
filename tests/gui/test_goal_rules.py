"""Which actions are legal, how goals are filtered, and what the tray icon summarises."""

from __future__ import annotations

import pytest

from core.models import GoalState, PauseReason
from gui import goal_rules as rules
from gui.goal_rules import Aggregate, StateFilter
from tests.gui.factories import goal, quota_paused

S = GoalState


@pytest.mark.parametrize(("state", "reason", "expected"), [
    (S.IDLE, None, "start pause cancel auto"),
    (S.RUNNING, None, "pause cancel auto"),
    (S.RESUMING, PauseReason.QUOTA, "pause cancel auto"),
    (S.PAUSED, PauseReason.QUOTA, "resume pause cancel auto"),
    (S.PAUSED, PauseReason.USER, "resume cancel auto"),
    (S.PAUSED, PauseReason.AUTH, "resume pause cancel auto"),
    (S.FAILED, None, "cancel auto"),
    (S.DONE, None, ""),
    (S.CANCELLED, None, ""),
])
def test_legal_actions_per_state(state: GoalState, reason: PauseReason | None,
                                 expected: str) -> None:
    g = goal(state=state, pause_reason=reason)
    legal = [name for name, check in (("start", rules.can_start), ("resume", rules.can_resume),
                                      ("pause", rules.can_pause), ("cancel", rules.can_cancel),
                                      ("auto", rules.can_toggle_auto_resume)) if check(g)]
    assert " ".join(legal) == expected


def test_needs_attention() -> None:
    assert rules.needs_attention(goal(state=S.FAILED))
    assert rules.needs_attention(goal(state=S.PAUSED, pause_reason=PauseReason.AUTH))
    assert rules.needs_attention(quota_paused(in_seconds=None,
                                              auto_resume_note="attempt cap reached (3/3)"))
    assert not rules.needs_attention(quota_paused())
    assert not rules.needs_attention(goal(state=S.PAUSED, pause_reason=PauseReason.USER))


def test_state_filters() -> None:
    goals = {
        "run": goal("a:run"), "wait": quota_paused("a:wait"),
        "user": goal("a:user", S.PAUSED, pause_reason=PauseReason.USER),
        "fail": goal("a:fail", S.FAILED), "done": goal("a:done", S.DONE),
        "idle": goal("a:idle", S.IDLE),
    }

    def shown(wanted: StateFilter) -> list[str]:
        return [k for k, g in goals.items() if rules.matches_state(g, wanted)]

    assert shown(StateFilter.ALL) == list(goals)
    assert shown(StateFilter.ACTIVE) == ["run", "wait", "user", "fail", "idle"]
    assert shown(StateFilter.RUNNING) == ["run"]
    assert shown(StateFilter.WAITING) == ["wait"]
    assert shown(StateFilter.PAUSED) == ["wait", "user"]
    assert shown(StateFilter.ATTENTION) == ["fail"]
    assert shown(StateFilter.IDLE) == ["idle"]
    assert shown(StateFilter.FINISHED) == ["done"]


def test_text_filter_matches_every_word_anywhere() -> None:
    g = goal("codex:42", S.PAUSED, title="Refactor Parser", pause_reason=PauseReason.QUOTA,
             pause_detail="5-hour limit")
    assert rules.matches_text(g, "")
    assert rules.matches_text(g, "parser CODEX")
    assert rules.matches_text(g, "5-hour")
    assert not rules.matches_text(g, "parser claude")


def test_summary_prefers_the_most_urgent_state() -> None:
    assert rules.summarise([]).state is Aggregate.IDLE
    assert rules.summarise([goal(state=S.DONE), goal(state=S.IDLE)]).state is Aggregate.IDLE
    assert rules.summarise([goal()]).state is Aggregate.RUNNING
    waiting = rules.summarise([goal(), quota_paused("p:2", 60), quota_paused("p:3", 30)])
    assert waiting.state is Aggregate.WAITING
    assert (waiting.running, waiting.waiting, waiting.attention) == (1, 2, 0)
    assert waiting.next_resume_at == quota_paused("p:3", 30).next_resume_at
    alarm = rules.summarise([goal(), quota_paused(), goal("p:9", S.FAILED)])
    assert alarm.state is Aggregate.ATTENTION and alarm.attention == 1
