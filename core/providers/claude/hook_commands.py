"""What ``goalkeeper hook claude-statusline`` and ``hook claude-stop-failure`` do.

Both run inside Claude Code, so they must be quick and must never get in its way:

* the statusline command runs the user's own statusline command (``--chain``) with the very
  same stdin and writes its stdout back **byte for byte** (and exits with its status) before
  doing anything else; then it records the payload's exact ``rate_limits``;
* the StopFailure hook always exits 0 and prints nothing; it appends the raw payload to the hook
  spool (durably, before anything else — :mod:`core.providers.claude.stop_hook`, the same code
  the installed fast hook command runs), which the host reads on every poll.

Statusline readings go to the running host over its control socket (``claude.statusline``) or,
with no host, straight into the store. A failure to record is swallowed: the statusline must keep
working.
"""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from typing import Any, BinaryIO

from core.models import QuotaReading
from core.providers.claude.readings import statusline_readings
from core.providers.claude.stop_hook import append_durably, spool_line


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


def spool_payload(stdin: bytes, spool: str, now: datetime) -> bool:
    """Append a hook payload to the spool, durably; False when it is not a JSON object."""
    line = spool_line(stdin, now.timestamp())
    if line is None or parse_payload(stdin) is None:
        return False
    append_durably(spool, line)
    return True
