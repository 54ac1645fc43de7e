"""Installing and removing Goalkeeper's opt-in entries in Claude Code's ``settings.json``.

* ``statusLine`` → ``goalkeeper hook claude-statusline --chain '<your command>'``: the user's
  own statusline keeps running (its output passes through byte for byte), and Goalkeeper reads
  the exact ``rate_limits`` Claude hands every statusline.
* ``hooks.StopFailure`` gains one group running the hook's fast path
  (:func:`stop_failure_command`: ``trap '' TERM; exec <python> -I -S …/stop_hook.py <spool>`` —
  it must spool within the ~25 ms print mode grants it before SIGTERM, which a full
  ``goalkeeper`` start-up cannot); the user's own StopFailure hooks stay (Claude runs them all).
* ``hooks.Notification`` gains one group with the matcher ``quota_auto_resume_.*`` running the
  same command: Claude's own auto-continue decisions (``quota_auto_resume_fired`` /
  ``_stale`` / ``_disabled`` — the ``notification_type`` of the payload, which the matcher
  matches) reach the spool too. Claude's other notifications never run it.

These are the only writes Goalkeeper ever makes into a Claude config directory. Before the first
change the file is copied to ``<data>/claude/backups/``, and what was there before is recorded in
``<data>/claude/hooks.json``; :func:`uninstall` puts it back — byte for byte when nothing else in
the file changed meanwhile, otherwise with only Goalkeeper's entries taken out.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from core.atomic import atomic_write_bytes, atomic_write_text
from core.i18n import N_
from core.providers import jsonload

STATUSLINE = "hook claude-statusline"
#: marks the spooling command as Goalkeeper's, in every hook event it is installed for
STOP_FAILURE = "hook claude-stop-failure"
#: the hook events the spooling command is installed for, with the matcher of its group
EVENTS: tuple[tuple[str, str | None], ...] = (
    ("StopFailure", None),
    ("Notification", "quota_auto_resume_.*"),
)


def stop_failure_command(executable: str, script: Path, spool: Path) -> str:
    """The fast StopFailure hook: SIGTERM ignored before Python starts (the ignore survives
    ``exec``), no site packages, the payload appended and fsynced first. The trailing comment
    marks the entry as Goalkeeper's."""
    return (f"trap '' TERM; exec {shlex.quote(executable)} -I -S {shlex.quote(str(script))} "
            f"{shlex.quote(str(spool))} # goalkeeper {STOP_FAILURE}")


class HookError(Exception):
    """The settings file cannot be changed safely; the message says why (nothing was written)."""


@dataclass
class HookChange:
    """What :func:`install` / :func:`uninstall` did to one settings file."""

    settings: Path
    changes: list[str] = field(default_factory=list)
    backup: Path | None = None


def _records_path(data_dir: Path) -> Path:
    return data_dir / "claude" / "hooks.json"


def _load_records(data_dir: Path) -> dict[str, Any]:
    try:
        data = jsonload.load_file(_records_path(data_dir))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_records(data_dir: Path, records: dict[str, Any]) -> None:
    atomic_write_text(_records_path(data_dir), json.dumps(records, indent=1) + "\n")


def _read(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise HookError(N_("cannot read {file}: {error}").format(file=path,
                                                                 error=exc.strerror)) from None
    try:
        data = jsonload.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError) as exc:  # json recurses once per level (issue 19)
        raise HookError(N_("{file} is not valid JSON ({error}); fix it first — nothing was "
                           "changed").format(file=path, error=exc)) from None
    if not isinstance(data, dict):
        raise HookError(N_("{file} does not hold a JSON object; nothing was changed").format(
            file=path))
    return raw, data


def _indent_of(raw: bytes | None) -> int | None:
    if raw is None:
        return 2
    text = raw.decode("utf-8", errors="replace")
    if "\n" not in text.strip():
        return None  # compact
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and len(line) > len(stripped):
            return len(line) - len(stripped)
    return 2


def _dump(data: dict[str, Any], like: bytes | None) -> bytes:
    indent = _indent_of(like)
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(data, indent=indent, separators=separators, ensure_ascii=False)
    if like is None or like.endswith(b"\n"):
        text += "\n"
    return text.encode("utf-8")


def _write(path: Path, data: bytes, like: Path) -> None:
    try:
        mode = like.stat().st_mode & 0o777
    except OSError:
        mode = 0o600
    atomic_write_bytes(path, data, mode)


def _is_ours(command: Any, mark: str) -> bool:
    return isinstance(command, str) and mark in command


def _statusline_is_ours(data: dict[str, Any]) -> bool:
    current = data.get("statusLine")
    return isinstance(current, dict) and _is_ours(current.get("command"), STATUSLINE)


def _hook_is_ours(data: dict[str, Any], event: str) -> bool:
    hooks = data.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    return isinstance(groups, list) and any(
        isinstance(hook, dict) and _is_ours(hook.get("command"), STOP_FAILURE)
        for group in groups if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"])


def _any_ours(data: dict[str, Any]) -> bool:
    return _statusline_is_ours(data) or any(_hook_is_ours(data, e) for e, _ in EVENTS)


def installed(config_dir: Path) -> bool:
    """Whether Goalkeeper's entries are in ``config_dir``'s ``settings.json`` (an unreadable
    file counts as not installed: :func:`install` will say why)."""
    try:
        _raw, data = _read(config_dir / "settings.json")
    except HookError:
        return False
    return _any_ours(data)


def _had(record: dict[str, Any], event: str) -> bool | None:
    """Whether the user's file had ``hooks.<event>`` before Goalkeeper's first change; None:
    not known (the record is lost)."""
    had = record.get("had_events")
    if isinstance(had, dict) and event in had:
        return bool(had[event])
    if event == "StopFailure" and "had_stop_failure" in record:  # from before Notification
        return bool(record["had_stop_failure"])
    return None


def _digest(raw: bytes | None) -> str | None:
    return hashlib.sha256(raw).hexdigest() if raw is not None else None


def install(config_dir: Path, data_dir: Path, program: str, now: datetime,
            stop_command: str | None = None) -> HookChange:
    """Chain the statusline and add the StopFailure and Notification hooks in
    ``config_dir/settings.json``.

    ``stop_command`` is the hooks' command (:func:`stop_failure_command`); without one it is
    ``<program> hook claude-stop-failure``.
    """
    path = config_dir / "settings.json"
    raw, data = _read(path)
    change = HookChange(path)
    records = _load_records(data_dir)
    record = records.get(str(path))
    new = json.loads(json.dumps(data))
    if _install_statusline(new, program, change) is None:
        raise HookError(N_("{file}: statusLine is not a command; Goalkeeper cannot chain it"
                           ).format(file=path))
    for event, matcher in EVENTS:
        _install_hook(new, event, matcher, stop_command or f"{program} {STOP_FAILURE}", change)
    if not change.changes:
        return change
    if record is not None and not _any_ours(data):
        record = None  # our entries were taken out meanwhile: the file now is the user's own
    if record is None:
        record = _first_record(path, raw, data, data_dir, now)
        change.backup = Path(record["backup"]) if record.get("backup") else None
    else:
        _update_record(record, data)
    _write(path, _dump(new, raw), path)
    records[str(path)] = record
    _save_records(data_dir, records)
    return change


def _first_record(path: Path, raw: bytes | None, data: dict[str, Any], data_dir: Path,
                  now: datetime) -> dict[str, Any]:
    backup = None
    if raw is not None:
        slug = hashlib.sha256(str(path).encode()).hexdigest()[:8]
        backup = data_dir / "claude" / "backups" / (
            f"settings-{slug}-{now.strftime('%Y%m%dT%H%M%SZ')}.json")
        atomic_write_bytes(backup, raw, 0o600)
    hooks = data.get("hooks")
    return {
        "existed": raw is not None,
        "backup": str(backup) if backup else None,
        "original_sha256": _digest(raw),
        "statusLine": data.get("statusLine"),
        "had_statusLine": "statusLine" in data,
        "had_hooks": isinstance(hooks, dict),
        "had_events": {event: isinstance(hooks, dict) and event in hooks for event, _ in EVENTS},
    }


def _update_record(record: dict[str, Any], data: dict[str, Any]) -> None:
    """What an install on top of an earlier one learns about the user's own file: a
    statusline set anew since, and whether a hook event Goalkeeper had not used before (an
    install from before the Notification entry) is the user's."""
    if not _statusline_is_ours(data):
        record.update(statusLine=data.get("statusLine"), had_statusLine="statusLine" in data)
    hooks = data.get("hooks")
    had = record.setdefault("had_events", {})
    if "StopFailure" not in had and "had_stop_failure" in record:
        had["StopFailure"] = bool(record.pop("had_stop_failure"))
    for event, _ in EVENTS:
        if event not in had and not _hook_is_ours(data, event):
            had[event] = isinstance(hooks, dict) and event in hooks


def _install_statusline(data: dict[str, Any], program: str, change: HookChange) -> bool | None:
    current = data.get("statusLine")
    if isinstance(current, dict) and _is_ours(current.get("command"), STATUSLINE):
        return True
    if current is not None and (not isinstance(current, dict)
                                or current.get("type", "command") != "command"):
        return None
    chained = current.get("command") if isinstance(current, dict) else None
    command = f"{program} {STATUSLINE}"
    if isinstance(chained, str) and chained.strip():
        command += f" --chain {shlex.quote(chained)}"
    entry = dict(current) if isinstance(current, dict) else {"type": "command"}
    entry["command"] = command
    data["statusLine"] = entry
    change.changes.append(N_("statusLine: chained through Goalkeeper") if chained
                          else N_("statusLine: added (you had none)"))
    return True


def _install_hook(data: dict[str, Any], event: str, matcher: str | None, command: str,
                  change: HookChange) -> None:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise HookError(N_("settings.json: hooks is not an object; nothing was changed"))
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise HookError(N_("settings.json: hooks.{event} is not a list; nothing was "
                           "changed").format(event=event))
    for group in groups:
        for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
            if isinstance(hook, dict) and _is_ours(hook.get("command"), STOP_FAILURE):
                if hook.get("command") != command:  # an older install: the fast path now
                    hook["command"] = command
                    change.changes.append(N_("hooks.{event}: updated Goalkeeper's hook"
                                             ).format(event=event))
                return
    group = {"matcher": matcher} if matcher else {}
    groups.append({**group, "hooks": [{"type": "command", "command": command}]})
    change.changes.append(
        N_("hooks.{event}: added Goalkeeper's hook (matcher {matcher})").format(
            event=event, matcher=matcher) if matcher
        else N_("hooks.{event}: added Goalkeeper's hook").format(event=event))


def uninstall(config_dir: Path, data_dir: Path) -> HookChange:
    """Take Goalkeeper's entries out again and put back what was there before."""
    path = config_dir / "settings.json"
    raw, data = _read(path)
    change = HookChange(path)
    records = _load_records(data_dir)
    record = records.get(str(path)) or {}
    new = json.loads(json.dumps(data))
    _uninstall_statusline(new, record, change)
    for event, _ in EVENTS:
        _uninstall_hook(new, event, record, change)
    if change.changes:
        _write(path, _restored(path, new, raw, record), path)
        if not record.get("existed", True) and new == {}:
            path.unlink()
            change.changes.append(N_("{file}: removed (Goalkeeper had created it)").format(
                file=path.name))
    records.pop(str(path), None)
    _save_records(data_dir, records)
    return change


def _restored(path: Path, new: dict[str, Any], raw: bytes | None,
              record: dict[str, Any]) -> bytes:
    """The original bytes when the result is the original content, else a fresh dump."""
    backup = record.get("backup")
    if backup:
        try:
            original = Path(backup).read_bytes()
        except OSError:
            original = None
        if original is not None and _digest(original) == record.get("original_sha256"):
            try:
                if json.loads(original) == new:
                    return original
            except ValueError:
                pass
    return _dump(new, raw)


def _uninstall_statusline(data: dict[str, Any], record: dict[str, Any],
                          change: HookChange) -> None:
    current = data.get("statusLine")
    if not isinstance(current, dict) or not _is_ours(current.get("command"), STATUSLINE):
        return
    if record:
        if record.get("had_statusLine"):
            data["statusLine"] = record.get("statusLine")
        else:
            del data["statusLine"]
    else:
        chained = _chain_of(str(current["command"]))
        if chained:
            data["statusLine"] = {**current, "command": chained}
        else:
            del data["statusLine"]
    change.changes.append(N_("statusLine: restored"))


def _chain_of(command: str) -> str | None:
    """The user's command from ``… hook claude-statusline --chain '<command>'``."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "--chain" in words and words.index("--chain") + 1 < len(words):
        return words[words.index("--chain") + 1]
    return None


def _uninstall_hook(data: dict[str, Any], event: str, record: dict[str, Any],
                    change: HookChange) -> None:
    hooks = data.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    if not isinstance(hooks, dict) or not isinstance(groups, list):
        return
    kept, removed = [], False
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            inner = [h for h in group["hooks"]
                     if not (isinstance(h, dict) and _is_ours(h.get("command"), STOP_FAILURE))]
            if len(inner) != len(group["hooks"]):
                change.changes.append(N_("hooks.{event}: removed Goalkeeper's hook"
                                         ).format(event=event))
                removed = True
                if not inner:
                    continue
                group = {**group, "hooks": inner}
        kept.append(group)
    hooks[event] = kept
    had = _had(record, event)
    if not kept and (had is False or (had is None and removed)):
        del hooks[event]  # unknown: a list that only held Goalkeeper's entry was Goalkeeper's
    if not hooks and not record.get("had_hooks", True):
        del data["hooks"]


def program_command(environ: Mapping[str, str], argv0: str, executable: str) -> str:
    """How a hook entry runs Goalkeeper: the installed ``goalkeeper`` script next to the
    interpreter, else ``python -m core``; ``GOALKEEPER_HOME`` is kept when it is set."""
    script = Path(executable).parent / "goalkeeper"
    if script.is_file():
        base = shlex.quote(str(script))
    elif Path(argv0).name == "goalkeeper" and Path(argv0).is_file():
        base = shlex.quote(str(Path(argv0).absolute()))
    else:
        base = f"{shlex.quote(executable)} -m core"
    home = environ.get("GOALKEEPER_HOME")
    return f"GOALKEEPER_HOME={shlex.quote(home)} {base}" if home else base
