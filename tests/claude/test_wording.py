"""Claude Code's auto-continue notices, matched by the shape of the phrase (B0.1): every known
variant, with the texts the real CLIs write (the TUI against the mock API, and the copy tables
and messages of the 2.1.328 and 2.1.332 bundles)."""

from __future__ import annotations

import pytest

from core.providers.claude.wording import is_armed_notice, is_chosen_wait, native_kind

#: written by the real TUIs into the transcript (tests/real/test_claude_tui.py)
ARMED_2_1_328 = "Usage limit reached · continuing automatically at 2:48am · esc to cancel"
ARMED_2_1_332 = "Usage limit reached · set to continue automatically at 2:50am"
CANCELLED_2_1_328 = "Automatic continue cancelled · /rate-limit-options to re-arm"
CANCELLED_2_1_332 = "Automatic continue cancelled · /rate-limit-options to wait again"
#: the copy tables' other entries ({when} is "at 9:35pm", "shortly" or "when …")
REARMED_2_1_328 = "Usage limit reached again · continuing automatically shortly · esc to cancel"
REARMED_2_1_332 = "Usage limit reached again · set to continue automatically shortly"
CHOSEN_2_1_328 = ("Claude Code will continue automatically at Dec 5, 8:59am. Keep this session "
                  "open; it may still pause for permission prompts. Press esc to cancel the wait.")
CHOSEN_2_1_332 = ("Claude Code will continue automatically at Dec 5, 8:59am. Keep this session "
                  "open; it may still pause for permission prompts.")


@pytest.mark.parametrize("text", [ARMED_2_1_328, ARMED_2_1_332, REARMED_2_1_328,
                                  REARMED_2_1_332, CHOSEN_2_1_328, CHOSEN_2_1_332,
                                  "Usage limit reached · set to continue automatically when "
                                  "your usage limit resets"])
def test_every_armed_wording_is_a_wait(text: str) -> None:
    assert native_kind(text) == "waiting"
    assert is_armed_notice(text)


@pytest.mark.parametrize("text", [
    # a server copy change that keeps the phrase's shape is still read
    "Usage limit hit · set to continue automatically at 9:35pm · keep this open",
    "Limit reached — continuing automatically at 21:35",
])
def test_the_shape_not_the_sentence_decides(text: str) -> None:
    assert native_kind(text) == "waiting"


@pytest.mark.parametrize("text", [CANCELLED_2_1_328, CANCELLED_2_1_332])
def test_both_esc_wordings_stand_down(text: str) -> None:
    assert native_kind(text) == "cancelled"
    assert not is_armed_notice(text)


def test_only_a_wait_chosen_in_rate_limit_options_is_chosen() -> None:
    assert is_chosen_wait(CHOSEN_2_1_328) and is_chosen_wait(CHOSEN_2_1_332)
    assert not is_chosen_wait(ARMED_2_1_328) and not is_chosen_wait(ARMED_2_1_332)


@pytest.mark.parametrize("text", [
    "Usage limit reset · Continuing automatically",
    # the wait fires early: the limit lifted before its stated reset (a free or banked reset)
    "Usage limit available again · continuing now",
    # /low-priority, or "Continue now at lower priority" at a 5-hour limit (2.1.332's bundle)
    "Continuing now at lower priority until your limit resets at 3:00pm. Your weekly limit still "
    "applies, and responses may pause while waiting for spare capacity. Run /low-priority to stop.",
    "Lower-priority mode is back on until your limit resets. Your weekly limit still applies, "
    "and responses may pause while waiting for spare capacity. Run /low-priority to stop.",
])
def test_claude_going_on_by_itself_is_fired(text: str) -> None:
    assert native_kind(text) == "fired"


@pytest.mark.parametrize("text", [
    "Continuing automatically at 9:35pm · Esc to cancel",  # the status line, not a record
    "Approaching your 5-hour usage limit — Claude will wrap up the current step.",
    "/low-priority to continue now at lower priority · uses your weekly limit",  # an offer
    "Goal paused · usage limit reached · continues automatically when it resets",
])
def test_offers_and_other_notices_are_not_a_continuation(text: str) -> None:
    assert native_kind(text) in (None, "waiting")
    assert native_kind(text) != "fired"
