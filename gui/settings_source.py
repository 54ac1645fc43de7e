"""Where the settings dialog reads from and writes to. Qt-free.

The running settings are ``config.toml`` + ``GOALKEEPER_*`` variables (+ the demo's defaults).
The dialog edits what the *file* says: a field set by a variable is shown but not editable (the
variable would win anyway), and saving writes the file's value of it back untouched. Every field
of :class:`core.settings.Settings` is offered — including ones providers add later — described
from its type and constraints.
"""

from __future__ import annotations

import enum
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from core.policies.reserve_table import reserve_table_text
from core.settings import (
    ENV_PREFIX,
    TABLE_FIELDS,
    Settings,
    SettingsError,
    load_settings,
    save_settings,
)


def QT_TR_NOOP(source: str) -> str:  # the name lupdate looks for
    """Marks ``source`` for the app's catalogue (this module stays Qt-free; the dialog shows
    every label, help text and section title through ``tr()``)."""
    return source


#: fields whose change the running app applies at once (the engine's are read at start-up)
LIVE_FIELDS = frozenset({
    "notify_resumed", "notify_relimited", "notify_gave_up", "notify_scheduled", "notify_done",
    "notify_failed", "notify_needs_attention", "notify_rested", "notify_ntfy_url",
    "notify_ntfy_min_kind", "notify_webhook_url", "notify_webhook_min_kind",
    "notify_timeout_seconds", "start_at_login",
})

SECTIONS: list[tuple[str, tuple[str, ...]]] = [
    (QT_TR_NOOP("Resuming"), (
        "auto_resume_default", "resume_margin_seconds", "resume_jitter_seconds",
        "max_wait_hours", "max_auto_attempts", "relimit_window_seconds",
        "resume_failure_backoff_seconds", "runner_start_timeout_seconds",
        "fresh_read_timeout_seconds")),
    (QT_TR_NOOP("Keep awake"), (
        "keep_awake", "keep_awake_hours", "keep_awake_min_battery_percent")),
    (QT_TR_NOOP("Resume policies"), (
        "resume_reserve_percent", "resume_reserve_by_window", "auto_resume_hours",
        "auto_resume_timezone", "max_concurrent_resumes", "resume_settle_seconds")),
    (QT_TR_NOOP("Quota thresholds"), ("pause_threshold_percent", "resume_threshold_percent",
                                      "stable_seconds", "stale_after_seconds")),
    (QT_TR_NOOP("Scheduler"), ("max_sleep_seconds", "fallback_poll_min_seconds",
                               "fallback_poll_max_seconds", "fallback_poll_jitter",
                               "provider_refresh_seconds", "host_heartbeat_seconds",
                               "host_stale_seconds", "host_ping_timeout_seconds", "store_url",
                               "host_id", "account")),
    (QT_TR_NOOP("Notifications"), (
        "notify_resumed", "notify_relimited", "notify_gave_up", "notify_scheduled",
        "notify_done", "notify_failed", "notify_needs_attention", "notify_rested",
        "notify_ntfy_url", "notify_ntfy_min_kind",
        "notify_webhook_url", "notify_webhook_min_kind", "notify_timeout_seconds",
        "phone_commands", "phone_actions", "phone_command_expiry_minutes", "phone_server_url")),
    (QT_TR_NOOP("Desktop"), ("language", "start_at_login", "demo_enabled", "setup_done")),
]
#: a placeholder with an example (and what an empty or zero value means) per policy field:
#: (template with {example}, the example — syntax, not words, so never translated)
PLACEHOLDERS: dict[str, tuple[str, str]] = {
    "resume_reserve_percent": (QT_TR_NOOP("e.g. {example} — 0: keep nothing back"), "10"),
    "resume_reserve_by_window": (QT_TR_NOOP("e.g. {example} — empty: the same for every window"),
                                 "codex:5h=30, claude:7d=10"),  # i18n: ignore (syntax)
    "auto_resume_hours": (QT_TR_NOOP("e.g. {example} — empty: any time"),
                          "Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00"),  # i18n: ignore
    "auto_resume_timezone": (QT_TR_NOOP("e.g. {example} — empty: this computer's zone"),
                             "Asia/Shanghai"),  # i18n: ignore (a zone's name)
    "max_concurrent_resumes": (QT_TR_NOOP("e.g. {example} — 0: no limit"), "1"),
    "resume_settle_seconds": (QT_TR_NOOP("e.g. {example} (5 minutes)"), "300"),
}
PROVIDERS_SECTION = QT_TR_NOOP("Providers")
TABLES_SECTION = QT_TR_NOOP("User quotas")
#: the titles of the providers' own sections (named after their settings' prefix)
PROVIDER_SECTIONS = (QT_TR_NOOP("Codex"), QT_TR_NOOP("Claude"), QT_TR_NOOP("Pipeline"),
                     QT_TR_NOOP("Demo"))

LABELS = {
    "keep_awake": QT_TR_NOOP("Keep the machine awake while a resume is due"),
    "keep_awake_hours": QT_TR_NOOP("For a resume due within (h)"),
    "keep_awake_min_battery_percent": QT_TR_NOOP("Let it sleep on battery below (%)"),
    "notify_resumed": QT_TR_NOOP("A goal was resumed automatically"),
    "notify_relimited": QT_TR_NOOP("A goal ran out of quota again soon after a resume"),
    "notify_gave_up": QT_TR_NOOP("Goalkeeper gave up at the attempt cap"),
    "notify_scheduled": QT_TR_NOOP("An automatic resume was scheduled"),
    "notify_done": QT_TR_NOOP("A goal is done"),
    "notify_failed": QT_TR_NOOP("A goal failed or could not be resumed"),
    "notify_needs_attention": QT_TR_NOOP("A goal stopped on a problem and needs you"),
    "notify_rested": QT_TR_NOOP("A pipeline run finished"),
    "notify_ntfy_url": QT_TR_NOOP("ntfy topic URL"),
    "notify_ntfy_min_kind": QT_TR_NOOP("ntfy: least urgent kind"),
    "notify_webhook_url": QT_TR_NOOP("Webhook URL"),
    "notify_webhook_min_kind": QT_TR_NOOP("Webhook: least urgent kind"),
    "notify_timeout_seconds": QT_TR_NOOP("Delivery time-out (s)"),
    "phone_commands": QT_TR_NOOP("Answer from the phone (buttons on notifications)"),
    "phone_actions": QT_TR_NOOP("What the phone may do"),
    "phone_command_expiry_minutes": QT_TR_NOOP("Buttons work for (min)"),
    "phone_server_url": QT_TR_NOOP("ntfy server of the command topic"),
    "auto_resume_default": QT_TR_NOOP("Auto-resume newly found goals"),
    "language": QT_TR_NOOP("Language"),
    "start_at_login": QT_TR_NOOP("Start Goalkeeper when I log in"),
    "setup_done": QT_TR_NOOP("The set-up assistant has run"),
    "demo_enabled": QT_TR_NOOP("Include the demo provider"),
    "quotas": QT_TR_NOOP("Quotas you defined"),
    "resume_margin_seconds": QT_TR_NOOP("Margin after a reset (s)"),
    "resume_jitter_seconds": QT_TR_NOOP("Random extra delay, up to (s)"),
    "max_wait_hours": QT_TR_NOOP("Longest wait to schedule (h)"),
    "max_auto_attempts": QT_TR_NOOP("Automatic attempts per quota episode"),
    "relimit_window_seconds": QT_TR_NOOP("Re-limit window (s)"),
    "resume_failure_backoff_seconds": QT_TR_NOOP("Retry after a failed start (s)"),
    "runner_start_timeout_seconds": QT_TR_NOOP("Agent start timeout (s)"),
    "fresh_read_timeout_seconds": QT_TR_NOOP("Quota re-check timeout (s)"),
    "pause_threshold_percent": QT_TR_NOOP("Exhausted at (% used)"),
    "resume_threshold_percent": QT_TR_NOOP("Recovered at or below (% used)"),
    "stable_seconds": QT_TR_NOOP("Stays recovered for (s)"),
    "stale_after_seconds": QT_TR_NOOP("Readings are stale after (s)"),
    "max_sleep_seconds": QT_TR_NOOP("Scheduler's longest sleep while waiting (s)"),
    "fallback_poll_min_seconds": QT_TR_NOOP("Fallback poll, shortest interval (s)"),
    "fallback_poll_max_seconds": QT_TR_NOOP("Fallback poll, longest interval (s)"),
    "fallback_poll_jitter": QT_TR_NOOP("Fallback poll jitter (fraction)"),
    "provider_refresh_seconds": QT_TR_NOOP("Provider refresh interval (s)"),
    "host_heartbeat_seconds": QT_TR_NOOP("Host heartbeat interval (s)"),
    "host_stale_seconds": QT_TR_NOOP("Replace a silent host after (s)"),
    "host_ping_timeout_seconds": QT_TR_NOOP("Host answer time-out (s)"),
    "resume_reserve_percent": QT_TR_NOOP("Keep for me, every window (%)"),
    "resume_reserve_by_window": QT_TR_NOOP("Keep for me, per window"),
    "auto_resume_hours": QT_TR_NOOP("Automatic resumes only at"),
    "auto_resume_timezone": QT_TR_NOOP("Time zone of those hours"),
    "max_concurrent_resumes": QT_TR_NOOP("Automatic resumes at once, per window"),
    "resume_settle_seconds": QT_TR_NOOP("Next resume after (s)"),
    "store_url": QT_TR_NOOP("Shared store (postgresql://…)"),
    "host_id": QT_TR_NOOP("This host's name"),
    "account": QT_TR_NOOP("Subscription account name"),
    "codex_account": QT_TR_NOOP("Codex account name"),
    "claude_account": QT_TR_NOOP("Claude account name"),
    "codex_enabled": QT_TR_NOOP("Follow Codex"),
    "codex_auto_resume": QT_TR_NOOP("Auto-resume newly found Codex goals"),
    "codex_home": QT_TR_NOOP("Codex home"),
    "codex_bin": QT_TR_NOOP("Codex executable"),
    "codex_continuation_text": QT_TR_NOOP("Prompt of the exec fallback"),
    "codex_app_server_timeout_seconds": QT_TR_NOOP("App-server quota read timeout (s)"),
    "codex_confirm_timeout_seconds": QT_TR_NOOP("Wait for Codex to confirm a resume (s)"),
    "codex_turn_end_timeout_seconds": QT_TR_NOOP("Wait for the last turn to end (s)"),
    "claude_enabled": QT_TR_NOOP("Watch Claude Code"),
    "claude_auto_resume": QT_TR_NOOP("Auto-resume newly found Claude Code sessions"),
    "claude_config_dirs": QT_TR_NOOP("Claude config directories"),
    "claude_bin": QT_TR_NOOP("Claude executable"),
    "claude_continuation_text": QT_TR_NOOP("Prompt of a headless resume"),
    "claude_track_limit_stopped": QT_TR_NOOP("Track sessions a limit stopped"),
    "claude_track_recent_hours": QT_TR_NOOP("…if stopped within (h)"),
    "claude_timezone": QT_TR_NOOP("Time zone of limit messages"),
    "claude_poll_seconds": QT_TR_NOOP("Transcript check interval (s)"),
    "claude_scan_workers": QT_TR_NOOP("Processes for the first scan"),
    "claude_stop_grace_seconds": QT_TR_NOOP("Stop grace before SIGTERM (s)"),
    "claude_turn_end_timeout_seconds": QT_TR_NOOP("Wait for the turn to end on a policy pause "
                                                  "(s)"),
    "claude_retry_attempts": QT_TR_NOOP("Turns tried on transient 429s"),
    "claude_retry_backoff_seconds": QT_TR_NOOP("First backoff after a transient 429 (s)"),
    "pipeline_enabled": QT_TR_NOOP("Run pipeline goals"),
    "pipeline_stop_grace_seconds": QT_TR_NOOP("Step stop grace before SIGKILL (s)"),
    "pipeline_max_inline_wait_seconds": QT_TR_NOOP("Longest rate-limit wait in process (s)"),
}

#: what each field means (the README's settings table), for tooltips and screen readers; a
#: field without an entry shows its ``description`` (from the core's catalogue)
HELP = {
    "keep_awake": QT_TR_NOOP(
        "Holds a sleep inhibitor (logind on Linux) while an automatic resume is due, and lets "
        "go when nothing is. A lid switch that suspends anyway is shown as a note."),
    "keep_awake_hours": QT_TR_NOOP("A resume due later than this lets the machine sleep until "
                                   "it comes within it; shown by `goalkeeper status`."),
    "keep_awake_min_battery_percent": QT_TR_NOOP("0: hold on any charge."),
    "resume_margin_seconds": QT_TR_NOOP("Added to the reset instant before resuming."),
    "resume_jitter_seconds": QT_TR_NOOP("A random 0–N s on top, so goals do not stampede."),
    "max_wait_hours": QT_TR_NOOP("Resets further away are shown, not scheduled."),
    "max_auto_attempts": QT_TR_NOOP("Automatic resumes per quota episode before giving up."),
    "relimit_window_seconds": QT_TR_NOOP("A new limit this soon after an automatic resume "
                                         "counts as a failed attempt."),
    "resume_failure_backoff_seconds": QT_TR_NOOP("Wait before retrying when the agent could "
                                                 "not be started."),
    "runner_start_timeout_seconds": QT_TR_NOOP("Time-box for starting an agent."),
    "fresh_read_timeout_seconds": QT_TR_NOOP("Backstop time-box for the fresh quota read taken "
                                             "right before an automatic resume."),
    "pause_threshold_percent": QT_TR_NOOP("Used % at which a window is exhausted."),
    "resume_threshold_percent": QT_TR_NOOP("Used % at or below which it may count as "
                                           "recovered."),
    "stable_seconds": QT_TR_NOOP("How long it must stay recovered before goals are resumed."),
    "stale_after_seconds": QT_TR_NOOP("Readings older than this are marked stale."),
    "max_sleep_seconds": QT_TR_NOOP("The scheduler's longest sleep while something is "
                                    "pending."),
    "fallback_poll_min_seconds": QT_TR_NOOP("Shortest interval of the fallback quota poll."),
    "fallback_poll_max_seconds": QT_TR_NOOP("Longest interval of the fallback quota poll."),
    "fallback_poll_jitter": QT_TR_NOOP("Random spread of the fallback poll interval (0–1)."),
    "provider_refresh_seconds": QT_TR_NOOP("How often providers are asked for goals and "
                                           "quotas."),
    "host_heartbeat_seconds": QT_TR_NOOP("How often the host writes that it is alive."),
    "host_stale_seconds": QT_TR_NOOP("A host silent this long that does not answer may be "
                                     "replaced; its writes are fenced off."),
    "host_ping_timeout_seconds": QT_TR_NOOP("How long commands wait before saying the host is "
                                            "not responding."),
    "resume_reserve_percent": QT_TR_NOOP(
        "An automatic resume needs more than this share of the window left, and a goal "
        "Goalkeeper resumed is paused when only this much is left (until the window resets). "
        "0 = off. Manual resumes ignore it."),
    "resume_reserve_by_window": QT_TR_NOOP("Per-window reserves replacing the one above, e.g. "
                                           "codex:5h=30, claude:7d=10."),
    "auto_resume_hours": QT_TR_NOOP(
        "Weekly ranges in which automatic resumes may start, e.g. Mon-Fri 19:00-08:00, "
        "Sat-Sun 00:00-24:00 (a range ending before it starts runs past midnight; 'except …' "
        "for quiet hours). Empty: any time. A goal's own hours replace these; manual resumes "
        "are always allowed."),
    "auto_resume_timezone": QT_TR_NOOP("IANA name such as Europe/Berlin; empty: the system's "
                                       "zone."),
    "max_concurrent_resumes": QT_TR_NOOP("Goals waiting on one window resume in priority order, "
                                         "this many at a time (0 = all at once)."),
    "resume_settle_seconds": QT_TR_NOOP("The next waiting goal starts when a resumed one stops, "
                                        "or after it has run this long."),
    "demo_enabled": QT_TR_NOOP("Show the built-in demo goals in this data directory too."),
    "store_url": QT_TR_NOOP(
        "Empty: this machine's own database. A postgresql:// URL: one database every host of "
        "yours shares (no password here: `goalkeeper secret set store-password`, ~/.pgpass or "
        "a service file). Takes effect when the host restarts."),
    "host_id": QT_TR_NOOP("How this machine is named in the shared store; empty: the machine's "
                          "name."),
    "account": QT_TR_NOOP("Hosts naming the same account share its quota readings."),
    "codex_account": QT_TR_NOOP("Codex's account, when it differs from the subscription "
                                "account name; empty: what Codex itself says, else that name."),
    "claude_account": QT_TR_NOOP("Claude's account, when it differs from the subscription "
                                 "account name."),
    "language": QT_TR_NOOP("The language of the window and the goalkeeper command. "
                           "“System language” follows LANGUAGE, LC_ALL, LC_MESSAGES and LANG; "
                           "English where nothing else fits. Applies at the next start."),
    "start_at_login": QT_TR_NOOP("Adds Goalkeeper to your desktop's autostart (XDG autostart "
                                 "on Linux)."),
    "notify_needs_attention": QT_TR_NOOP(
        "A run Goalkeeper started stopped on a sign-in problem or an error (a blocked pipeline "
        "run, an agent that exited): it is not resumed automatically until you look at it."),
    "notify_rested": QT_TR_NOOP("A pipeline goal finished a run and waits for its next one. "
                                "A pipeline that runs often says so each time."),
    "notify_ntfy_url": QT_TR_NOOP(
        "Push to your phone through ntfy (public or self-hosted), e.g. "
        "https://ntfy.sh/my-goals-7f3a. The topic is like a password: pick one that is hard to "
        "guess. A token, if the server needs one, goes into the keyring: goalkeeper secret set "
        "ntfy-token."),
    "notify_ntfy_min_kind": QT_TR_NOOP("The least urgent kind ntfy gets; the kinds after it in "
                                       "the list are more urgent and are sent too."),
    "notify_webhook_url": QT_TR_NOOP(
        "Each notification is POSTed here as JSON (`kind`, `goal`, `title`, `provider`, `host`, "
        "`at`, `message`, `next_resume_at`). With a secret in the keyring (goalkeeper secret "
        "set webhook-secret) the body is signed (X-Goalkeeper-Signature)."),
    "notify_webhook_min_kind": QT_TR_NOOP("The least urgent kind the webhook gets; the kinds "
                                          "after it in the list are more urgent and are sent "
                                          "too."),
    "notify_timeout_seconds": QT_TR_NOOP("How long one attempt to reach ntfy or the webhook may "
                                         "take (failed attempts are retried with backoff)."),
    "phone_commands": QT_TR_NOOP(
        "Notifications about a goal that waits (a resume scheduled, gave up, needs attention) "
        "get buttons. A tap publishes a signed command to this computer's private command "
        "topic, which the host subscribes to (no port is opened). Off by default."),
    "phone_actions": QT_TR_NOOP("Comma-separated: resume (Resume now), skip (Skip this "
                                "window), keep-paused (Keep paused)."),
    "phone_command_expiry_minutes": QT_TR_NOOP("A button's command is refused after this "
                                               "long."),
    "phone_server_url": QT_TR_NOOP("Empty: the server of the ntfy topic URL above."),
    "auto_resume_default": QT_TR_NOOP("Newly found goals start with auto-resume on (it is off "
                                      "by default: resuming is opt-in)."),
    "codex_enabled": QT_TR_NOOP("Follow Codex whenever its home exists."),
    "codex_auto_resume": QT_TR_NOOP("Codex goals found from now on start with auto-resume on "
                                    "(off by default; the set-up assistant offers it)."),
    "codex_home": QT_TR_NOOP("Codex's home; empty: $CODEX_HOME, else ~/.codex."),
    "codex_bin": QT_TR_NOOP("The codex executable; empty: codex on PATH."),
    "codex_continuation_text": QT_TR_NOOP("The prompt of the `codex exec resume` fallback."),
    "codex_app_server_timeout_seconds": QT_TR_NOOP("Time-box of a quota read through `codex "
                                                   "app-server`."),
    "codex_confirm_timeout_seconds": QT_TR_NOOP("How long a resume waits for Codex to confirm "
                                                "the goal is active again."),
    "codex_turn_end_timeout_seconds": QT_TR_NOOP("When Codex completed or limited the goal, or "
                                                 "the reserve or a budget paused it: how long "
                                                 "Goalkeeper waits for the turn in progress to "
                                                 "end before it lets the app-server go (a "
                                                 "paused goal's turn is interrupted then)."),
    "claude_auto_resume": QT_TR_NOOP("Claude Code sessions found from now on start with "
                                     "auto-resume on (off by default; the set-up assistant "
                                     "offers it)."),
    "setup_done": QT_TR_NOOP("Off: the app opens the set-up assistant at its next start "
                             "(Goalkeeper → Set up… opens it any time)."),
    "claude_enabled": QT_TR_NOOP("Watch Claude Code sessions (only when a Claude config "
                                 "directory exists)."),
    "claude_config_dirs": QT_TR_NOOP("Comma-separated; empty: $CLAUDE_CONFIG_DIR (may list "
                                     "several), else ~/.claude and ~/.config/claude."),
    "claude_bin": QT_TR_NOOP("The claude executable; empty: claude on PATH."),
    "claude_continuation_text": QT_TR_NOOP("The prompt of a headless resume (must not start "
                                           "with -)."),
    "claude_track_limit_stopped": QT_TR_NOOP("A session a usage limit stopped becomes a goal by "
                                             "itself."),
    "claude_track_recent_hours": QT_TR_NOOP("…if the stop is at most this old, or its reset is "
                                            "still ahead."),
    "claude_timezone": QT_TR_NOOP("IANA zone for limit messages that name none; empty: $TZ, "
                                  "else the system's."),
    "claude_poll_seconds": QT_TR_NOOP("How often transcripts are checked for appended lines."),
    "claude_scan_workers": QT_TR_NOOP("Processes for the first scan of a history over 64 MiB; "
                                      "0: one per CPU, at most 4."),
    "claude_stop_grace_seconds": QT_TR_NOOP("Pause or cancel of a headless run: SIGINT, this "
                                            "long, then SIGTERM."),
    "claude_turn_end_timeout_seconds": QT_TR_NOOP("When the reserve or a budget pauses a "
                                                  "headless run: how long its turn in progress "
                                                  "may take to end by itself before it is "
                                                  "stopped like a pause."),
    "claude_retry_attempts": QT_TR_NOOP("Headless turns tried when each ends on a transient 429 "
                                        "(a rate limit that is not your usage limit)."),
    "claude_retry_backoff_seconds": QT_TR_NOOP("First backoff cap after a transient 429; it "
                                               "doubles, up to 15 min."),
    "pipeline_enabled": QT_TR_NOOP("Run pipeline goals added with `goalkeeper add`."),
    "pipeline_stop_grace_seconds": QT_TR_NOOP("When a step is stopped: SIGTERM, then SIGKILL "
                                              "after this."),
    "pipeline_max_inline_wait_seconds": QT_TR_NOOP("A rate limit whose Retry-After is at most "
                                                   "this is waited in process; a longer one "
                                                   "pauses the goal for quota."),
}

#: how a choice is shown (value → text); values without an entry are shown as they are
CHOICE_TEXT = {
    "scheduled": QT_TR_NOOP("A resume was scheduled (everything)"),
    "rested": QT_TR_NOOP("A pipeline run finished"),
    "resumed": QT_TR_NOOP("Resumed automatically"),
    "done": QT_TR_NOOP("Done"),
    "relimited": QT_TR_NOOP("Ran out of quota again"),
    "could_not_resume": QT_TR_NOOP("Could not resume"),
    "failed": QT_TR_NOOP("Failed"),
    "needs_attention": QT_TR_NOOP("Needs attention"),
    "gave_up": QT_TR_NOOP("Gave up at the attempt cap"),
    "": QT_TR_NOOP("System language"),
}
#: languages are offered in their own words, whatever the app's language is
LANGUAGE_NAMES = {"en": "English", "zh_CN": "简体中文"}  # i18n: ignore


@dataclass(frozen=True)
class FieldSpec:
    """How to edit one setting."""

    name: str
    label: str
    kind: str  # "bool" | "int" | "float" | "text" | "list" | "mapping" | "choice" | "table"
    optional: bool
    help: str
    default: Any
    env_var: str
    bounds: str = ""
    section: str = PROVIDERS_SECTION
    choices: tuple[str, ...] = ()  # a "choice": the allowed values, in order


def _base_kind(annotation: Any) -> tuple[str, bool]:
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        annotation = args[0] if len(args) == 1 else str
        origin = typing.get_origin(annotation)
    if annotation is bool:
        return "bool", optional
    if annotation is int:
        return "int", optional
    if annotation is float:
        return "float", optional
    if origin in (list, tuple, set, frozenset):
        return "list", optional
    if origin is dict:
        return "mapping", optional  # edited as text: KEY=VALUE, KEY=VALUE
    return "text", optional


def _choices(info: FieldInfo) -> tuple[str, ...]:
    """A field's declared ``choices`` (``json_schema_extra``), or an enum's values."""
    extra = info.json_schema_extra
    declared = extra.get("choices") if isinstance(extra, dict) else None
    if isinstance(declared, list):
        return tuple(str(c) for c in declared)
    if isinstance(info.annotation, type) and issubclass(info.annotation, enum.Enum):
        return tuple(str(m.value) for m in info.annotation)
    return ()


def _bounds(info: FieldInfo) -> str:
    parts = []
    for meta in info.metadata:
        for attr, word in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(meta, attr, None)
            if value is not None:
                parts.append(f"{word} {value:g}" if isinstance(value, int | float)
                             else f"{word} {value}")
    return ", ".join(parts)


def _label(name: str) -> str:
    if name in LABELS:
        return LABELS[name]
    words = name.replace("_", " ")
    for unit, text in ((" seconds", " (s)"), (" hours", " (h)"), (" percent", " (%)")):
        if words.endswith(unit):
            words = words[: -len(unit)] + text
    return words[0].upper() + words[1:]


def _section(name: str, placed: Mapping[str, str]) -> str:
    """Known fields by topic; a provider's (``codex_home``, ``pipeline_enabled``) by its name."""
    if name in placed:
        return placed[name]
    if name in TABLE_FIELDS:
        return TABLES_SECTION
    prefix = name.split("_", 1)[0]
    return prefix.capitalize() if "_" in name else PROVIDERS_SECTION


def field_specs() -> list[FieldSpec]:
    """Every settings field, in dialog order (known sections first, then the providers')."""
    placed = {name: title for title, names in SECTIONS for name in names}
    specs = []
    for name, info in Settings.model_fields.items():
        kind, optional = ("table", False) if name in TABLE_FIELDS else _base_kind(info.annotation)
        choices = _choices(info)
        specs.append(FieldSpec(
            name=name, label=_label(name), kind="choice" if choices else kind,
            optional=optional, help=HELP.get(name) or info.description or "",
            default=None if kind == "table" else info.get_default(call_default_factory=True),
            env_var=ENV_PREFIX + name.upper(),
            bounds=_bounds(info), section=_section(name, placed), choices=choices,
        ))
    known = [title for title, _ in SECTIONS]
    position = {name: i for _, names in SECTIONS for i, name in enumerate(names)}
    fields = list(Settings.model_fields)

    def order(spec: FieldSpec) -> tuple[int, str, int]:
        rank = known.index(spec.section) if spec.section in known else len(known) + (
            1 if spec.section == TABLES_SECTION else 0)
        return rank, spec.section, position.get(spec.name, len(position) + fields.index(spec.name))

    return sorted(specs, key=order)


def to_text(spec: FieldSpec, value: Any) -> str:
    if value is None:
        return ""
    if spec.kind == "list":
        return os.pathsep.join(str(v) for v in value)
    if spec.kind == "mapping":
        return reserve_table_text(value) if isinstance(value, dict) else str(value)
    if spec.kind == "float" and isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def from_text(spec: FieldSpec, text: str) -> Any:
    """What a line edit's text means for pydantic (which then validates it)."""
    text = text.strip()
    if spec.kind == "list":
        return [part for part in text.split(os.pathsep) if part] if text else []
    if not text and spec.optional:
        return None
    return text


@dataclass
class Validation:
    """Errors by field name; ``general`` for those that name no single field."""

    settings: Settings | None
    errors: dict[str, str] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.settings is not None


def validate(values: Mapping[str, Any]) -> Validation:
    try:
        return Validation(Settings.model_validate(dict(values)))
    except ValidationError as exc:
        result = Validation(None)
        for error in exc.errors():
            message = str(error["msg"]).removeprefix("Value error, ")
            name = str(error["loc"][0]) if error["loc"] else ""
            if name in Settings.model_fields:
                result.errors.setdefault(name, message)
            else:
                result.general.append(message)
                for other in Settings.model_fields:  # a relation names its fields
                    if other in message:
                        result.errors.setdefault(other, message)
        return result


@dataclass
class SettingsSource:
    """The config file, the environment and the defaults the running app was started with."""

    config_file: Path
    environ: Mapping[str, str]
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def overridden(self) -> dict[str, str]:
        """field → the variable that sets it (and wins over the file)."""
        return {name: ENV_PREFIX + name.upper() for name in Settings.model_fields
                if name not in TABLE_FIELDS and ENV_PREFIX + name.upper() in self.environ}

    def effective(self) -> Settings:
        return load_settings(self.config_file, self.environ, self.defaults)

    def file_settings(self) -> Settings:
        """The file (and defaults) without the environment."""
        return load_settings(self.config_file, {}, self.defaults)

    def initial_values(self) -> tuple[dict[str, Any], str | None]:
        """Values to show, and a problem reading the file (then the defaults are shown)."""
        try:
            return self.effective().model_dump(), None
        except SettingsError as exc:
            return Settings.model_validate(dict(self.defaults)).model_dump(), str(exc)

    def merged_for_save(self, edited: Mapping[str, Any]) -> dict[str, Any]:
        """The edited values, with every variable-set field put back to the file's value (and
        the tables, which the dialog shows but does not edit, as they are)."""
        values = dict(edited)
        overridden = self.overridden()
        if overridden or any(name not in values for name in TABLE_FIELDS):
            try:
                from_file = self.file_settings().model_dump()
            except SettingsError:
                from_file = Settings.model_validate(dict(self.defaults)).model_dump()
            for name in overridden:
                values[name] = from_file[name]
            for name in TABLE_FIELDS:
                values.setdefault(name, from_file[name])
        return values

    def save(self, settings: Settings) -> None:
        save_settings(self.config_file, settings)
