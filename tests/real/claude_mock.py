"""A mock Anthropic Messages API for the real ``claude`` (2.1.328), on 127.0.0.1.

The CLI's only request offline is ``POST /v1/messages?beta=true`` with SSE (B0). Every answer the
contract tests need is one :class:`Answer`:

* :meth:`Answer.ok` — a streamed text reply, with ``anthropic-ratelimit-unified-*`` headers
  carrying the 5-hour and 7-day utilization (the statusline and ``rate_limit_event`` read them);
* :meth:`Answer.limit` — a 429 for a usage limit of any ``rateLimitType`` the 2.1.328 bundle knows
  (``five_hour``, ``seven_day``, ``seven_day_opus``, ``seven_day_sonnet``,
  ``seven_day_overage_included`` — "Fable" —, ``overage``), with the headers the CLI reads:
  ``-status: rejected``, ``-reset``, ``-representative-claim``, ``-overage-status``,
  ``-overage-disabled-reason`` and per window ``-{5h,7d,7d_oi}-{utilization,reset,status}``
  (a weekly-only account sends no ``5h`` ones);
* :meth:`Answer.server_busy` — a 429 with no unified headers: a subscriber's CLI calls it "Server
  is temporarily limiting requests (not your usage limit)" (``apiErrorIsTransient``), an API-key
  CLI "Request rejected (429)".

Answers are taken from a queue (:meth:`ClaudeApi.then`), the default answer when it is empty.
A request from Claude's ``/goal`` Stop-hook evaluator ("has the following stopping condition been
satisfied?") is answered ``{"ok": true}`` without touching the queue. Every request is recorded
with the session it belongs to (the ``x-claude-code-session-id`` header) and its entrypoint (the
user agent says ``cli`` for the TUI, ``sdk-cli`` for print mode).
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
import threading
import time
from typing import Any

from tests.real.mockhttp import Reply, Request

SSE_MODEL = "claude-sonnet-4-5"
#: the usage every ok answer reports (input, cache creation, cache read, output)
USAGE = (12, 1850, 40210, 310)
EVALUATOR = "has the following stopping condition been satisfied"
_HEADER_WINDOW = {"five_hour": "5h", "seven_day": "7d", "seven_day_overage_included": "7d_oi"}
_ids = itertools.count(1)


@dataclasses.dataclass(frozen=True)
class Answer:
    """One reply of the mock: a status, headers, and an SSE body or a JSON error."""

    status: int
    headers: dict[str, str]
    text: str | None = None  # the streamed reply (200 only)
    delay: float = 0.0  # seconds before answering (a turn still in progress meanwhile)

    @classmethod
    def ok(cls, text: str = "Done: the tests pass now.", five_hour: float = 0.42,
           seven_day: float = 0.17, now: float | None = None) -> Answer:
        now = now or time.time()
        return cls(200, {
            "anthropic-ratelimit-unified-status": "allowed",
            "anthropic-ratelimit-unified-5h-utilization": str(five_hour),
            "anthropic-ratelimit-unified-5h-reset": str(int(now) + 3 * 3600),
            "anthropic-ratelimit-unified-7d-utilization": str(seven_day),
            "anthropic-ratelimit-unified-7d-reset": str(int(now) + 4 * 86400),
        }, text)

    @classmethod
    def limit(cls, kind: str, resets_at: int, *, weekly_only: bool = False,
              now: float | None = None) -> Answer:
        """A usage limit of ``kind`` (a ``rateLimitType``) that resets at ``resets_at``."""
        now = now or time.time()
        week = resets_at if kind.startswith("seven_day") else int(now) + 4 * 86400
        headers = {
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(resets_at),
            "anthropic-ratelimit-unified-representative-claim": kind,
            "anthropic-ratelimit-unified-overage-status": "rejected",
            "anthropic-ratelimit-unified-overage-disabled-reason": "out_of_credits",
            "anthropic-ratelimit-unified-7d-utilization": "1.0" if kind == "seven_day" else "0.5",
            "anthropic-ratelimit-unified-7d-reset": str(week),
        }
        if kind == "overage":
            headers["anthropic-ratelimit-unified-overage-reset"] = str(resets_at)
        if not weekly_only:
            headers["anthropic-ratelimit-unified-5h-utilization"] = (
                "1.0" if kind == "five_hour" else "0.3")
            headers["anthropic-ratelimit-unified-5h-reset"] = str(
                resets_at if kind == "five_hour" else int(now) + 3 * 3600)
        if kind in _HEADER_WINDOW and kind not in ("five_hour", "seven_day"):
            short = _HEADER_WINDOW[kind]
            headers[f"anthropic-ratelimit-unified-{short}-utilization"] = "1.0"
            headers[f"anthropic-ratelimit-unified-{short}-reset"] = str(resets_at)
            headers[f"anthropic-ratelimit-unified-{short}-status"] = "rejected"
        return cls(429, headers)

    @classmethod
    def server_busy(cls) -> Answer:
        """A 429 that is not a usage limit: no unified headers at all."""
        return cls(429, {})

    def reply(self) -> Reply:
        if self.status != 200:
            return Reply.json({"type": "error", "error": {"type": "rate_limit_error",
                                                          "message": "Rate limit exceeded"}},
                              self.status, self.headers)
        return Reply.sse(sse_message(self.text or "Done."), headers=self.headers)


def sse_message(text: str) -> list[tuple[str, Any]]:
    """A Messages API stream of one text block, with :data:`USAGE`."""
    inp, creation, read, out = USAGE
    message_id = f"msg_mock{next(_ids):06d}"
    return [
        ("message_start", {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": SSE_MODEL,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": inp, "cache_creation_input_tokens": creation,
                      "cache_read_input_tokens": read, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": out}}),
        ("message_stop", {"type": "message_stop"}),
    ]


@dataclasses.dataclass(frozen=True)
class Seen:
    """A Messages request the mock answered."""

    session_id: str | None
    entrypoint: str | None  # "cli" (TUI) or "sdk-cli" (print mode)
    status: int
    evaluator: bool
    prompt: str


class ClaudeApi:
    """The handler of a :class:`~tests.real.mockhttp.MockServer` playing the Messages API."""

    def __init__(self, default: Answer | None = None) -> None:
        self.default = default or Answer.ok()
        self._queue: collections.deque[Answer] = collections.deque()
        self._lock = threading.Lock()
        self.seen: list[Seen] = []

    def then(self, *answers: Answer) -> ClaudeApi:
        """Queue answers for the next requests (in order)."""
        with self._lock:
            self._queue.extend(answers)
        return self

    def reset(self, default: Answer | None = None) -> None:
        with self._lock:
            self._queue.clear()
            self.seen.clear()
            if default is not None:
                self.default = default

    def __call__(self, request: Request) -> Reply:
        if request.method != "POST" or request.path != "/v1/messages":
            return Reply.json({"type": "error", "error": {"type": "not_found_error",
                                                          "message": request.path}}, 404)
        body = request.body.decode(errors="replace")
        evaluator = EVALUATOR in body
        with self._lock:
            answer = (Answer.ok('{"ok": true, "reason": "the condition holds"}') if evaluator
                      else self._queue.popleft() if self._queue else self.default)
            self.seen.append(Seen(request.headers.get("x-claude-code-session-id"),
                                  _entrypoint(request.headers.get("user-agent", "")),
                                  answer.status, evaluator, _last_prompt(body)))
        if answer.delay:
            time.sleep(answer.delay)
        return answer.reply()

    def requests_of(self, session_id: str, entrypoint: str | None = None) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if s.session_id == session_id and not s.evaluator
                    and (entrypoint is None or s.entrypoint == entrypoint)]


def _entrypoint(agent: str) -> str | None:
    # "claude-cli/2.1.328 (external, sdk-cli)"
    if "(" not in agent:
        return None
    return agent.rsplit(",", 1)[-1].strip(" )") or None


def _last_prompt(body: str) -> str:
    """The text of the request's last user message (its text blocks joined)."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    messages = data.get("messages") if isinstance(data, dict) else None
    users = [m for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        return ""
    content = users[-1].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))
