"""The byte scanner: the same totals as decoding every line, in a fraction of the work."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from core.providers.claude.ledger import BLOCK_SECONDS, UsageLedger
from core.providers.claude.records import RecordKind
from core.providers.claude.scan import FileFacts, LineSink, decode_lines, epoch_of, scan_bytes
from tests.claude.builders import assistant, dumps, limit_stop, tool_result, user

T0 = datetime(2026, 7, 7, 9, 0, tzinfo=UTC)


def sink(ledger: UsageLedger | None = None) -> LineSink:
    return LineSink(ledger if ledger is not None else UsageLedger(), FileFacts(), "s1")


def scanned(data: bytes) -> tuple[LineSink, int]:
    s = sink()
    return s, scan_bytes(data, s)


def decoded(data: bytes) -> LineSink:
    s = sink()
    s.from_start = True
    decode_lines(data, 0, data.rfind(b"\n") + 1, s)
    return s


def test_duplicate_lines_of_one_response_count_once() -> None:
    lines = [assistant("msg_a", T0, request="req_a"), assistant("msg_a", T0, request="req_a"),
             assistant("msg_b", T0 + timedelta(seconds=5), request="req_b", usage=(1, 2, 3, 4))]
    s, consumed = scanned("".join(map(dumps, lines)).encode())
    totals = s.ledger.totals()
    assert totals["responses"] == 2
    assert totals["input_tokens"] == 13 and totals["output_tokens"] == 312
    assert totals["total_tokens"] == 12 + 310 + 1850 + 40210 + 1 + 2 + 3 + 4
    assert consumed == len("".join(map(dumps, lines)).encode())


def test_the_same_response_in_two_files_counts_once() -> None:
    ledger = UsageLedger()
    data = dumps(assistant("msg_a", T0, request="req_a")).encode()
    scan_bytes(data, sink(ledger))
    scan_bytes(data, sink(ledger))
    assert len(ledger) == 1


def test_a_partial_last_line_is_left_for_the_next_read() -> None:
    full = dumps(assistant("msg_a", T0)).encode()
    partial = dumps(assistant("msg_b", T0)).encode()[:80]
    s, consumed = scanned(full + partial)
    assert consumed == len(full)
    assert len(s.ledger) == 1


def test_usage_nested_in_tool_results_and_progress_records_is_not_counted() -> None:
    task_result = tool_result(T0)
    task_result["toolUseResult"] = {"totalTokens": 999, "usage": {
        "input_tokens": 900, "output_tokens": 99, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0}}
    inner = assistant("msg_inner", T0, request="req_inner")
    progress = {"type": "progress", "timestamp": "2026-07-07T09:00:00.000Z",
                "data": {"message": {"type": "assistant", "message": inner["message"],
                                     "requestId": "req_inner"}, "type": "agent_progress"}}
    data = (dumps(task_result) + json.dumps(progress) + "\n").encode()
    s, _ = scanned(data)
    assert len(s.ledger) == 0


def _shuffled(record: dict[str, object], rng: random.Random) -> dict[str, object]:
    keys = list(record)
    rng.shuffle(keys)
    out = {k: record[k] for k in keys}
    message = out.get("message")
    if isinstance(message, dict) and rng.random() < 0.5:
        mkeys = list(message)
        rng.shuffle(mkeys)
        out["message"] = {k: message[k] for k in mkeys}
    return out


def test_the_fast_path_agrees_with_decoding_every_line_in_any_key_order() -> None:
    rng = random.Random(20261129)
    records = []
    for i in range(300):
        at = T0 + timedelta(seconds=37 * i)
        usage = (rng.randint(0, 50), rng.randint(1, 900), rng.randint(0, 5000),
                 rng.randint(0, 90000))
        record = assistant(f"msg_{i // 2}", at, request=f"req_{i // 2}", usage=usage,
                           model=rng.choice(["claude-sonnet-4-5", "claude-opus-4-5"]))
        records.append(_shuffled(record, rng) if rng.random() < 0.4 else record)
        if rng.random() < 0.2:
            records.append(user("next", at))
        if rng.random() < 0.05:
            records.append(limit_stop("You've hit your session limit · resets 2pm (UTC)", at))
    data = "".join(map(dumps, records)).encode()
    fast, slow = scanned(data)[0], decoded(data)
    assert fast.ledger.totals() == slow.ledger.totals()
    assert fast.ledger.models == slow.ledger.models
    assert set(fast.ledger.stops) == set(slow.ledger.stops)
    assert [b.total_tokens for b in fast.ledger.blocks()] == [
        b.total_tokens for b in slow.ledger.blocks()]


def test_the_last_stop_and_whether_the_session_went_on() -> None:
    records = [user("go", T0),
               limit_stop("You've hit your session limit · resets 2pm (UTC)", T0 + timedelta(1)),
               user("continue", T0 + timedelta(1, 60)),
               limit_stop("You've hit your session limit · resets 7pm (UTC)", T0 + timedelta(2))]
    s, _ = scanned("".join(map(dumps, records)).encode())
    stops = s.facts.stops
    assert stops.stop is not None and stops.stop.at == T0 + timedelta(2)
    assert stops.activity_at is None
    s2, _ = scanned("".join(map(dumps, [*records, assistant("msg_z", T0 + timedelta(3))]))
                    .encode())
    assert s2.facts.stops.activity_at == T0 + timedelta(3)
    assert s2.facts.last_at == T0 + timedelta(3)


def test_an_append_after_a_stop_is_checked_for_activity() -> None:
    facts_sink = sink()
    first = dumps(limit_stop("You've hit your session limit · resets 2pm (UTC)", T0)).encode()
    scan_bytes(first, facts_sink)
    assert facts_sink.facts.stops.stop is not None
    scan_bytes(dumps(assistant("msg_after", T0 + timedelta(hours=6))).encode(), facts_sink)
    assert facts_sink.facts.stops.activity_at == T0 + timedelta(hours=6)


def test_malformed_lines_are_counted_by_reason_when_decoded() -> None:
    data = (dumps(user("hi", T0)) + "{not json\n[1, 2]\n" + "\xff".encode("latin-1").decode(
        "latin-1") + "\n").encode("latin-1")
    s = decoded(data)
    assert s.facts.malformed.counts["invalid JSON"] >= 1
    assert s.facts.malformed.counts["not a JSON object"] == 1
    assert s.facts.first_prompt == "hi"


def test_blocks_follow_the_five_hour_rule() -> None:
    ledger = UsageLedger()
    base = datetime(2026, 7, 7, 9, 17, tzinfo=UTC).timestamp()
    for i, offset in enumerate([0, 3600, 4 * 3600 + 2000, 5 * 3600 + 10, 11 * 3600 + 5]):
        ledger.add(f"k{i}".encode(), base + offset, "m", (1, 1, 1, 1))
    blocks = ledger.blocks()
    assert [b.start for b in blocks] == [
        datetime(2026, 7, 7, 9, 0, tzinfo=UTC), datetime(2026, 7, 7, 14, 0, tzinfo=UTC),
        datetime(2026, 7, 7, 20, 0, tzinfo=UTC)]
    assert [b.responses for b in blocks] == [3, 1, 1]
    assert all((b.end - b.start).total_seconds() == BLOCK_SECONDS for b in blocks)


def test_blocks_are_rebuilt_when_an_older_response_arrives() -> None:
    ledger = UsageLedger()
    base = datetime(2026, 7, 7, 9, 0, tzinfo=UTC).timestamp()
    ledger.add(b"late", base + 20 * 3600, "m", (1, 0, 0, 0))
    ledger.add(b"early", base, "m", (2, 0, 0, 0))
    assert [b.input_tokens for b in ledger.blocks()] == [2, 1]


def test_timestamps_in_claudes_shape_and_others() -> None:
    assert epoch_of(b"2026-07-07T13:40:11.204Z") == datetime(
        2026, 7, 7, 13, 40, 11, 204000, tzinfo=UTC).timestamp()
    assert epoch_of(b"2026-07-07T15:40:11+02:00") == datetime(
        2026, 7, 7, 13, 40, 11, tzinfo=UTC).timestamp()
    assert epoch_of(b"yesterday") is None


def test_kinds_used_by_the_stop_state() -> None:
    assert RecordKind.LIMIT_STOP.activity is False
