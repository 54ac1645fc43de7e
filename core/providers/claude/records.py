"""One transcript line of Claude Code, classified.

Transcripts (``<config>/projects/<encoded cwd>/<session>.jsonl``) hold one JSON record per line:
user prompts and tool results (``type: user``), assistant messages with ``message.usage``,
system notices, attachments, summaries, snapshots. Goalkeeper cares about a few kinds only — see
:class:`RecordKind`. Unknown shapes are ``OTHER``; fields are read defensively because they vary by
version (``provider-formats.md`` B0/B2).

An API-error record (``isApiErrorMessage: true``) is classified by its structured fields first:
``apiError: "usage_limit_reached"`` or a ``rate_limit_info`` make a limit stop (with the exact
reset), ``apiErrorIsTransient: true`` a transient error; only records without them (older
versions) are read by their words.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from core.providers import jsonload
from core.providers.claude.wording import is_transient_text, looks_like_limit, native_kind

TITLE_MAX = 120
# user records that are not the user working on the task: slash commands, their output, caveats
_NOT_A_PROMPT = ("<command-", "<local-command-", "Caveat:", "[Request interrupted")


class RecordKind(StrEnum):
    PROMPT = "prompt"  # the user typed something
    TOOL_RESULT = "tool_result"  # a tool ran for the assistant
    ASSISTANT = "assistant"  # a model response (may carry usage)
    LIMIT_STOP = "limit_stop"  # the synthetic "You've hit your … limit" record
    TRANSIENT = "transient"  # a 429 that is not a usage limit (retried, never a quota pause)
    API_ERROR = "api_error"  # another API error (the request got through the quota)
    NATIVE_WAITING = "native_waiting"  # Claude Code armed its wait to continue by itself
    NATIVE_FIRED = "native_fired"  # Claude Code continued by itself
    NATIVE_CANCELLED = "native_cancelled"  # Claude Code stood down: it will not continue
    #: a run with ``CLAUDE_CODE_RETRY_WATCHDOG`` waits out a usage limit inside its process: a
    #: limit stop and Claude's own armed wait in one record (see :func:`retry_wait`)
    RETRY_WAIT = "retry_wait"
    GOAL_STATUS = "goal_status"  # Claude's own /goal: its condition, met or failed
    OTHER = "other"

    @property
    def activity(self) -> bool:
        """Work happened in the session (so a limit stop before it is over)."""
        return self in (RecordKind.PROMPT, RecordKind.TOOL_RESULT, RecordKind.ASSISTANT,
                        RecordKind.API_ERROR, RecordKind.TRANSIENT, RecordKind.NATIVE_FIRED)


@dataclass(frozen=True)
class ResponseUsage:
    """Token usage of one model response; ``key`` de-duplicates (message id + request id)."""

    key: str
    at: datetime
    model: str
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int


@dataclass(frozen=True)
class LimitInfo:
    """The structured part of a 2.1.x limit stop (``apiErrorParams.rate_limit_info``, else
    ``quotaLimits``).

    Attributes:
        rate_limit_type: Claude's window name (``five_hour``, ``seven_day_opus``, …) or None.
        resets_at: the exact reset, epoch seconds (the text gives minutes only), or None.
        using_overage: the account was on overage (Claude never waits those out by itself).
    """

    rate_limit_type: str | None
    resets_at: float | None
    using_overage: bool = False


@dataclass(frozen=True)
class GoalStatus:
    """A ``goal_status`` attachment of Claude's own ``/goal`` (2.1.139+): set (``sentinel``),
    not met yet, met, or failed — the Stop-hook evaluator judged the condition impossible
    (2.1.328 then clears the goal; ``reason`` is the evaluator's, as it is for "not met")."""

    condition: str
    met: bool
    failed: bool
    reason: str | None = None


@dataclass(frozen=True)
class Record:
    kind: RecordKind
    at: datetime | None
    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    text: str | None = None
    usage: ResponseUsage | None = None
    sidechain: bool = False
    limit: LimitInfo | None = None
    entrypoint: str | None = None  # "cli" (the TUI), "sdk-cli" (print mode), …
    goal: GoalStatus | None = None


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else None


def json_objects(data: bytes) -> list[dict[str, Any]]:
    """The JSON objects among the newline-separated lines of ``data`` (others are skipped)."""
    objects = []
    for line in data.splitlines():
        try:
            obj = jsonload.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            objects.append(obj)
    return objects


def message_text(message: Any) -> str:
    """The plain text of a message's ``content`` (a string or a list of blocks)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def classify(obj: dict[str, Any]) -> Record:
    kind = obj.get("type")
    at = parse_time(obj.get("timestamp"))
    common: dict[str, Any] = {
        "session_id": _str(obj.get("sessionId")),
        "cwd": _str(obj.get("cwd")),
        "branch": _str(obj.get("gitBranch")),
        "sidechain": obj.get("isSidechain") is True,
        "entrypoint": _str(obj.get("entrypoint")),
    }
    if kind == "assistant":
        return _assistant(obj, at, common)
    if kind == "user":
        return _user(obj, at, common)
    if kind == "system":
        return retry_wait(obj, at, common) or _system(obj, at, common)
    if kind == "attachment":
        return _attachment(obj, at, common)
    return Record(RecordKind.OTHER, at, **common)


def _assistant(obj: dict[str, Any], at: datetime | None, common: dict[str, Any]) -> Record:
    message = obj.get("message")
    if obj.get("isApiErrorMessage") is True:
        text = message_text(message)
        kind = api_error_kind(obj, text)
        limit = limit_info(obj) if kind is RecordKind.LIMIT_STOP else None
        return Record(kind, at, text=text, limit=limit, **common)
    return Record(RecordKind.ASSISTANT, at, usage=usage_of(obj, at), **common)


def api_error_kind(obj: dict[str, Any], text: str) -> RecordKind:
    """A limit stop, a transient 429 or another API error — structured fields first."""
    if obj.get("apiError", obj.get("api_error")) == "usage_limit_reached" or _rate_limit_info(
            obj) is not None:
        return RecordKind.LIMIT_STOP
    transient = obj.get("apiErrorIsTransient", obj.get("api_error_is_transient"))
    if transient is True or is_transient_text(text):
        return RecordKind.TRANSIENT
    error = obj.get("error")
    if looks_like_limit(text) and error in (None, "rate_limit"):
        return RecordKind.LIMIT_STOP  # versions before the structured fields
    if error == "rate_limit":
        return RecordKind.TRANSIENT  # a 429 nothing identifies as a usage limit
    return RecordKind.API_ERROR


def _rate_limit_info(obj: dict[str, Any]) -> dict[str, Any] | None:
    params = obj.get("apiErrorParams", obj.get("api_error_params"))
    info = params.get("rate_limit_info") if isinstance(params, dict) else None
    if not isinstance(info, dict):
        info = obj.get("quotaLimits")
    if isinstance(info, dict) and info.get("status") == "rejected":
        return info
    return None


def limit_info(obj: dict[str, Any]) -> LimitInfo | None:
    """The structured limit of an API-error record (None for older, text-only records)."""
    info = _rate_limit_info(obj)
    if info is None:
        return None
    resets = info.get("resetsAt")
    if not isinstance(resets, int | float) or isinstance(resets, bool) or resets <= 0:
        resets = None
    return LimitInfo(_str(info.get("rateLimitType")), float(resets) if resets else None,
                     info.get("isUsingOverage") is True or info.get("overageInUse") is True)


def usage_of(obj: dict[str, Any], at: datetime | None) -> ResponseUsage | None:
    message = obj.get("message")
    if not isinstance(message, dict) or at is None:
        return None
    usage = message.get("usage")
    model = message.get("model")
    if not isinstance(usage, dict) or model == "<synthetic>":
        return None
    return ResponseUsage(usage_key(obj, message), at, _str(model) or "unknown",
                         _int(usage.get("input_tokens")),
                         _int(usage.get("output_tokens")),
                         _int(usage.get("cache_creation_input_tokens")),
                         _int(usage.get("cache_read_input_tokens")))


def usage_key(obj: dict[str, Any], message: dict[str, Any]) -> str:
    """``<message id>:<request id>``; a response without an id is keyed by its record uuid."""
    message_id = message.get("id")
    if isinstance(message_id, str) and message_id:
        return f"{message_id}:{_str(obj.get('requestId')) or ''}"
    return f"uuid:{obj.get('uuid')}"


def _user(obj: dict[str, Any], at: datetime | None, common: dict[str, Any]) -> Record:
    if obj.get("isMeta") is True:
        return Record(RecordKind.OTHER, at, **common)
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        return Record(RecordKind.TOOL_RESULT, at, **common)
    text = message_text(message).strip()
    if text.startswith("<local-command-stdout>"):
        # /rate-limit-options "Wait here, then continue automatically" answers here
        return _native(text.removeprefix("<local-command-stdout>").removesuffix(
            "</local-command-stdout>").strip(), at, common)
    if not text or text.startswith(_NOT_A_PROMPT):
        return Record(RecordKind.OTHER, at, **common)
    return Record(RecordKind.PROMPT, at, text=text, **common)


def retry_wait(obj: dict[str, Any], at: datetime | None,
               common: dict[str, Any]) -> Record | None:
    """The record of an in-process wait for a usage limit's reset, else None.

    With ``CLAUDE_CODE_RETRY_WATCHDOG`` set (any run, print mode included) Claude Code does not
    stop at a usage limit: it retries the request after the reset and writes, per attempt (seen
    on 2.1.328 and 2.1.332)::

        {"type":"system","subtype":"api_error","level":"error","error":{"status":429,
         "formatted":"429 Rate limit exceeded","rateLimits":{"rateLimitType":"five_hour",
         "resetsAt":1796525301},…},"retryInMs":17459,"retryAttempt":1,"maxRetries":300,
         "source":"request_retry",…}

    Other retried errors (529, 500, a transient 429) carry no ``rateLimits`` reset.
    """
    error = obj.get("error")
    if obj.get("subtype") != "api_error" or not isinstance(error, dict) or error.get(
            "status") != 429:
        return None
    limits = error.get("rateLimits")
    resets = limits.get("resetsAt") if isinstance(limits, dict) else None
    if not isinstance(resets, int | float) or isinstance(resets, bool) or resets <= 0:
        return None
    assert isinstance(limits, dict)
    text = _str(error.get("formatted")) or "429"
    return Record(RecordKind.RETRY_WAIT, at, text=text, **common,
                  limit=LimitInfo(_str(limits.get("rateLimitType")), float(resets)))


def _system(obj: dict[str, Any], at: datetime | None, common: dict[str, Any]) -> Record:
    content = obj.get("content")
    return _native(content if isinstance(content, str) else "", at, common)


_NATIVE_KINDS = {"cancelled": RecordKind.NATIVE_CANCELLED, "fired": RecordKind.NATIVE_FIRED,
                 "waiting": RecordKind.NATIVE_WAITING}


def _native(text: str, at: datetime | None, common: dict[str, Any]) -> Record:
    kind = _NATIVE_KINDS.get(native_kind(text) or "")
    if kind is None:
        return Record(RecordKind.OTHER, at, **common)
    return Record(kind, at, text=text, **common)


def _attachment(obj: dict[str, Any], at: datetime | None, common: dict[str, Any]) -> Record:
    attachment = obj.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "goal_status":
        return Record(RecordKind.OTHER, at, **common)
    condition = attachment.get("condition")
    if not isinstance(condition, str) or not condition.strip():
        return Record(RecordKind.OTHER, at, **common)
    goal = GoalStatus(condition.strip(), attachment.get("met") is True,
                      attachment.get("failed") is True, _str(attachment.get("reason")))
    return Record(RecordKind.GOAL_STATUS, at, text=goal.condition, goal=goal, **common)


def title_of(prompt: str) -> str:
    """A goal title from the first prompt: one line, trimmed, at most ``TITLE_MAX`` chars."""
    line = " ".join(prompt.split())
    if len(line) <= TITLE_MAX:
        return line
    return line[: TITLE_MAX - 1].rstrip() + "…"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
