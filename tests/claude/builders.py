"""Transcript lines shaped like Claude Code's (provider-formats.md B2), for fixtures and tests."""

from __future__ import annotations

import itertools
import json
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

SESSION = "3b9e2f4a-1c2d-4e5f-8a6b-7c8d9e0f1a2b"
_NAMESPACE = uuid.UUID("6f1c0d2e-0000-4000-8000-000000000000")
_counter = itertools.count()


def new_uuid() -> str:
    """Deterministic per process, so regenerated fixtures only change where they should."""
    return str(uuid.uuid5(_NAMESPACE, str(next(_counter))))


def stamp(at: datetime | str) -> str:
    if isinstance(at, str):
        return at
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def encode_cwd(cwd: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in cwd)


def base(session: str, cwd: str, version: str = "2.1.200", branch: str = "main") -> dict[str, Any]:
    return {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session,
            "version": version, "gitBranch": branch}


def user(text: str, at: datetime | str, session: str = SESSION, cwd: str = "/home/dev/myrepo",
         **kw: Any) -> dict[str, Any]:
    return {"parentUuid": None, **base(session, cwd, **kw), "type": "user",
            "message": {"role": "user", "content": text}, "uuid": new_uuid(),
            "timestamp": stamp(at)}


def tool_result(at: datetime | str, session: str = SESSION, cwd: str = "/home/dev/myrepo",
                **kw: Any) -> dict[str, Any]:
    return {"parentUuid": None, **base(session, cwd, **kw), "type": "user",
            "message": {"role": "user", "content": [
                {"tool_use_id": "toolu_01", "type": "tool_result", "content": "ok"}]},
            "uuid": new_uuid(), "timestamp": stamp(at)}


def assistant(msg_id: str, at: datetime | str, *, request: str = "req_01",
              usage: tuple[int, int, int, int] = (12, 310, 1850, 40210),
              model: str = "claude-sonnet-4-5", text: str = "Running the tests now.",
              session: str = SESSION, cwd: str = "/home/dev/myrepo", **kw: Any
              ) -> dict[str, Any]:
    inp, out, creation, read = usage
    return {"parentUuid": None, **base(session, cwd, **kw), "type": "assistant",
            "message": {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                        "content": [{"type": "text", "text": text}], "stop_reason": "tool_use",
                        "usage": {"input_tokens": inp, "cache_creation_input_tokens": creation,
                                  "cache_read_input_tokens": read, "output_tokens": out}},
            "requestId": request, "uuid": new_uuid(), "timestamp": stamp(at)}


def limit_stop(text: str, at: datetime | str, session: str = SESSION,
               cwd: str = "/home/dev/myrepo", error: str | None = "rate_limit",
               **kw: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "parentUuid": None, **base(session, cwd, **kw), "type": "assistant",
        "timestamp": stamp(at), "uuid": new_uuid(), "isApiErrorMessage": True,
        "apiErrorStatus": 429,
        "message": {"id": new_uuid(), "role": "assistant", "model": "<synthetic>",
                    "usage": {"input_tokens": 0, "output_tokens": 0,
                              "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
                    "content": [{"type": "text", "text": text}]},
    }
    if error is not None:
        record["error"] = error
    return record


def system_notice(text: str, at: datetime | str, session: str = SESSION,
                  cwd: str = "/home/dev/myrepo") -> dict[str, Any]:
    return {"parentUuid": None, **base(session, cwd), "type": "system",
            "subtype": "informational", "level": "notice", "content": text,
            "uuid": new_uuid(), "timestamp": stamp(at)}


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def transcript_path(config_dir: Path, cwd: str, session: str = SESSION) -> Path:
    return config_dir / "projects" / encode_cwd(cwd) / f"{session}.jsonl"


def write_session(config_dir: Path, records: list[dict[str, Any]], *, cwd: str | None = None,
                  session: str | None = None, append: bool = False) -> Path:
    first = records[0] if records else {}
    cwd = cwd or first.get("cwd", "/home/dev/myrepo")
    session = session or first.get("sessionId", SESSION)
    path = transcript_path(config_dir, cwd, session)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a" if append else "w", encoding="utf-8") as handle:
        handle.writelines(dumps(r) for r in records)
    return path


def usage_limit(text: str, at: datetime | str, *, kind: str = "five_hour",
                resets: int | None = None, session: str = SESSION,
                cwd: str = "/home/dev/myrepo", entrypoint: str = "sdk-cli",
                **kw: Any) -> dict[str, Any]:
    """A 2.1.328 limit stop: the structured fields B0 describes (``apiError``,
    ``apiErrorParams.rate_limit_info`` with the exact ``resetsAt``, ``quotaLimits``)."""
    record = limit_stop(text, at, session=session, cwd=cwd, version="2.1.328", **kw)
    info: dict[str, Any] = {"status": "rejected", "rateLimitType": kind,
                            "overageStatus": "rejected", "overageDisabledReason": "out_of_credits",
                            "isUsingOverage": False}
    if resets is not None:
        info["resetsAt"] = resets
    record.update(apiError="usage_limit_reached", apiErrorParams={"rate_limit_info": info},
                  quotaLimits={**info, "unifiedRateLimitFallbackAvailable": False},
                  apiErrorType="rate_limit_error", entrypoint=entrypoint)
    return record


TRANSIENT_TEXT = ("API Error: Server is temporarily limiting requests (not your usage limit) · "
                  "Rate limit exceeded")


def transient_error(at: datetime | str, session: str = SESSION, cwd: str = "/home/dev/myrepo",
                    text: str = TRANSIENT_TEXT, entrypoint: str = "sdk-cli") -> dict[str, Any]:
    """A 2.1.328 transient 429 record (``error: "rate_limit"`` too, but no usage limit)."""
    record = limit_stop(text, at, session=session, cwd=cwd, version="2.1.328")
    record.update(apiErrorIsTransient="temporarily limiting" in text,
                  apiErrorType="rate_limit_error", entrypoint=entrypoint)
    return record


def retry_wait(at: datetime | str, resets: int, *, kind: str = "five_hour", attempt: int = 1,
               session: str = SESSION, cwd: str = "/home/dev/myrepo",
               entrypoint: str = "sdk-cli") -> dict[str, Any]:
    """A run with ``CLAUDE_CODE_RETRY_WATCHDOG`` waiting out a usage limit in its process: the
    ``system`` record 2.1.328 and 2.1.332 write per retry (seen against the mock API)."""
    return {"parentUuid": None, "isSidechain": False, "type": "system", "subtype": "api_error",
            "level": "error",
            "error": {"message": '429 {"type":"error","error":{"type":"rate_limit_error",'
                                 '"message":"Rate limit exceeded"}}',
                      "status": 429, "formatted": "429 Rate limit exceeded", "connection": None,
                      "isNetworkDown": False,
                      "rateLimits": {"rateLimitType": kind, "resetsAt": resets},
                      "noResponse": None},
            "retryInMs": 17459, "retryAttempt": attempt, "maxRetries": 300,
            "source": "request_retry", "timestamp": stamp(at), "uuid": new_uuid(),
            "userType": "external", "entrypoint": entrypoint, "cwd": cwd, "sessionId": session,
            "version": "2.1.332", "gitBranch": "main"}
