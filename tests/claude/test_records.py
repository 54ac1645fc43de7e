"""Transcript records classified: prompts, responses with usage, limit stops, native notices."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.providers.claude.records import GoalStatus, LimitInfo, RecordKind, classify, title_of
from tests.claude.builders import assistant, limit_stop, system_notice, tool_result, user


def test_a_response_carries_its_usage_keyed_by_message_and_request() -> None:
    record = classify(assistant("msg_01ABC", "2026-07-07T13:40:11.204Z", request="req_011"))
    assert record.kind is RecordKind.ASSISTANT
    assert record.usage is not None
    assert record.usage.key == "msg_01ABC:req_011"
    assert (record.usage.input_tokens, record.usage.output_tokens,
            record.usage.cache_creation_tokens, record.usage.cache_read_tokens) == (
        12, 310, 1850, 40210)
    assert record.at == datetime(2026, 7, 7, 13, 40, 11, 204000, tzinfo=UTC)
    assert record.cwd == "/home/dev/myrepo" and record.branch == "main"


def test_a_limit_stop_needs_the_api_error_flag_and_rate_limit() -> None:
    stop = classify(limit_stop("You've hit your session limit · resets 6:40pm (Europe/Berlin)",
                               "2026-07-07T13:58:00.120Z"))
    assert stop.kind is RecordKind.LIMIT_STOP
    assert stop.usage is None
    assert stop.text is not None and stop.text.startswith("You've hit your session limit")
    other = classify(limit_stop("API Error: 529 Overloaded", "2026-07-07T13:58:00Z",
                                error="overloaded"))
    assert other.kind is RecordKind.API_ERROR


def test_older_stops_without_error_field_are_recognised_by_their_wording() -> None:
    old = classify(limit_stop("Claude AI usage limit reached|1783440000", "2026-07-07T11:00:00Z",
                              error=None))
    assert old.kind is RecordKind.LIMIT_STOP
    unrelated = classify(limit_stop("API Error: Connection reset", "2026-07-07T11:00:00Z",
                                    error=None))
    assert unrelated.kind is RecordKind.API_ERROR


def test_the_approaching_limit_notice_is_not_a_stop() -> None:
    notice = classify(system_notice("Approaching your 5-hour usage limit — Claude will wrap up "
                                    "the current step.", "2026-07-07T13:00:00Z"))
    assert notice.kind is RecordKind.OTHER


def test_native_auto_continue_notices() -> None:
    waiting = classify(system_notice("Usage limit reached · continuing automatically at 7pm · "
                                     "esc or type to cancel", "2026-07-07T13:30:01Z"))
    assert waiting.kind is RecordKind.NATIVE_WAITING
    fired = classify(system_notice("Usage limit reset · continuing automatically",
                                   "2026-07-07T18:00:01Z"))
    assert fired.kind is RecordKind.NATIVE_FIRED
    assert fired.kind.activity and not waiting.kind.activity


def test_prompts_tool_results_and_commands() -> None:
    assert classify(user("Fix it", "2026-07-07T09:00:00Z")).kind is RecordKind.PROMPT
    assert classify(tool_result("2026-07-07T09:00:00Z")).kind is RecordKind.TOOL_RESULT
    command = user("<command-name>/usage</command-name>", "2026-07-07T09:00:00Z")
    assert classify(command).kind is RecordKind.OTHER  # checking /usage is not work
    meta = user("Caveat: the messages below...", "2026-07-07T09:00:00Z")
    meta["isMeta"] = True
    assert classify(meta).kind is RecordKind.OTHER


def test_titles_are_one_trimmed_line_of_bounded_length() -> None:
    assert title_of("  Migrate the test suite\n to pytest  ") == "Migrate the test suite to pytest"
    long = title_of("word " * 100)
    assert len(long) == 120 and long.endswith("…")


def test_unknown_shapes_are_other() -> None:
    assert classify({"type": "summary", "summary": "x"}).kind is RecordKind.OTHER
    assert classify({"type": "assistant", "timestamp": "not a time"}).at is None


def _real_stop(**fields: object) -> dict[str, object]:
    """A 2.1.328 limit-stop record (the shape the real CLI writes, see B0)."""
    record = limit_stop("You've hit your 5-hour limit · resets 11:33pm (UTC)",
                        "2026-12-01T21:33:11.991Z")
    record.update(fields)
    return record


def test_a_2_1_328_usage_limit_is_read_by_its_structured_fields() -> None:
    info = {"status": "rejected", "resetsAt": 1796168008, "rateLimitType": "seven_day_opus",
            "overageStatus": "rejected", "isUsingOverage": False}
    stop = classify(_real_stop(apiError="usage_limit_reached",
                               apiErrorParams={"rate_limit_info": info}, quotaLimits=info,
                               entrypoint="sdk-cli"))
    assert stop.kind is RecordKind.LIMIT_STOP
    assert stop.limit == LimitInfo("seven_day_opus", 1796168008.0, False)
    assert stop.entrypoint == "sdk-cli"
    # quotaLimits alone is enough
    assert classify(_real_stop(quotaLimits=info)).limit == LimitInfo("seven_day_opus",
                                                                     1796168008.0, False)


@pytest.mark.parametrize(("text", "transient"), [
    ("API Error: Server is temporarily limiting requests (not your usage limit) · Rate limit "
     "exceeded", True),
    ("API Error: Request rejected (429) · Rate limit exceeded", False),
    ("API Error: Rate limit reached", None),
])
def test_transient_429s_are_not_limit_stops(text: str, transient: bool | None) -> None:
    fields: dict[str, object] = {"apiErrorType": "rate_limit_error"}
    if transient is not None:
        fields["apiErrorIsTransient"] = transient
    record = limit_stop(text, "2026-12-01T21:33:25.774Z")
    record.update(fields)
    assert classify(record).kind is RecordKind.TRANSIENT


def test_every_way_claude_stands_its_wait_down_is_a_cancel() -> None:
    for text in ("Automatic continue cancelled · /rate-limit-options to re-arm",
                 "Automatic continue cancelled · Claude Code exited during the wait, so the task "
                 "will not resume on its own when the usage limit resets",
                 "Automatic continue stopped · the usage limit now resets more than 24 hours out",
                 "Automatic continue was turned off · this task will not resume on its own",
                 "Automatic continue did not run · the continuation was blocked",
                 "Usage limit has reset · Press enter to continue",
                 "Workflow paused · your login changed or ended · a prompt continues it"):
        assert classify(system_notice(text, "2026-12-01T21:36:14Z")).kind is (
            RecordKind.NATIVE_CANCELLED), text
    for text in ("Usage limit reached · continuing automatically at 11:36pm · esc to cancel",
                 "Usage limit reached again · continuing automatically shortly · esc to cancel"):
        record = classify(system_notice(text, "2026-12-01T21:36:02Z"))
        assert record.kind is RecordKind.NATIVE_WAITING
    for text in ("Usage limit reset · Continuing automatically",
                 "Usage limit available again · continuing now"):
        assert classify(system_notice(text, "2026-12-01T23:36:02Z")).kind is RecordKind.NATIVE_FIRED


def test_a_wait_chosen_in_rate_limit_options_is_armed() -> None:
    chosen = user("<local-command-stdout>Claude Code will continue automatically at Dec 5, "
                  "8:59am. Keep this session open; it may still pause for permission prompts. "
                  "Press esc to cancel the wait.</local-command-stdout>", "2026-12-01T21:39:50Z")
    assert classify(chosen).kind is RecordKind.NATIVE_WAITING


def test_claudes_own_goal_status_attachments() -> None:
    record = {"type": "attachment", "timestamp": "2026-12-01T21:40:00Z", "sessionId": "s",
              "attachment": {"type": "goal_status", "met": True, "condition": "tests pass",
                             "reason": "they do"}}
    goal = classify(record)
    assert goal.kind is RecordKind.GOAL_STATUS
    assert goal.goal == GoalStatus("tests pass", True, False, "they do")
    record["attachment"] = {"type": "goal_status", "met": False, "failed": True,
                            "condition": "tests pass"}
    assert classify(record).goal == GoalStatus("tests pass", False, True)
