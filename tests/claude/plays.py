"""Scripted headless runs for the fake ``claude``: the stream-json shapes of Claude Code 2.1.328
(provider-formats B0, and what ``tests/real`` observes on the real CLI)."""

from __future__ import annotations

from typing import Any

from tests.claude.builders import TRANSIENT_TEXT, assistant, transient_error, usage_limit, user

RESET_EPOCH = 1783450800  # 2026-07-07T19:00:00Z
CONTINUE = "This is an automatic resume by Goalkeeper: carry on."


def init(session: str = "$SESSION") -> dict[str, Any]:
    return {"type": "system", "subtype": "init", "session_id": session, "cwd": "/x",
            "model": "claude-sonnet-4-5", "tools": [], "permissionMode": "default",
            "claude_code_version": "2.1.328", "apiKeySource": "none"}


def windows(five: float, resets: int = RESET_EPOCH) -> dict[str, Any]:
    """``unifiedWindows``: every ``rate_limit_event`` of 2.1.328 carries them."""
    return {"five_hour": {"utilization": five, "resetsAt": resets},
            "seven_day": {"utilization": 0.5, "resetsAt": resets + 3 * 86400}}


def rate_limit(status: str, resets: int = RESET_EPOCH, kind: str = "five_hour") -> dict[str, Any]:
    info: dict[str, Any] = {"status": status, "isUsingOverage": False}
    if status == "rejected":
        info.update(resetsAt=resets, rateLimitType=kind, overageStatus="rejected",
                    overageDisabledReason="out_of_credits",
                    unifiedWindows=windows(1.0 if kind == "five_hour" else 0.3, resets))
    else:
        info["unifiedWindows"] = windows(0.42, resets)
    return {"type": "rate_limit_event", "rate_limit_info": info, "session_id": "$SESSION"}


def result(text: str, *, is_error: bool = False, subtype: str = "success",
           **extra: Any) -> dict[str, Any]:
    return {"type": "result", "subtype": subtype, "is_error": is_error, "session_id": "$SESSION",
            "result": text, "num_turns": 1, "usage": {"input_tokens": 10, "output_tokens": 20},
            "terminal_reason": "api_error" if is_error else "completed", **extra}


def allowed(text: str = "All tests pass now.", at: str = "2026-07-07T14:01:00.000Z",
            cwd: str = "/x") -> dict[str, Any]:
    """The quota is back: Claude works, writes to the transcript, and ends the turn."""
    return {"events": [init(),
                       {"type": "assistant", "session_id": "$SESSION",
                        "message": {"role": "assistant", "content": [{"type": "text",
                                                                      "text": text}]}},
                       rate_limit("allowed"), result(text)],
            "append": [user(CONTINUE, at, session="$SESSION", cwd=cwd),
                       assistant("msg_resumed_$SESSION", at, request="req_resumed",
                                 session="$SESSION", cwd=cwd)],
            "exit": 0}


def limited(resets: int = RESET_EPOCH, at: str = "2026-07-07T14:01:00.000Z",
            cwd: str = "/x", kind: str = "five_hour") -> dict[str, Any]:
    """Still (or again) out of quota, as 2.1.328 says it: exit 1, a "success" result with
    ``api_error: usage_limit_reached``, the exact reset in ``api_error_params``."""
    text = "You've hit your 5-hour limit · resets 7pm (UTC)"
    info = {"status": "rejected", "resetsAt": resets, "rateLimitType": kind,
            "overageStatus": "rejected", "overageDisabledReason": "out_of_credits",
            "isUsingOverage": False}
    return {"events": [init(), rate_limit("rejected", resets, kind),
                       {"type": "assistant", "session_id": "$SESSION",
                        "message": {"model": "<synthetic>", "role": "assistant",
                                    "content": [{"type": "text", "text": text}]},
                        "error": "rate_limit", "is_api_error_message": True,
                        "api_error_status": 429, "api_error": "usage_limit_reached",
                        "api_error_params": {"rate_limit_info": info},
                        "api_error_type": "rate_limit_error"},
                       result(text, is_error=True, api_error_status=429,
                              api_error="usage_limit_reached",
                              api_error_type="rate_limit_error")],
            "append": [user(CONTINUE, at, session="$SESSION", cwd=cwd),
                       usage_limit(text, at, kind=kind, resets=resets, session="$SESSION",
                                   cwd=cwd)],
            "exit": 1}


def legacy_limited(resets: int = RESET_EPOCH, at: str = "2026-07-07T14:01:00.000Z",
                   cwd: str = "/x") -> dict[str, Any]:
    """An older CLI: a rejected event, then a 'success' result with exit 0 and the epoch form."""
    event = {"type": "rate_limit_event", "rate_limit_info": {
        "status": "rejected", "resetsAt": resets, "rateLimitType": "five_hour",
        "overageStatus": "rejected", "isUsingOverage": False,
        "unifiedRateLimitFallbackAvailable": False}}
    return {"events": [init(), event,
                       result(f"Claude AI usage limit reached|{resets}", is_error=True)],
            "exit": 0}


def transient(at: str = "2026-07-07T14:01:00.000Z", cwd: str = "/x",
              text: str = TRANSIENT_TEXT) -> dict[str, Any]:
    """A 429 that is not a usage limit (B0): an untyped rejected event, no ``api_error``."""
    oauth = "temporarily limiting" in text
    events: list[dict[str, Any]] = [init()]
    if oauth:
        events.append({"type": "rate_limit_event", "session_id": "$SESSION",
                       "rate_limit_info": {"status": "rejected", "isUsingOverage": False}})
    events += [{"type": "assistant", "session_id": "$SESSION",
                "message": {"model": "<synthetic>", "role": "assistant",
                            "content": [{"type": "text", "text": text}]},
                "error": "rate_limit", "is_api_error_message": True, "api_error_status": 429,
                "api_error_type": "rate_limit_error"},
               result(text, is_error=True, api_error_status=429,
                      api_error_type="rate_limit_error")]
    return {"events": events,
            "append": [user(CONTINUE, at, session="$SESSION", cwd=cwd),
                       transient_error(at, session="$SESSION", cwd=cwd, text=text)],
            "exit": 1}


def unknown_session() -> dict[str, Any]:
    """``--resume`` with an id Claude does not know: one result line, no init (B0)."""
    return {"events": [{"type": "result", "subtype": "error_during_execution",
                        "is_error": True, "num_turns": 0, "session_id": "$SESSION",
                        "errors": ["No conversation found with session ID: $SESSION"]}],
            "stderr": "No conversation found with session ID: $SESSION", "exit": 1}


def hanging(ignore_sigint: bool = False) -> dict[str, Any]:
    return {"events": [init(), rate_limit("allowed")], "hang": True,
            "ignore_sigint": ignore_sigint}


def slow(seconds: float, text: str = "Half of the tests pass now.") -> dict[str, Any]:
    """A turn that takes ``seconds`` after Claude answered ``init``, then ends normally."""
    play = allowed(text)
    events = play["events"]
    return {**play, "events": events[:1], "sleep": seconds, "then": events[1:]}
