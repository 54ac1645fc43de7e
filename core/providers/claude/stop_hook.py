"""The StopFailure (and Notification) hook's fast path: spool the payload durably, first.

In print mode Claude Code 2.1.328 sends SIGTERM to its hook processes about 25 ms after starting
them, and SIGKILL about 1.4 s later. So the installed hook command is::

    trap '' TERM; exec <python> -I -S <this file> <spool> # goalkeeper hook claude-stop-failure

— SIGTERM is ignored before the interpreter starts (an ignored signal stays ignored across
``exec``; the shell's trap is the only place that does it: importing ``signal`` here would cost
~5 ms), and this script imports nothing beyond the interpreter's own core (``-S``: no site
packages), so the payload is appended and ``fsync``-ed within ~10 ms of the process starting
(``bench/claude_hook.py`` measures it). The host reads the spool on every poll; nothing else is
done here, so nothing can be lost to a slow import or a busy host.

The line format is ``{"received_at": <epoch seconds>, "payload": <the payload as received>}``
(:func:`core.providers.claude.events.event_from_json` reads it). The append takes the same
``flock`` as the host's compaction and checks that the file was not replaced meanwhile.

Must stay importable and runnable without the ``core`` package on the path.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time


def spool_line(payload: bytes, received_at: float) -> bytes | None:
    """The spool line for a raw payload (None when it cannot be a JSON object)."""
    body = payload.strip()
    if not body.startswith(b"{") or not body.endswith(b"}"):
        return None
    # a newline can only be whitespace between JSON tokens (inside strings it is escaped)
    body = body.replace(b"\r", b" ").replace(b"\n", b" ")
    return b'{"received_at":%.3f,"payload":%s}\n' % (received_at, body)


def append_durably(path: str, line: bytes) -> None:
    """Append ``line`` under the spool's lock and fsync it (retried if compaction replaced
    the file while we waited for the lock)."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    while True:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                replaced = os.fstat(fd).st_ino != os.stat(path).st_ino
            except FileNotFoundError:
                replaced = True
            if not replaced:
                os.write(fd, line)
                os.fsync(fd)
                return
        finally:
            os.close(fd)


def main(argv: list[str]) -> int:
    """``stop_hook.py SPOOL``: the payload on stdin goes to SPOOL. Always exits 0."""
    if len(argv) != 2:
        print("usage: stop_hook.py SPOOL < payload", file=sys.stderr)
        return 0
    try:
        line = spool_line(sys.stdin.buffer.read(), time.time())
        if line is not None:
            append_durably(argv[1], line)
    except OSError as exc:  # a hook must never get in Claude's way
        print(f"goalkeeper: cannot spool the hook payload: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
