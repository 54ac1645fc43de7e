"""Scripted headless runs for the fake ``claude`` (stream-json shapes of provider-formats B2)."""

from __future__ import annotations

from typing import Any

from tests.claude.builders import assistant, limit_stop, user

RESET_EPOCH = 1783450800  # 2026-07-07T19:00:00Z


def init(session: str = "$SESSION") -> dict[str, Any]:
    return {"type": "system", "subtype": "init", "session_id": session, "cwd": "/x",
            "model": "claude-sonnet-4-5", "tools": [], "permissionMode": "default"}


def rate_limit(status: str, resets: int = RESET_EPOCH, kind: str = "five_hour") -> dict[str, Any]:
    return {"type": "rate_limit_event", "rate_limit_info": {
        "status": status, "resetsAt": resets, "rateLimitType": kind, "overageStatus": "rejected",
        "isUsingOverage": False, "unifiedRateLimitFallbackAvailable": False}}


def result(text: str, *, is_error: bool = False, subtype: str = "success") -> dict[str, Any]:
    return {"type": "result", "subtype": subtype, "is_error": is_error, "session_id": "$SESSION",
            "result": text, "num_turns": 3, "usage": {"input_tokens": 10, "output_tokens": 20}}


def allowed(text: str = "All tests pass now.", at: str = "2026-07-07T14:01:00.000Z",
            cwd: str = "/x") -> dict[str, Any]:
    """The quota is back: Claude works, writes to the transcript, and ends the turn."""
    return {"events": [init(), rate_limit("allowed"),
                       {"type": "assistant", "session_id": "$SESSION",
                        "message": {"role": "assistant", "content": [{"type": "text",
                                                                      "text": text}]}},
                       result(text)],
            "append": [user("The usage limit has reset; continue where you left off.", at,
                            session="$SESSION", cwd=cwd),
                       assistant("msg_resumed_$SESSION", at, request="req_resumed",
                                 session="$SESSION", cwd=cwd)],
            "exit": 0}


def limited(resets: int = RESET_EPOCH, at: str = "2026-07-07T14:01:00.000Z",
            cwd: str = "/x") -> dict[str, Any]:
    """Still (or again) out of quota: a rejected event, then a 'success' result with exit 0."""
    return {"events": [init(), rate_limit("rejected", resets),
                       result(f"Claude AI usage limit reached|{resets}", is_error=True)],
            "append": [user("The usage limit has reset; continue where you left off.", at,
                            session="$SESSION", cwd=cwd),
                       limit_stop("You've hit your session limit · resets 7pm (UTC)", at,
                                  session="$SESSION", cwd=cwd)],
            "exit": 0}


def hanging(ignore_sigint: bool = False) -> dict[str, Any]:
    return {"events": [init(), rate_limit("allowed")], "hang": True,
            "ignore_sigint": ignore_sigint}
