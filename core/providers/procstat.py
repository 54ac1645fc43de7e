"""What ``/proc/<pid>/stat`` says about a process (Linux; elsewhere nothing is known).

The command name (field 2) is in parentheses and may itself contain spaces and parentheses, so
the fields are split after the *last* ``)``. Used to tell a reused pid apart (the start time),
to walk a process's ancestry (the parent) and to see a zombie (the state). ``environ`` tells
which environment a process started with.
"""

from __future__ import annotations

from pathlib import Path


def stat_fields(pid: int) -> list[str] | None:
    """Fields 3… of ``/proc/<pid>/stat`` (``[0]`` is field 3, the state), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()


def environ(pid: int) -> dict[str, str] | None:
    """``/proc/<pid>/environ``: the environment the process started with; None when it is not
    readable (another user's process, no /proc)."""
    try:
        data = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    pairs = (entry.decode(errors="replace").partition("=") for entry in data.split(b"\0"))
    return {name: value for name, _, value in pairs if name}


def start_time(pid: int) -> str | None:
    """Field 22: when the process started, in clock ticks since boot."""
    fields = stat_fields(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def parent(pid: int) -> int | None:
    """Field 4: the parent's pid."""
    fields = stat_fields(pid)
    return int(fields[1]) if fields is not None and len(fields) > 1 and fields[1].isdigit() \
        else None


def state(pid: int) -> str | None:
    """Field 3: ``R``, ``S``, ``Z`` (a zombie: exited, not yet reaped) …"""
    fields = stat_fields(pid)
    return fields[0] if fields else None
