"""A fake ``claude`` executable: plays scripted stream-json and logs how it was invoked.

Environment:

* ``FAKE_CLAUDE_LOG`` — a JSON line per invocation (argv, cwd, CLAUDE_CONFIG_DIR, pid) and per
  signal received.
* ``FAKE_CLAUDE_SCRIPT`` — ``{"plays": [...]}``; the n-th invocation plays ``plays[n]`` (the last
  one again when there are fewer). A play::

      {"events": [{...}, ...],      # stream-json objects printed one per line
       "append": [{...}, ...],      # transcript records appended to the session's file first
       "stderr": "...", "exit": 0,
       "hang": false,               # after the events, wait for a signal
       "sleep": 0, "then": [...],   # a slow turn: after the events, this long, then these
       "ignore_sigint": false}      # ...and shrug SIGINT off (SIGTERM still ends it)

Signals as 2.1.328 print mode takes them: SIGINT ends the turn the way Esc does — a user record
"[Request interrupted by user]" in the transcript and on stdout, exit 0; SIGTERM exits 143.

The string ``$SESSION`` anywhere in a play is replaced by the ``--resume`` argument (or, for
a new session, the ``--session-id`` one).

Like Claude Code 2.1.328 in print mode, it keeps ``<config>/sessions/<pid>.json`` (``kind:
"interactive"``, ``entrypoint: "sdk-cli"``, ``procStart``: field 22 of ``/proc/<pid>/stat``)
while it runs and removes it when it exits.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any


def log(entry: dict[str, Any]) -> None:
    path = os.environ.get("FAKE_CLAUDE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def next_play() -> dict[str, Any]:
    script_path = os.environ.get("FAKE_CLAUDE_SCRIPT")
    if not script_path:
        return {"events": [], "exit": 0}
    plays = json.loads(Path(script_path).read_text())["plays"]
    counter = Path(script_path + ".count")
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    return plays[min(n, len(plays) - 1)]


def substitute(value: Any, session: str) -> Any:
    if isinstance(value, str):
        return value.replace("$SESSION", session)
    if isinstance(value, list):
        return [substitute(v, session) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, session) for k, v in value.items()}
    return value


def transcript(session: str) -> Path:
    config = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
    project = "".join(ch if ch.isalnum() else "-" for ch in os.getcwd())
    return Path(config) / "projects" / project / f"{session}.jsonl"


def main(argv: list[str]) -> int:
    flag = "--resume" if "--resume" in argv else "--session-id"
    session = argv[argv.index(flag) + 1] if flag in argv else ""
    log({"argv": argv, "cwd": os.getcwd(), "config_dir": os.environ.get("CLAUDE_CONFIG_DIR"),
         "pid": os.getpid()})
    if any("dangerously" in a or "bypassPermissions" in a for a in argv):
        print("refusing: permission bypass", file=sys.stderr)
        return 3
    if "-p" not in argv:
        return 0  # interactive: nothing to play
    play = substitute(next_play(), session)
    process_file = announce(session)
    try:
        return run_play(play, session)
    except Interrupted:
        return interrupted(session)
    finally:
        process_file.unlink(missing_ok=True)


class Interrupted(Exception):
    """SIGINT arrived."""


INTERRUPTED = "[Request interrupted by user]"


def interrupted(session: str) -> int:
    """What 2.1.328 print mode does on SIGINT: the interrupted turn is recorded as a user
    message (in the transcript and on stdout), no result line, exit 0."""
    record = {"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": INTERRUPTED}]}, "isSidechain": False, "sessionId": session,
        "cwd": os.getcwd(), "entrypoint": "sdk-cli", "version": "2.1.328",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())}
    if session:
        path = transcript(session)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")
    print(json.dumps({"type": "user", "message": record["message"], "parent_tool_use_id": None,
                      "session_id": session, "timestamp": record["timestamp"]}), flush=True)
    return 0


def proc_start() -> str | None:
    try:
        stat = Path(f"/proc/{os.getpid()}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()[19]


def announce(session: str) -> Path:
    """``sessions/<pid>.json`` as print mode writes it (B0)."""
    config = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
    path = Path(config) / "sessions" / f"{os.getpid()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": os.getpid(), "sessionId": session, "cwd": os.getcwd(),
                                "startedAt": int(time.time() * 1000), "procStart": proc_start(),
                                "version": "2.1.328", "kind": "interactive",
                                "entrypoint": "sdk-cli", "status": "busy"}))
    return path


def run_play(play: dict[str, Any], session: str) -> int:
    if play.get("hang") or play.get("sleep"):  # a stop may come right after "init"
        catch_signals(bool(play.get("ignore_sigint")))
    if play.get("append"):
        path = transcript(session)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            for record in play["append"]:
                handle.write(json.dumps(record, separators=(",", ":")) + "\n")
    for event in play.get("events", []):
        print(json.dumps(event), flush=True)
    if play.get("sleep"):
        time.sleep(play["sleep"])
        log({"turn_ended": True, "pid": os.getpid()})
        for event in play.get("then", []):
            print(json.dumps(event), flush=True)
    if play.get("stderr"):
        print(play["stderr"], file=sys.stderr, flush=True)
    if play.get("hang"):
        hang()
    return int(play.get("exit", 0))


def catch_signals(ignore_sigint: bool) -> None:
    def on_signal(signum: int, frame: object) -> None:
        log({"signal": signal.Signals(signum).name, "pid": os.getpid()})
        if signum == signal.SIGINT:
            if ignore_sigint:
                return
            raise Interrupted
        sys.exit(143)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


def hang() -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
