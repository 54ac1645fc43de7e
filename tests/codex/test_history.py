"""The usage chart's full-history scan: tokens by day and model, hourly quota points."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from core.providers.codex import history, usage_workers
from core.providers.codex.history import rollouts
from core.providers.codex.usage_workers import scan_usage
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    THREAD_B,
    CodexHome,
    call,
    five_and_week,
    line,
    meta,
    stamp,
    turn,
)

H = timedelta(hours=1)
M = timedelta(minutes=1)


def test_tokens_by_day_and_model_across_midnight_and_files(home: CodexHome):
    evening = T0.replace(hour=23, minute=50)
    home.rollout(THREAD_A, evening, meta(THREAD_A, evening), turn("gpt-5.1-codex", evening),
                 call(evening + M, 1), call(evening + 5 * M, 2),
                 turn("gpt-5.2", evening + 8 * M), call(evening + 9 * M, 3),
                 call(evening + 15 * M, 4),  # after midnight, same turn
                 call(evening + 20 * M, 5, reorder=True))
    home.rollout(THREAD_B, T0, meta(THREAD_B, T0), call(T0 + M, 7),  # no turn_context seen
                 '{"timestamp":"' + stamp(T0 + 2 * M) + '","type":"event_msg","payl')
    found = scan_usage(rollouts(home.sessions))
    day1, day2 = T0.date().isoformat(), (T0 + 24 * H).date().isoformat()
    by_key = {k: (u.calls, u.input_tokens, u.total_tokens) for k, u in found.daily.items()}
    assert by_key == {
        (day1, "gpt-5.1-codex"): (2, 300, 303),
        (day1, "gpt-5.2"): (1, 300, 303),
        (day2, "gpt-5.2"): (2, 900, 909),
        (day1, "unknown"): (1, 700, 707),
    }
    total = found.totals()
    assert (total.calls, total.cached_input_tokens, total.output_tokens,
            total.reasoning_output_tokens) == (6, 220, 22, 44)
    assert found.files == 2


def test_windows_and_workers_give_the_same_answer(home: CodexHome,
                                                  monkeypatch: pytest.MonkeyPatch):
    lines = [meta(THREAD_A, T0), turn("gpt-5.1-codex", T0)]
    for i in range(200):
        if i == 120:
            lines.append(turn("gpt-5-codex", T0 + i * M))
        if i == 60:  # a line much longer than a window
            lines.append(line("event_msg", {"type": "agent_message", "message": "x" * 20000},
                              T0 + i * M))
        lines.append(call(T0 + i * M, i + 1))
    home.rollout(THREAD_A, T0, *lines)
    home.rollout(THREAD_B, T0 + H, meta(THREAD_B, T0 + H), call(T0 + 2 * H, 1000))
    whole = scan_usage(rollouts(home.sessions))
    monkeypatch.setattr(history, "WINDOW", 4096)  # many windows, lines cut at every edge
    windowed = scan_usage(rollouts(home.sessions))
    assert windowed.daily == whole.daily
    by_model = {model: u.calls for (_, model), u in whole.daily.items()}
    assert by_model == {"gpt-5.1-codex": 120, "gpt-5-codex": 80, "unknown": 1}
    parallel = scan_usage(rollouts(home.sessions), workers=2)
    assert parallel.daily == whole.daily and parallel.size == whole.size


def test_quota_points_are_hourly(home: CodexHome, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(history, "QUOTA_SAMPLE", 1)
    lines = [meta(THREAD_A, T0)]
    for i in range(12):
        at = T0 + i * 20 * M
        lines.append(call(at, 1, five_and_week(10.0 + i, T0 + 5 * H, 2.0, T0 + 90 * H)))
    home.rollout(THREAD_A, T0, *lines)
    found = scan_usage(rollouts(home.sessions))
    assert [round(u) for _, u in found.quota["codex:5h"]] == [10, 13, 16, 19]
    micros = [(T0 + i * H - history.EPOCH) // history.MICROSECOND for i in range(4)]
    assert [w for w, _ in found.quota["codex:5h"]] == micros


def test_a_manifest_shaped_tree_is_counted_like_the_generator(home: CodexHome):
    """Lines exactly as the generator writes them (compact JSON, fields in Codex's order)."""
    raw = json.dumps({"timestamp": stamp(T0), "type": "event_msg", "payload": {
        "type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 5, "cached_input_tokens": 4,
                                  "output_tokens": 3, "reasoning_output_tokens": 2,
                                  "total_tokens": 8},
            "last_token_usage": {"input_tokens": 5, "cached_input_tokens": 4,
                                 "output_tokens": 3, "reasoning_output_tokens": 2,
                                 "total_tokens": 8},
            "model_context_window": 258400}, "rate_limits": None}},
        separators=(",", ":"))
    home.rollout(THREAD_A, T0, meta(THREAD_A, T0), raw + "\n")
    total = scan_usage(rollouts(home.sessions)).totals()
    assert (total.calls, total.input_tokens, total.total_tokens) == (1, 5, 8)


def test_codex_usage_command(home: CodexHome, monkeypatch: pytest.MonkeyPatch, capsys):
    from core.cli import main

    home.rollout(THREAD_A, T0, meta(THREAD_A, T0), turn("gpt-5.2", T0), call(T0 + M, 2),
                 call(T0 + 2 * M, 3))
    monkeypatch.setenv("CODEX_HOME", str(home.root))
    assert main(["codex-usage", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["days"] == [{"date": T0.date().isoformat(), "model": "gpt-5.2", "calls": 2,
                             "input_tokens": 500, "cached_input_tokens": 50,
                             "output_tokens": 5, "reasoning_output_tokens": 10,
                             "total_tokens": 505}]
    assert data["total"]["total_tokens"] == 505 and data["files"] == 1
    assert main(["codex-usage"]) == 0
    assert "gpt-5.2" in capsys.readouterr().out
    monkeypatch.setenv("CODEX_HOME", str(home.root / "missing"))
    assert main(["codex-usage"]) == 2


def test_lines_as_codex_0_169_writes_them_are_read(home: CodexHome,
                                                  monkeypatch: pytest.MonkeyPatch):
    """0.169.0 puts an ``ordinal`` before the type and a ``cache_write_input_tokens`` count
    into the usage: both are read (the latter by the fast path, not the JSON fallback)."""
    usage = {"input_tokens": 30, "cached_input_tokens": 10, "cache_write_input_tokens": 4,
             "output_tokens": 5, "reasoning_output_tokens": 1, "total_tokens": 35}

    def newer(kind: str, payload: dict, at, ordinal: int) -> str:
        return json.dumps({"timestamp": stamp(at), "ordinal": ordinal, "type": kind,
                           "payload": payload}, separators=(",", ":")) + "\n"

    home.rollout(THREAD_A, T0, newer("session_meta", {"id": THREAD_A}, T0, 1),
                 newer("turn_context", {"model": "gpt-6.1-sol"}, T0, 2),
                 newer("event_msg", {"type": "token_count", "info": {
                     "total_token_usage": usage, "last_token_usage": usage}}, T0 + M, 3))
    monkeypatch.setattr(history, "_slow_usage", lambda data, at: pytest.fail("slow path"))
    found = scan_usage(rollouts(home.sessions))
    [(key, got)] = found.daily.items()
    assert key == (T0.strftime("%Y-%m-%d"), "gpt-6.1-sol")
    assert (got.calls, got.input_tokens, got.output_tokens, got.total_tokens) == (1, 30, 5, 35)


def test_a_type_that_moves_from_line_to_line_is_found_on_each(home: CodexHome):
    """The scan looks for a line's type where the line before had it: ordinals growing a
    digit (9 → 10, 99 → 100), lines with and without one in the same file, a head in another
    order, a type it does not know and one cut short all give what reading every line as JSON
    gives."""
    usage = {"input_tokens": 7, "cached_input_tokens": 3, "output_tokens": 2,
             "reasoning_output_tokens": 1, "total_tokens": 9}
    count = {"type": "token_count", "info": {"last_token_usage": usage}}
    raw: list[str] = []
    for n in range(1, 130):
        at = T0 + n * M
        record: dict = {"timestamp": stamp(at)}
        if n % 7:  # most lines as 0.169+ writes them, some without the ordinal
            record["ordinal"] = n
        kind, payload = [("turn_context", {"model": f"gpt-{n // 40}"}),
                         ("response_item", {"type": "message", "content": "x" * n}),
                         ("event_msg", count), ("event_msg", {"type": "agent_message"}),
                         ("event_msg", count)][n % 5]
        record.update({"type": kind, "payload": payload})
        if n % 11 == 0:  # the type first: another writer's order
            record = {"type": kind, **record}
        if n % 13 == 0:
            record.update(type="turn_aborted", payload={"reason": "interrupted"})
        raw.append(json.dumps(record, separators=(",", ":")) + "\n")
    raw.append('{"timestamp":"' + stamp(T0 + 200 * M) + '","ordinal":130,"type":"event_msg"')
    home.rollout(THREAD_A, T0, *raw)

    expected: dict[tuple[str, str], list[int]] = {}
    model = "unknown"
    for text in raw[:-1]:
        record = json.loads(text)
        if record["type"] == "turn_context":
            model = record["payload"]["model"]
        elif record["type"] == "event_msg" and record["payload"]["type"] == "token_count":
            row = expected.setdefault((record["timestamp"][:10], model), [0, 0])
            row[0] += 1
            row[1] += record["payload"]["info"]["last_token_usage"]["total_tokens"]
    found = scan_usage(rollouts(home.sessions))
    assert {k: [u.calls, u.total_tokens] for k, u in found.daily.items()} == expected
    assert len(expected) == 5  # the calls before the first turn_context: "unknown"


def test_bytes_in_another_encoding_never_end_the_scan(home: CodexHome):
    """A model name and a timestamp that are not UTF-8 (a file saved in another encoding, or
    damaged): read as best they can be, the other calls counted as ever."""
    good = call(T0 + M, 2)
    latin1 = turn("gpt-5", T0).replace("gpt-5", "gpt-\u00e9").encode("latin-1")
    damaged = call(T0 + 2 * M, 3).encode().replace(b"2026", b"20\xff6", 1)
    path = home.rollout(THREAD_A, T0, meta(THREAD_A, T0), good)
    with path.open("ab") as handle:
        handle.write(latin1 + damaged)
    found = scan_usage(rollouts(home.sessions))
    assert found.totals().calls == 2
    assert {model for _, model in found.daily} == {"unknown", "gpt-\ufffd"}


def test_a_failing_worker_is_made_up_for_here(home: CodexHome, monkeypatch: pytest.MonkeyPatch):
    for i, thread in enumerate((THREAD_A, THREAD_B)):
        home.rollout(thread, T0 + i * H, meta(thread, T0 + i * H), call(T0 + i * H + M, 3 + i))
    whole = scan_usage(rollouts(home.sessions))
    monkeypatch.setattr(usage_workers, "can_fork", lambda: False)  # fresh interpreters
    monkeypatch.setattr(usage_workers, "_WORKER", "import sys; sys.exit(3)")
    parallel = scan_usage(rollouts(home.sessions), workers=2)
    assert parallel.daily == whole.daily and parallel.files == 2


def test_codex_usage_imports_only_its_own_command(home: CodexHome, tmp_path):
    """Timed against ccusage as a whole process: the other commands' modules stay unloaded."""
    import subprocess
    import sys

    home.rollout(THREAD_A, T0, meta(THREAD_A, T0), call(T0 + M, 2))
    code = ("import sys; from core.cli import main; code = main(['codex-usage', '--json']); "
            "print(sorted(m for m in sys.modules if m.startswith('core.cli.')), file=sys.stderr); "
            "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**__import__("os").environ,
                                           "CODEX_HOME": str(home.root),
                                           "GOALKEEPER_HOME": str(tmp_path / "gk")})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total"]["calls"] == 1
    assert done.stderr.strip() == "['core.cli.codex_usage', 'core.cli.common']"
    from core.cli import build_parser

    commands = build_parser([])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"codex-usage", "status", "daemon", "secret", "track", "add"} <= set(commands)
