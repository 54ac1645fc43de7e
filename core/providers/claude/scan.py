"""Reading transcript bytes fast: usage and limit stops without decoding every line.

A full history can be gigabytes, and almost all of it is prompt, tool output and model text that
Goalkeeper never needs. :func:`scan_bytes` therefore looks for the few byte patterns that matter
(``"usage":`` and ``"isApiErrorMessage":`` — a quote inside a JSON string is always escaped,
so these raw bytes are keys, never text) and decodes only what it must:

* a response line in the shape Claude Code writes (``"message":{"id":"…"`` … ``"usage":{…}``,
  top-level ``"type":"assistant"``) is read with a handful of ``bytes.find`` calls and two small
  regular expressions, and only when its key (message id + request id) is new;
* anything else that mentions ``usage`` (other key orders, usage nested in tool results or
  progress records) falls back to ``json.loads`` and
  :func:`~core.providers.claude.records.classify`;
* the rare limit-stop lines, Claude's own ``/goal`` status attachments (``"goal_status"``), and
  the lines after a file's last stop (to see whether the session went on, or what Claude's own
  auto-continue said), are always decoded.

The same code serves the first full scan and the appends that follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.providers import jsonload
from core.providers.claude.ledger import LimitStopRecord, UsageLedger
from core.providers.claude.records import GoalStatus, Record, RecordKind, classify, parse_time

_USAGE = b'"usage":'
_API_ERROR = b'"isApiErrorMessage":'
#: a ``system`` record of a retried request (a retry-watchdog wait is one, see records.py)
_RETRIED = b'"subtype":"api_error"'
_MESSAGE = b'"message":{'
_MESSAGE_ID = b'"message":{"id":"'
_REQUEST = b'"requestId":"'
_ASSISTANT = b'"type":"assistant"'
_MODEL = b'"model":"'
_TIMESTAMP = b'"timestamp":"'
_NESTED = re.compile(rb"\{[^{}]*\}")
_TOKENS = re.compile(
    rb'"(input_tokens|output_tokens|cache_creation_input_tokens|cache_read_input_tokens)":(\d+)')
_USAGE_ORDERED = re.compile(
    rb'"input_tokens":(\d+),"cache_creation_input_tokens":(\d+),"cache_read_input_tokens":(\d+),'
    rb'(?:"cache_creation":\{[^{}]*\},)?"output_tokens":(\d+)[,}]')
_SYNTHETIC = b"<synthetic>"
_GOAL_STATUS = b'"goal_status"'


@dataclass
class Malformed:
    """Lines that could not be read, by reason (each reason is logged once per file)."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, reason: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1


@dataclass
class StopState:
    """The session's latest limit stop and what followed it."""

    stop: Record | None = None
    stop_key: str | None = None
    activity_at: datetime | None = None  # first work after the stop: the stop is over
    #: Claude's own auto-continue notice after the stop, the latest one: armed (waiting),
    #: stood down (cancelled) or fired
    native: Record | None = None

    def feed(self, record: Record, key: str | None = None) -> None:
        if record.kind in (RecordKind.LIMIT_STOP, RecordKind.RETRY_WAIT):
            self.stop, self.stop_key = record, key
            self.activity_at = None
            # a retry wait is its own armed wait: Claude goes on while its process lives
            self.native = record if record.kind is RecordKind.RETRY_WAIT else None
        elif self.stop is None or self.activity_at is not None:
            return
        elif record.kind.activity:
            self.activity_at = record.at or self.stop.at
            if record.kind is RecordKind.NATIVE_FIRED:
                self.native = record
        elif record.kind in (RecordKind.NATIVE_WAITING, RecordKind.NATIVE_CANCELLED):
            self.native = record


@dataclass
class FileFacts:
    """What one transcript file has shown so far (kept between reads)."""

    stops: StopState = field(default_factory=StopState)
    malformed: Malformed = field(default_factory=Malformed)
    last_at: datetime | None = None
    first_prompt: str | None = None
    cwd: str | None = None
    branch: str | None = None
    version: str | None = None
    goal: GoalStatus | None = None  # Claude's own /goal, as its latest status says
    goal_at: datetime | None = None


@dataclass
class LineSink:
    """Where decoded records go: the ledger (usage, stops) and the file's own facts."""

    ledger: UsageLedger
    facts: FileFacts
    session_id: str
    #: the lines come from the file's start, in order: the first prompt seen is the first one
    from_start: bool = False

    def record(self, record: Record, obj: dict[str, Any]) -> None:
        facts = self.facts
        if record.usage is not None:
            usage = record.usage
            self.ledger.add(usage.key.encode(), usage.at.timestamp(), usage.model,
                            (usage.input_tokens, usage.output_tokens,
                             usage.cache_creation_tokens, usage.cache_read_tokens))
        key = None
        if record.kind in (RecordKind.LIMIT_STOP, RecordKind.RETRY_WAIT) and record.at is not None:
            key = _stop_key(obj)
            limit = record.limit
            self.ledger.add_stop(LimitStopRecord(
                key, record.at, record.session_id or self.session_id, record.text or "",
                limit.rate_limit_type if limit else None, limit.resets_at if limit else None,
                limit.using_overage if limit else False))
        if record.kind is RecordKind.PROMPT and facts.first_prompt is None and self.from_start:
            facts.first_prompt = record.text
        if record.goal is not None and not record.sidechain and (
                facts.goal_at is None or record.at is None or record.at >= facts.goal_at):
            facts.goal, facts.goal_at = record.goal, record.at or facts.goal_at
        facts.stops.feed(record, key)
        if record.at is not None and (facts.last_at is None or record.at > facts.last_at):
            facts.last_at = record.at
        facts.cwd = record.cwd or facts.cwd
        facts.branch = record.branch or facts.branch
        version = obj.get("version")
        if isinstance(version, str) and not record.sidechain:
            facts.version = version


def decode_line(line: bytes, sink: LineSink) -> None:
    """Decode one line fully and hand its record to ``sink`` (malformed lines are counted)."""
    if not line.strip():
        return
    try:
        obj = jsonload.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        sink.facts.malformed.add("invalid JSON" if isinstance(exc, ValueError) else "invalid UTF-8")
        return
    if not isinstance(obj, dict):
        sink.facts.malformed.add("not a JSON object")
        return
    sink.record(classify(obj), obj)


def decode_lines(buf: bytes, start: int, end: int, sink: LineSink) -> None:
    """Decode every complete line in ``buf[start:end]`` (appends, and the tail after a stop)."""
    pos = start
    while pos < end:
        nl = buf.find(b"\n", pos, end)
        if nl < 0:
            nl = end
        decode_line(buf[pos:nl], sink)
        pos = nl + 1


def holds_api_error(buf: bytes) -> bool:
    """``buf`` has an API-error line — every limit stop and retry wait is one (nothing is
    decoded)."""
    return _API_ERROR in buf or _RETRIED in buf


def scan_bytes(buf: bytes, sink: LineSink) -> int:
    """Scan the complete lines of ``buf`` (a file's content from offset 0, or an append).

    Usage goes to the ledger, limit stops to the ledger and ``sink.stops``; the lines after the
    last stop are decoded until the session shows activity. Returns the number of bytes consumed
    (up to and including the last newline; a partial last line is left for the next read).
    """
    end = buf.rfind(b"\n") + 1
    if end == 0:
        return 0
    _scan_usage(buf, end, sink)
    _scan_goals(buf, end, sink)
    last_stop = _scan_stops(buf, end, sink)
    if last_stop is not None:
        _decode_until_activity(buf, buf.find(b"\n", last_stop, end) + 1, end, sink)
    elif sink.facts.stops.stop is not None:
        _decode_until_activity(buf, 0, end, sink)  # a stop from an earlier read is pending
    _note_last_time(buf, end, sink)
    return end


def _scan_usage(buf: bytes, end: int, sink: LineSink) -> None:
    find, rfind = buf.find, buf.rfind
    ledger = sink.ledger
    seen = ledger.seen_keys
    pos = 0
    while (hit := find(_USAGE, pos, end)) >= 0:
        start = rfind(b"\n", 0, hit) + 1
        stop = find(b"\n", hit, end)
        # API-error lines (limit stops) are decoded by _scan_stops
        if not _fast_usage(buf, start, hit, stop, ledger, seen) and not _api_error(
                buf, start, stop):
            decode_line(buf[start:stop], sink)
        pos = stop + 1


def _fast_usage(buf: bytes, start: int, hit: int, stop: int, ledger: UsageLedger,
                seen: set[bytes]) -> bool:
    """Count a response line in Claude Code's usual shape; False: decode it instead.

    Every search is kept to the short stretches around the message header and after the usage
    object; the content in between (the bulk of a line) is never scanned twice. Most lines
    repeat a response already counted (one line per content block), so the key comes first.
    """
    find = buf.find
    msg = find(_MESSAGE, start, hit)
    if msg < 0 or not buf.startswith(_MESSAGE_ID, msg):
        return False
    id_start = msg + len(_MESSAGE_ID)
    req = find(_REQUEST, hit, stop)  # Claude writes requestId after the message
    if req < 0:
        req = find(_REQUEST, start, msg)
    request = buf[req + 13:find(b'"', req + 13, stop)] if req >= 0 else b""
    key = buf[id_start:find(b'"', id_start, hit)] + b":" + request
    if key in seen:
        return True
    return _count_new(buf, start, msg, stop, key, ledger)


def _count_new(buf: bytes, start: int, msg: int, stop: int, key: bytes,
               ledger: UsageLedger) -> bool:
    find = buf.find
    usage_at = buf.rfind(_USAGE, msg, stop)  # the message's own usage is its last key
    body = usage_at + len(_USAGE) + 1
    if buf[body - 1:body] != b"{":
        return False  # not Claude's compact JSON: decode
    # top-level keys come after the message object (Claude's order) or before it
    if find(_ASSISTANT, usage_at, stop) < 0 and find(_ASSISTANT, start, msg) < 0:
        return False
    stamp_at = find(_TIMESTAMP, usage_at, stop)
    if stamp_at < 0:
        stamp_at = find(_TIMESTAMP, start, msg)
    model_at = find(_MODEL, msg, usage_at) + 9
    tokens = _tokens(buf, body, stop)
    at = _time(buf, stamp_at, stop)
    if model_at < 9 or tokens is None or at is None:
        return False
    model = buf[model_at:find(b'"', model_at, stop)]
    if model != _SYNTHETIC:
        ledger.add(key, at, model.decode(errors="replace"), tokens)
    return True


def _tokens(buf: bytes, body: int, stop: int) -> tuple[int, int, int, int] | None:
    """The four token counts of the usage object whose body starts at ``body``."""
    match = _USAGE_ORDERED.match(buf, body)
    if match is not None:  # the order the Messages API writes
        inp, creation, read, out = match.groups()
        return int(inp), int(out), int(creation), int(read)
    end = _object_end(buf, body, stop)
    if end < 0:
        return None
    text = buf[body:end]
    if b"{" in text:
        text = _NESTED.sub(b"", text)
    found = dict(_TOKENS.findall(text))
    return (int(found.get(b"input_tokens", 0)), int(found.get(b"output_tokens", 0)),
            int(found.get(b"cache_creation_input_tokens", 0)),
            int(found.get(b"cache_read_input_tokens", 0)))


def _time(buf: bytes, stamp_at: int, stop: int) -> float | None:
    if stamp_at < 0:
        return None
    return epoch_of(buf[stamp_at + 13:buf.find(b'"', stamp_at + 13, stop)])


_MINUTES: dict[bytes, float] = {}


def epoch_of(stamp: bytes) -> float | None:
    """Epoch seconds of an ISO 8601 timestamp; Claude's ``2026-07-07T13:40:11.204Z`` shape is
    read with a per-minute cache (the general parser is several times slower)."""
    if len(stamp) == 24 and stamp[23:] == b"Z" and stamp[19:20] == b".":
        minute = _MINUTES.get(stamp[:16])
        if minute is None:
            minute = _parse_epoch(stamp[:16] + b":00Z")
            if minute is None:
                return None
            if len(_MINUTES) > 200_000:
                _MINUTES.clear()
            _MINUTES[stamp[:16]] = minute
        try:
            return minute + int(stamp[17:23].replace(b".", b"")) / 1000
        except ValueError:
            return None
    return _parse_epoch(stamp)


def _parse_epoch(stamp: bytes) -> float | None:
    try:
        parsed = datetime.fromisoformat(stamp.decode())
    except (ValueError, UnicodeDecodeError):
        return None
    return parsed.timestamp() if parsed.tzinfo is not None else None


def _object_end(buf: bytes, body: int, stop: int) -> int:
    """The offset of the ``}`` closing the object whose body starts at ``body`` (-1: none).

    JSON strings cannot hold raw braces here (token counts and short names), so counting the
    ``{`` met on the way is enough.
    """
    close = buf.find(b"}", body, stop)
    nested = buf.find(b"{", body, close) if close >= 0 else -1
    while nested >= 0 and close >= 0:
        close = buf.find(b"}", close + 1, stop)
        nested = buf.find(b"{", nested + 1, close) if close >= 0 else -1
    return close


def _api_error(buf: bytes, start: int, stop: int) -> bool:
    """The line has ``"isApiErrorMessage": true``."""
    at = buf.find(_API_ERROR, start, stop)
    return at >= 0 and buf[at + len(_API_ERROR):at + len(_API_ERROR) + 6].lstrip()[:4] == b"true"


def _scan_goals(buf: bytes, end: int, sink: LineSink) -> None:
    """Decode the lines that carry a ``goal_status`` (Claude's own /goal): few per session."""
    pos = 0
    while (hit := buf.find(_GOAL_STATUS, pos, end)) >= 0:
        start = buf.rfind(b"\n", 0, hit) + 1
        stop = buf.find(b"\n", hit, end)
        decode_line(buf[start:stop], sink)
        pos = stop + 1


def _scan_stops(buf: bytes, end: int, sink: LineSink) -> int | None:
    """Decode every API-error and retried-request line; return the offset of the last limit
    stop's (or retry wait's) line."""
    last: int | None = None
    pos = 0
    while (hit := _next_error(buf, pos, end)) >= 0:
        start = buf.rfind(b"\n", 0, hit) + 1
        stop = buf.find(b"\n", hit, end)
        if stop < 0:
            stop = end
        if _api_error(buf, start, stop) or buf.find(_RETRIED, start, stop) >= 0:
            before = sink.facts.stops.stop
            decode_line(buf[start:stop], sink)
            if sink.facts.stops.stop is not before:
                last = start
        pos = stop + 1
    return last


def _next_error(buf: bytes, pos: int, end: int) -> int:
    """The offset of the next API-error or retried-request key at or after ``pos`` (-1: none)."""
    hits = [h for h in (buf.find(_API_ERROR, pos, end), buf.find(_RETRIED, pos, end)) if h >= 0]
    return min(hits) if hits else -1


def _decode_until_activity(buf: bytes, start: int, end: int, sink: LineSink) -> None:
    pos = start
    while pos < end and sink.facts.stops.activity_at is None:
        nl = buf.find(b"\n", pos, end)
        decode_line(buf[pos:nl], sink)
        pos = nl + 1


def _note_last_time(buf: bytes, end: int, sink: LineSink) -> None:
    """The newest record time, from the last line that has one (cheap: no decoding)."""
    start = buf.rfind(b"\n", 0, end - 1) + 1
    stamp_at = buf.rfind(_TIMESTAMP, start, end)
    if stamp_at < 0:
        return
    stamp = buf[stamp_at + 13:buf.find(b'"', stamp_at + 13, end)]
    at = parse_time(stamp.decode(errors="replace"))
    if at is not None and (sink.facts.last_at is None or at > sink.facts.last_at):
        sink.facts.last_at = at


def _stop_key(obj: dict[str, Any]) -> str:
    message = obj.get("message")
    message_id = message.get("id") if isinstance(message, dict) else None
    return str(message_id or obj.get("uuid") or obj.get("timestamp"))
