"""One transcript line of Claude Code, classified.

Transcripts (``<config>/projects/<encoded cwd>/<session>.jsonl``) hold one JSON record per line:
user prompts and tool results (``type: user``), assistant messages with ``message.usage``,
system notices, summaries, snapshots. Goalkeeper cares about a few kinds only — see
:class:`Kind`. Unknown shapes are ``OTHER``; fields are read defensively because they vary by
version (``provider-formats.md`` B2).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from core.providers.claude.wording import looks_like_limit

TITLE_MAX = 120

# the TUI's own notice while it waits out a limit by itself ("native auto-continue"), and the
# one it writes when the wait ends; see anthropics/claude-code docs "Wait for a usage limit"
_NATIVE_WAITING = re.compile(r"continuing automatically at|no longer ends this wait", re.I)
_NATIVE_FIRED = re.compile(r"limit reset\s*·\s*continuing automatically", re.I)
# user records that are not the user working on the task: slash commands, their output, caveats
_NOT_A_PROMPT = ("<command-", "<local-command-", "Caveat:", "[Request interrupted")


class Kind(StrEnum):
    PROMPT = "prompt"  # the user typed something
    TOOL_RESULT = "tool_result"  # a tool ran for the assistant
    ASSISTANT = "assistant"  # a model response (may carry usage)
    LIMIT_STOP = "limit_stop"  # the synthetic "You've hit your … limit" record
    API_ERROR = "api_error"  # another API error (the request got through the quota)
    NATIVE_WAITING = "native_waiting"  # Claude Code waits to continue by itself
    NATIVE_FIRED = "native_fired"  # Claude Code continued by itself
    OTHER = "other"

    @property
    def activity(self) -> bool:
        """Work happened in the session (so a limit stop before it is over)."""
        return self in (Kind.PROMPT, Kind.TOOL_RESULT, Kind.ASSISTANT, Kind.API_ERROR,
                        Kind.NATIVE_FIRED)


@dataclass(frozen=True)
class Usage:
    """Token usage of one model response; ``key`` de-duplicates (message id + request id)."""

    key: str
    at: datetime
    model: str
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int


@dataclass(frozen=True)
class Record:
    kind: Kind
    at: datetime | None
    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    text: str | None = None
    usage: Usage | None = None
    sidechain: bool = False


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
            obj = json.loads(line)
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
    }
    if kind == "assistant":
        return _assistant(obj, at, common)
    if kind == "user":
        return _user(obj, at, common)
    if kind == "system":
        return _system(obj, at, common)
    return Record(Kind.OTHER, at, **common)


def _assistant(obj: dict[str, Any], at: datetime | None, common: dict[str, Any]) -> Record:
    message = obj.get("message")
    if obj.get("isApiErrorMessage") is True:
        text = message_text(message)
        error = obj.get("error")
        if error == "rate_limit" or (error is None and looks_like_limit(text)):
            return Record(Kind.LIMIT_STOP, at, text=text, **common)
        return Record(Kind.API_ERROR, at, text=text, **common)
    return Record(Kind.ASSISTANT, at, usage=usage_of(obj, at), **common)


def usage_of(obj: dict[str, Any], at: datetime | None) -> Usage | None:
    message = obj.get("message")
    if not isinstance(message, dict) or at is None:
        return None
    usage = message.get("usage")
    model = message.get("model")
    if not isinstance(usage, dict) or model == "<synthetic>":
        return None
    return Usage(usage_key(obj, message), at, _str(model) or "unknown",
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
        return Record(Kind.OTHER, at, **common)
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        return Record(Kind.TOOL_RESULT, at, **common)
    text = message_text(message).strip()
    if not text or text.startswith(_NOT_A_PROMPT):
        return Record(Kind.OTHER, at, **common)
    return Record(Kind.PROMPT, at, text=text, **common)


def _system(obj: dict[str, Any], at: datetime | None, common: dict[str, Any]) -> Record:
    content = obj.get("content")
    text = content if isinstance(content, str) else ""
    if _NATIVE_FIRED.search(text):
        return Record(Kind.NATIVE_FIRED, at, text=text, **common)
    if _NATIVE_WAITING.search(text):
        return Record(Kind.NATIVE_WAITING, at, text=text, **common)
    return Record(Kind.OTHER, at, **common)


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
