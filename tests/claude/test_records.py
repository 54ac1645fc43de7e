"""Transcript records classified: prompts, responses with usage, limit stops, native notices."""

from __future__ import annotations

from datetime import UTC, datetime

from core.providers.claude.records import Kind, classify, title_of
from tests.claude.builders import assistant, limit_stop, system_notice, tool_result, user


def test_a_response_carries_its_usage_keyed_by_message_and_request() -> None:
    record = classify(assistant("msg_01ABC", "2026-07-07T13:40:11.204Z", request="req_011"))
    assert record.kind is Kind.ASSISTANT
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
    assert stop.kind is Kind.LIMIT_STOP
    assert stop.usage is None
    assert stop.text is not None and stop.text.startswith("You've hit your session limit")
    other = classify(limit_stop("API Error: 529 Overloaded", "2026-07-07T13:58:00Z",
                                error="overloaded"))
    assert other.kind is Kind.API_ERROR


def test_older_stops_without_error_field_are_recognised_by_their_wording() -> None:
    old = classify(limit_stop("Claude AI usage limit reached|1783440000", "2026-07-07T11:00:00Z",
                              error=None))
    assert old.kind is Kind.LIMIT_STOP
    unrelated = classify(limit_stop("API Error: Connection reset", "2026-07-07T11:00:00Z",
                                    error=None))
    assert unrelated.kind is Kind.API_ERROR


def test_the_approaching_limit_notice_is_not_a_stop() -> None:
    notice = classify(system_notice("Approaching your 5-hour usage limit — Claude will wrap up "
                                    "the current step.", "2026-07-07T13:00:00Z"))
    assert notice.kind is Kind.OTHER


def test_native_auto_continue_notices() -> None:
    waiting = classify(system_notice("Usage limit reached · continuing automatically at 7pm · "
                                     "esc or type to cancel", "2026-07-07T13:30:01Z"))
    assert waiting.kind is Kind.NATIVE_WAITING
    fired = classify(system_notice("Usage limit reset · continuing automatically",
                                   "2026-07-07T18:00:01Z"))
    assert fired.kind is Kind.NATIVE_FIRED
    assert fired.kind.activity and not waiting.kind.activity


def test_prompts_tool_results_and_commands() -> None:
    assert classify(user("Fix it", "2026-07-07T09:00:00Z")).kind is Kind.PROMPT
    assert classify(tool_result("2026-07-07T09:00:00Z")).kind is Kind.TOOL_RESULT
    command = user("<command-name>/usage</command-name>", "2026-07-07T09:00:00Z")
    assert classify(command).kind is Kind.OTHER  # checking /usage is not work
    meta = user("Caveat: the messages below...", "2026-07-07T09:00:00Z")
    meta["isMeta"] = True
    assert classify(meta).kind is Kind.OTHER


def test_titles_are_one_trimmed_line_of_bounded_length() -> None:
    assert title_of("  Migrate the test suite\n to pytest  ") == "Migrate the test suite to pytest"
    long = title_of("word " * 100)
    assert len(long) == 120 and long.endswith("…")


def test_unknown_shapes_are_other() -> None:
    assert classify({"type": "summary", "summary": "x"}).kind is Kind.OTHER
    assert classify({"type": "assistant", "timestamp": "not a time"}).at is None
