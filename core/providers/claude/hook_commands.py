"""What ``goalkeeper hook claude-statusline`` and ``hook claude-stop-failure`` do.

Both run inside Claude Code, so they must be quick and must never get in its way:

* the statusline command runs the user's own statusline command (``--chain``) with the very
  same stdin and writes its stdout back **byte for byte** (and exits with its status) before
  doing anything else; then it records the payload's exact ``rate_limits``;
* the StopFailure hook always exits 0 and prints nothing.

Recording goes to the running host over its control socket (``claude.statusline``,
``claude.hook``) or, with no host, straight into the store (readings) or the hook spool
(events). A failure to record is swallowed: the statusline must keep working.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import datetime
from typing import Any, BinaryIO

from core.models import QuotaReading
from core.providers.claude.events import event_from_payload, event_to_json
from core.providers.claude.readings import statusline_readings
from core.providers.claude.sessions import HookEvent


def run_chain(chain: str | None, stdin: bytes, stdout: BinaryIO) -> int:
    """Run the user's statusline command on ``stdin``; its output goes to ``stdout`` unchanged.

    The command runs through the shell, as Claude Code itself runs it; its stderr is inherited.
    """
    if not chain:
        return 0
    done = subprocess.run(chain, shell=True, input=stdin, stdout=subprocess.PIPE, check=False)
    stdout.write(done.stdout)
    stdout.flush()
    return done.returncode


def parse_payload(stdin: bytes) -> dict[str, Any] | None:
    try:
        payload = json.loads(stdin)
    except (ValueError, UnicodeDecodeError):
        return None
    return payload if isinstance(payload, dict) else None


def readings_of(stdin: bytes, now: datetime) -> list[QuotaReading]:
    payload = parse_payload(stdin)
    return statusline_readings(payload, now) if payload is not None else []


def stop_failure_event(stdin: bytes, now: datetime) -> HookEvent | None:
    payload = parse_payload(stdin)
    return event_from_payload(payload, now) if payload is not None else None


def deliver_event(payload: dict[str, Any], now: datetime,
                  ask_host: Callable[[dict[str, Any]], bool],
                  spool: Callable[[dict[str, Any]], None]) -> HookEvent | None:
    """Hand a hook payload to the host, or spool it when no host runs."""
    event = event_from_payload(payload, now)
    if event is None:
        return None
    if not ask_host({"op": "claude.hook", "payload": payload, "received_at": now.isoformat()}):
        spool(event_to_json(event))
    return event
