"""Regenerates ``tests/claude/fixtures/`` (checked in; run by hand when the shapes change):

    python -m tests.claude.make_fixtures

``claude-config/`` is a Claude config directory: one session per limit-message variant, the DST
cases, a session that went on after its stop, one where Claude's own auto-continue is waiting, a
file with malformed lines and a partial last line, a sub-agent transcript; plus ``.claude.json``,
statusline and StopFailure payloads and a user ``settings.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.claude.builders import assistant, limit_stop, system_notice, tool_result, user

HERE = Path(__file__).parent / "fixtures"
CONFIG = HERE / "claude-config"
CONFIG2 = HERE / "claude-config-2"  # a second config dir (CLAUDE_CONFIG_DIR may list several)
REPO = "/home/dev/myrepo"

# session ids (uuid-shaped) per case
SESSIONS = {
    "session_limit": "11111111-1111-4111-8111-111111111111",
    "weekly": "22222222-2222-4222-8222-222222222222",
    "extra_usage": "33333333-3333-4333-8333-333333333333",
    "legacy": "44444444-4444-4444-8444-444444444444",
    "epoch": "55555555-5555-4555-8555-555555555555",
    "went_on": "66666666-6666-4666-8666-666666666666",
    "native_waiting": "77777777-7777-4777-8777-777777777777",
    "malformed": "88888888-8888-4888-8888-888888888888",
    "dst_first": "99999999-9999-4999-8999-999999999991",
    "dst_second": "99999999-9999-4999-8999-999999999992",
    "after_midnight": "99999999-9999-4999-8999-999999999993",
    "unreadable": "99999999-9999-4999-8999-999999999994",
}


def _usage_turn(session: str, prompt: str, t0: str, t1: str, t2: str) -> list[dict[str, object]]:
    # one response written as two lines (two content blocks) sharing id, request and usage
    return [
        user(prompt, t0, session=session),
        assistant(f"msg_{session[:4]}a", t1, request=f"req_{session[:4]}a", session=session),
        assistant(f"msg_{session[:4]}a", t1, request=f"req_{session[:4]}a", session=session,
                  text="Second block of the same response."),
        tool_result(t2, session=session),
        assistant(f"msg_{session[:4]}b", t2, request=f"req_{session[:4]}b", session=session,
                  usage=(3, 120, 400, 41000)),
    ]


def _write(name: str, records: list[dict[str, object]], raw_tail: str = "",
           config: Path = CONFIG) -> None:
    session = SESSIONS[name]
    path = config / "projects" / "-home-dev-myrepo" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records) + raw_tail
    path.write_text(text, encoding="utf-8")


def main() -> None:
    import shutil

    for config in (CONFIG, CONFIG2):
        shutil.rmtree(config, ignore_errors=True)
    s = SESSIONS
    _write("session_limit", [
        {"type": "summary", "summary": "Migrating the suite", "leafUuid": "x"},
        *_usage_turn(s["session_limit"], "  Migrate the test suite to pytest\n and get CI green ",
                     "2026-07-07T13:30:00.000Z", "2026-07-07T13:40:11.204Z",
                     "2026-07-07T13:41:00.000Z"),
        limit_stop("You've hit your session limit · resets 6:40pm (Europe/Berlin)\n"
                   "/upgrade or /usage-credits to finish what you're working on.",
                   "2026-07-07T13:58:00.120Z", session=s["session_limit"]),
    ])
    # 2026-07-07 is a Tuesday: "resets Thursday" is 2026-07-09, by its end
    _write("weekly", [
        *_usage_turn(s["weekly"], "Port the parser", "2026-07-06T09:00:00.000Z",
                     "2026-07-06T09:01:00.000Z", "2026-07-06T09:02:00.000Z"),
        limit_stop("You've hit your weekly limit · resets Thursday", "2026-07-07T10:00:00.000Z",
                   session=s["weekly"]),
    ])
    _write("extra_usage", [
        user("Write the docs", "2026-07-07T02:00:00.000Z", session=s["extra_usage"]),
        limit_stop("You're out of extra usage · resets 11:30am (Asia/Colombo)",
                   "2026-07-07T03:10:00.000Z", session=s["extra_usage"]),
    ])
    _write("legacy", [
        user("Refactor the CLI", "2026-07-07T20:00:00.000Z", session=s["legacy"]),
        limit_stop("Claude usage limit reached. Your limit will reset at 12am.",
                   "2026-07-07T21:15:00.000Z", session=s["legacy"], error=None,
                   version="1.0.40"),
    ])
    _write("epoch", [
        user("Fix the flaky test", "2026-07-07T10:00:00.000Z", session=s["epoch"]),
        limit_stop("Claude AI usage limit reached|1783440000", "2026-07-07T11:00:00.000Z",
                   session=s["epoch"], error=None, version="1.0.20"),
    ])
    _write("went_on", [
        user("Add type hints", "2026-07-07T09:00:00.000Z", session=s["went_on"]),
        limit_stop("You've hit your session limit · resets 2pm (UTC)",
                   "2026-07-07T10:00:00.000Z", session=s["went_on"]),
        user("continue", "2026-07-07T14:05:00.000Z", session=s["went_on"]),
        assistant("msg_wenton", "2026-07-07T14:05:30.000Z", request="req_wenton",
                  session=s["went_on"]),
    ])
    _write("native_waiting", [
        user("Rewrite the scheduler", "2026-07-07T12:00:00.000Z", session=s["native_waiting"],
             version="2.1.240"),
        limit_stop("You've hit your session limit · resets 7pm (Europe/London)",
                   "2026-07-07T13:30:00.000Z", session=s["native_waiting"], version="2.1.240"),
        system_notice("Usage limit reached · continuing automatically at 7pm · esc or type to "
                      "cancel", "2026-07-07T13:30:01.000Z", session=s["native_waiting"]),
    ])
    _write("malformed", [
        user("Clean up the logs", "2026-07-07T08:00:00.000Z", session=s["malformed"]),
        assistant("msg_malf", "2026-07-07T08:00:10.000Z", request="req_malf",
                  session=s["malformed"]),
    ], raw_tail='{"type":"assistant","message":{"id":"msg_broken" this is not json\n'
                '[1, 2, 3]\n'
                '{"type":"user","timestamp":"2026-07-07T08:01:00.000Z","message":{"role":"us')
    # DST: America/New_York falls back on 2026-11-01 at 02:00 EDT -> 01:00 EST, so 01:30 is
    # lived twice. A stop at the first 01:30 (05:30Z) resetting "1:45am" resets 15 min later.
    _write("dst_first", [
        user("Tune the cache", "2026-11-01T05:00:00.000Z", session=s["dst_first"]),
        limit_stop("You've hit your session limit · resets 1:45am (America/New_York)",
                   "2026-11-01T05:30:00.000Z", session=s["dst_first"]),
    ], config=CONFIG2)
    # ...and at the second 01:30 (06:30Z), "5am" is 05:00 EST = 10:00Z (3.5 h later)
    _write("dst_second", [
        user("Tune the index", "2026-11-01T06:00:00.000Z", session=s["dst_second"]),
        limit_stop("You've hit your session limit · resets 5am (America/New_York)",
                   "2026-11-01T06:30:00.000Z", session=s["dst_second"]),
    ], config=CONFIG2)
    # a stop at 22:10 Berlin (20:10Z) resetting "2am": the next day, 00:00Z
    _write("after_midnight", [
        user("Bump dependencies", "2026-07-07T19:00:00.000Z", session=s["after_midnight"]),
        limit_stop("You've hit your session limit · resets 2am (Europe/Berlin)",
                   "2026-07-07T20:10:00.000Z", session=s["after_midnight"]),
    ])
    _write("unreadable", [
        user("Split the module", "2026-07-07T09:00:00.000Z", session=s["unreadable"]),
        limit_stop("You've hit your session limit · resets whenever the moon is full",
                   "2026-07-07T09:30:00.000Z", session=s["unreadable"]),
    ])
    sub = (CONFIG / "projects" / "-home-dev-myrepo" / s["session_limit"] / "subagents"
           / "agent-1a2b3c4d.jsonl")
    sub.parent.mkdir(parents=True, exist_ok=True)
    sub_record = assistant("msg_sub1", "2026-07-07T13:45:00.000Z", request="req_sub1",
                           session=s["session_limit"], model="claude-haiku-4-5",
                           usage=(5, 50, 100, 2000))
    sub_record["isSidechain"] = True
    sub.write_text(json.dumps(sub_record) + "\n", encoding="utf-8")

    (CONFIG / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash(npm run test)"], "deny": []},
        "statusLine": {"type": "command", "command": "bash ~/.claude/statusline.sh",
                       "padding": 0},
        "hooks": {"StopFailure": [{"hooks": [{"type": "command",
                                              "command": "notify-send 'Claude stopped'"}]}],
                  "Stop": [{"hooks": [{"type": "command", "command": "afplay done.aiff"}]}]},
        "model": "claude-sonnet-4-5",
    }, indent=2) + "\n", encoding="utf-8")
    (CONFIG / ".claude.json").write_text(json.dumps({
        "numStartups": 42,
        "cachedUsageUtilization": {
            "fetchedAtMs": 1783431000000, "accountUuid": "acct-uuid",
            "utilization": {"five_hour": {"utilization": 100,
                                          "resets_at": "2026-07-07T16:40:00+00:00"},
                            "seven_day": {"utilization": 41,
                                          "resets_at": "2026-07-13T00:00:00+00:00"}}},
    }, indent=2) + "\n", encoding="utf-8")
    payloads = HERE / "payloads"
    payloads.mkdir(exist_ok=True)
    (payloads / "statusline.json").write_text(json.dumps({
        "session_id": s["session_limit"], "model": {"display_name": "Sonnet 4.5"},
        "rate_limits": {"five_hour": {"used_percentage": 87.5, "resets_at": 1783440000},
                        "seven_day": {"used_percentage": 41.0, "resets_at": 1783900800}},
        "context_window": {"used_percentage": 34}}) + "\n", encoding="utf-8")
    # the shapes Claude Code 2.1.328 sends (B0): no error_details; the limit's own words
    (payloads / "stop_failure.json").write_text(json.dumps({
        "session_id": s["session_limit"],
        "transcript_path": "/home/dev/.claude/projects/-home-dev-myrepo/x.jsonl", "cwd": REPO,
        "prompt_id": "66ca1191-edca-4ef8-b096-be295337e348", "effort": {"level": "medium"},
        "hook_event_name": "StopFailure", "error": "rate_limit",
        "last_assistant_message": "You've hit your session limit · resets 6:40pm "
                                  "(Europe/Berlin)"}) + "\n", encoding="utf-8")
    (payloads / "stop_failure_transient.json").write_text(json.dumps({
        "session_id": s["session_limit"],
        "transcript_path": "/home/dev/.claude/projects/-home-dev-myrepo/x.jsonl", "cwd": REPO,
        "prompt_id": "b07a9d23-de26-4fb7-a4f5-5acde633f120", "effort": {"level": "medium"},
        "hook_event_name": "StopFailure", "error": "rate_limit",
        "last_assistant_message": "API Error: Server is temporarily limiting requests (not your "
                                  "usage limit) · Rate limit exceeded"}) + "\n",
        encoding="utf-8")
    (payloads / "stop_failure_fork.json").write_text(json.dumps({
        "session_id": s["weekly"], "hook_event_name": "StopFailure", "error_type": "rate_limit",
        "error_message": "You've hit your weekly limit · resets Thursday"}) + "\n",
        encoding="utf-8")
    (payloads / "notification_fired.json").write_text(json.dumps({
        "session_id": s["session_limit"], "hook_event_name": "Notification",
        "notification_type": "quota_auto_resume_fired", "message": "Usage limit reset"}) + "\n",
        encoding="utf-8")


if __name__ == "__main__":
    main()
