"""Fixture ``CODEX_HOME`` trees: rollout lines shaped like the real formats (B1)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

T0 = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)  # FakeClock's default start
THREAD_A = "019f1a2b-3c4d-7e5f-8a9b-0c1d2e3f4a5b"
THREAD_B = "019f1a2b-3c4d-7e5f-8a9b-0c1d2e3f4b6c"
THREAD_C = "019f1a2b-3c4d-7e5f-8a9b-0c1d2e3f4c7d"


def stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def epoch(at: datetime) -> int:
    return int(at.timestamp())


def line(kind: str, payload: dict[str, Any], at: datetime) -> str:
    return json.dumps({"timestamp": stamp(at), "type": kind, "payload": payload},
                      separators=(",", ":")) + "\n"


def meta(thread: str, at: datetime, cwd: str = "/home/dev/myrepo") -> str:
    return line("session_meta", {"id": thread, "timestamp": stamp(at), "cwd": cwd,
                                 "originator": "codex_cli_rs", "cli_version": "0.150.1",
                                 "source": "cli"}, at)


def window(used: float, minutes: int, resets_at: datetime | None = None,
           resets_in: int | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"used_percent": used, "window_minutes": minutes}
    if resets_at is not None:
        result["resets_at"] = epoch(resets_at)
    if resets_in is not None:
        result["resets_in_seconds"] = resets_in
    return result


def limits(primary: dict[str, Any] | None, secondary: dict[str, Any] | None, *,
           reached: str | None = None, credits: dict[str, Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "limit_id": "codex", "limit_name": None, "primary": primary, "secondary": secondary,
        "credits": credits or {"has_credits": False, "unlimited": False, "balance": "0"},
        "plan_type": "plus",
    }
    if reached is not None:
        result["rate_limit_reached_type"] = reached
    return result


def five_and_week(used5: float, reset5: datetime, used7: float, reset7: datetime,
                  **kw: Any) -> dict[str, Any]:
    return limits(window(used5, 300, reset5), window(used7, 10080, reset7), **kw)


def token_count(at: datetime, rate_limits: dict[str, Any] | None, info: bool = True) -> str:
    usage = {"input_tokens": 1200, "cached_input_tokens": 1000, "output_tokens": 50,
             "reasoning_output_tokens": 10, "total_tokens": 1250}
    payload = {"type": "token_count",
               "info": {"total_token_usage": usage, "last_token_usage": usage,
                        "model_context_window": 258400} if info else None,
               "rate_limits": rate_limits}
    return line("event_msg", payload, at)


def turn(model: str, at: datetime) -> str:
    """A ``turn_context`` line: the calls after it use ``model``."""
    return line("turn_context", {"cwd": "/repo", "approval_policy": "on-request",
                                 "model": model, "effort": "medium"}, at)


def call(at: datetime, n: int, limits: dict[str, Any] | None = None,
         reorder: bool = False) -> str:
    """A model call's ``token_count`` line whose counts are ``n`` times a fixed usage
    (``reorder``: its fields in another order, as another writer may put them)."""
    usage = {"input_tokens": 100 * n, "cached_input_tokens": 10 * n, "output_tokens": n,
             "reasoning_output_tokens": 2 * n, "total_tokens": 101 * n}
    if reorder:
        usage = dict(reversed(list(usage.items())))
    payload = {"type": "token_count",
               "info": {"total_token_usage": usage, "last_token_usage": usage,
                        "model_context_window": 258400},
               "rate_limits": limits}
    return line("event_msg", payload, at)


def goal(thread: str, status: str, at: datetime, objective: str = "Migrate the tests to pytest",
         tokens: int = 1000, budget: int | None = None) -> str:
    return line("event_msg", {
        "type": "thread_goal_updated", "threadId": thread, "turnId": "019f1a40-aaaa",
        "goal": {"threadId": thread, "objective": objective, "status": status,
                 "tokenBudget": budget, "tokensUsed": tokens, "timeUsedSeconds": 60,
                 "createdAt": epoch(at) - 600, "updatedAt": epoch(at)}}, at)


def limit_stop(at: datetime) -> str:
    message = ("You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), "
               "visit https://chatgpt.com/codex/settings/usage to purchase more credits or try "
               "again at 6:40 PM.")
    return line("event_msg", {"type": "task_complete", "turn_id": "019f1a40-aaaa",
                              "last_agent_message": None,
                              "error": {"message": message,
                                        "codex_error_info": "usage_limit_exceeded"}}, at)


def chatter(at: datetime, text: str = "running the tests now") -> str:
    return line("event_msg", {"type": "agent_message", "message": text}, at)


class CodexHome:
    """A fixture ``$CODEX_HOME``: ``rollout()`` writes a session file, ``append()`` grows one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sessions = root / "sessions"
        self.sessions.mkdir(parents=True, exist_ok=True)

    def rollout(self, thread: str, started: datetime, *lines: str,
                mtime: datetime | None = None) -> Path:
        day = self.sessions / started.strftime("%Y/%m/%d")
        day.mkdir(parents=True, exist_ok=True)
        path = day / f"rollout-{started.strftime('%Y-%m-%dT%H-%M-%S')}-{thread}.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        touch(path, mtime or _last_stamp(lines) or started)
        return path

    @staticmethod
    def append(path: Path, *lines: str, mtime: datetime | None = None) -> None:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("".join(lines))
        touch(path, mtime or _last_stamp(lines) or datetime.now(UTC))

    def tree(self) -> dict[str, tuple[int, int]]:
        """Every file under the home with (size, mtime_ns): proves nothing was written."""
        result = {}
        for path in sorted(self.root.rglob("*")):
            st = path.stat()
            result[str(path.relative_to(self.root))] = (st.st_size, st.st_mtime_ns)
        return result


def touch(path: Path, at: datetime) -> None:
    os.utime(path, (at.timestamp(), at.timestamp()))


def _last_stamp(lines: tuple[str, ...]) -> datetime | None:
    for text in reversed(lines):
        try:
            record = json.loads(text)
        except ValueError:
            continue
        return datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
    return None


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)
