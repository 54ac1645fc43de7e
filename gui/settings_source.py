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

#: fields whose change the running app applies at once (the engine's are read at start-up)
LIVE_FIELDS = frozenset({
    "notify_resumed", "notify_relimited", "notify_gave_up", "notify_scheduled", "notify_done",
    "notify_failed", "notify_ntfy_url", "notify_ntfy_min_kind", "notify_webhook_url",
    "notify_webhook_min_kind", "notify_timeout_seconds", "start_at_login",
})

SECTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("Resuming", ("auto_resume_default", "resume_margin_seconds", "resume_jitter_seconds",
                  "max_wait_hours", "max_auto_attempts", "relimit_window_seconds",
                  "resume_failure_backoff_seconds", "runner_start_timeout_seconds",
                  "fresh_read_timeout_seconds")),
    ("Resume policies", ("resume_reserve_percent", "resume_reserve_by_window",
                         "auto_resume_hours", "auto_resume_timezone", "max_concurrent_resumes",
                         "resume_settle_seconds")),
    ("Quota thresholds", ("pause_threshold_percent", "resume_threshold_percent",
                          "stable_seconds", "stale_after_seconds")),
    ("Scheduler", ("max_sleep_seconds", "fallback_poll_min_seconds", "fallback_poll_max_seconds",
                   "fallback_poll_jitter", "provider_refresh_seconds", "host_heartbeat_seconds",
                   "host_stale_seconds", "host_ping_timeout_seconds", "store_url", "host_id",
                   "account")),
    ("Notifications", ("notify_resumed", "notify_relimited", "notify_gave_up",
                       "notify_scheduled", "notify_done", "notify_failed", "notify_ntfy_url",
                       "notify_ntfy_min_kind", "notify_webhook_url", "notify_webhook_min_kind",
                       "notify_timeout_seconds")),
    ("Desktop", ("start_at_login", "demo_enabled")),
]
PROVIDERS_SECTION = "Providers"
TABLES_SECTION = "User quotas"

LABELS = {
    "notify_resumed": "A goal was resumed automatically",
    "notify_relimited": "A goal ran out of quota again soon after a resume",
    "notify_gave_up": "Goalkeeper gave up at the attempt cap",
    "notify_scheduled": "An automatic resume was scheduled",
    "notify_done": "A goal is done",
    "notify_failed": "A goal failed or could not be resumed",
    "notify_ntfy_url": "ntfy topic URL",
    "notify_ntfy_min_kind": "ntfy: least urgent kind",
    "notify_webhook_url": "Webhook URL",
    "notify_webhook_min_kind": "Webhook: least urgent kind",
    "notify_timeout_seconds": "Delivery time-out (s)",
    "auto_resume_default": "Auto-resume newly found goals",
    "start_at_login": "Start Goalkeeper when I log in",
    "demo_enabled": "Include the demo provider",
    "quotas": "Quotas you defined",
    "resume_margin_seconds": "Margin after a reset (s)",
    "resume_jitter_seconds": "Random extra delay, up to (s)",
    "max_wait_hours": "Longest wait to schedule (h)",
    "max_auto_attempts": "Automatic attempts per quota episode",
    "relimit_window_seconds": "Re-limit window (s)",
    "resume_failure_backoff_seconds": "Retry after a failed start (s)",
    "runner_start_timeout_seconds": "Agent start timeout (s)",
    "fresh_read_timeout_seconds": "Quota re-check timeout (s)",
    "pause_threshold_percent": "Exhausted at (% used)",
    "resume_threshold_percent": "Recovered at or below (% used)",
    "stable_seconds": "Stays recovered for (s)",
    "stale_after_seconds": "Readings are stale after (s)",
    "max_sleep_seconds": "Scheduler's longest sleep while waiting (s)",
    "fallback_poll_min_seconds": "Fallback poll, shortest interval (s)",
    "fallback_poll_max_seconds": "Fallback poll, longest interval (s)",
    "fallback_poll_jitter": "Fallback poll jitter (fraction)",
    "provider_refresh_seconds": "Provider refresh interval (s)",
    "host_heartbeat_seconds": "Host heartbeat interval (s)",
    "host_stale_seconds": "Replace a silent host after (s)",
    "host_ping_timeout_seconds": "Host answer time-out (s)",
    "resume_reserve_percent": "Keep for me, every window (%)",
    "resume_reserve_by_window": "Keep for me, per window",
    "auto_resume_hours": "Automatic resumes only at",
    "auto_resume_timezone": "Time zone of those hours",
    "max_concurrent_resumes": "Automatic resumes at once, per window",
    "resume_settle_seconds": "Next resume after (s)",
    "store_url": "Shared store (postgresql://…)",
    "host_id": "This host's name",
    "account": "Subscription account name",
}

#: what each field means (the README's settings table), for tooltips and screen readers
HELP = {
    "resume_margin_seconds": "Added to the reset instant before resuming.",
    "resume_jitter_seconds": "A random 0–N s on top, so goals do not stampede.",
    "max_wait_hours": "Resets further away are shown, not scheduled.",
    "max_auto_attempts": "Automatic resumes per quota episode before giving up.",
    "relimit_window_seconds": "A new limit this soon after an automatic resume counts as a "
                              "failed attempt.",
    "resume_failure_backoff_seconds": "Wait before retrying when the agent could not be "
                                      "started.",
    "runner_start_timeout_seconds": "Time-box for starting an agent.",
    "fresh_read_timeout_seconds": "Backstop time-box for the fresh quota read taken right "
                                  "before an automatic resume.",
    "pause_threshold_percent": "Used % at which a window is exhausted.",
    "resume_threshold_percent": "Used % at or below which it may count as recovered.",
    "stable_seconds": "How long it must stay recovered before goals are resumed.",
    "stale_after_seconds": "Readings older than this are marked stale.",
    "max_sleep_seconds": "The scheduler's longest sleep while something is pending.",
    "fallback_poll_min_seconds": "Shortest interval of the fallback quota poll.",
    "fallback_poll_max_seconds": "Longest interval of the fallback quota poll.",
    "fallback_poll_jitter": "Random spread of the fallback poll interval (0–1).",
    "provider_refresh_seconds": "How often providers are asked for goals and quotas.",
    "host_heartbeat_seconds": "How often the host writes that it is alive.",
    "host_stale_seconds": "A host silent this long that does not answer may be replaced; "
                          "its writes are fenced off.",
    "host_ping_timeout_seconds": "How long commands wait before saying the host is not "
                                 "responding.",
    "demo_enabled": "Show the built-in demo goals in this data directory too.",
    "store_url": "Empty: this machine's own database. A postgresql:// URL: one database every "
                 "host of yours shares (no password here: goalkeeper secret set store-password, "
                 "~/.pgpass or a service file). Takes effect when the host restarts.",
    "host_id": "How this machine is named in the shared store; empty: the machine's name.",
    "account": "Hosts naming the same account share its quota readings.",
    "start_at_login": "Adds Goalkeeper to your desktop's autostart (XDG autostart on Linux).",
    "notify_ntfy_url": "Push to your phone through ntfy (public or self-hosted), e.g. "
                       "https://ntfy.sh/my-goals-7f3a. The topic is like a password: pick one "
                       "that is hard to guess. A token, if the server needs one, goes into the "
                       "keyring: goalkeeper secret set ntfy-token.",
    "notify_ntfy_min_kind": "The least urgent kind ntfy gets; the kinds after it in the list "
                            "are more urgent and are sent too.",
    "notify_webhook_url": "Each notification is POSTed here as JSON (kind, goal, title, "
                          "provider, host, at, message, next_resume_at). With a secret in the "
                          "keyring (goalkeeper secret set webhook-secret) the body is signed "
                          "(X-Goalkeeper-Signature).",
    "notify_webhook_min_kind": "The least urgent kind the webhook gets; the kinds after it in "
                               "the list are more urgent and are sent too.",
    "notify_timeout_seconds": "How long one attempt to reach ntfy or the webhook may take "
                              "(failed attempts are retried with backoff).",
    "resume_reserve_percent": "An automatic resume needs more than this share of the window "
                              "left, and a goal Goalkeeper resumed is paused when only this much "
                              "is left (until the window resets). 0 = off. Manual resumes ignore "
                              "it.",
    "resume_reserve_by_window": "Per-window reserves replacing the one above, e.g. "
                                "codex:5h=30, claude:7d=10.",
    "auto_resume_hours": "Weekly ranges in which automatic resumes may start, e.g. "
                         "Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00 (a range ending before it "
                         "starts runs past midnight; 'except …' for quiet hours). Empty: any "
                         "time. A goal's own hours replace these; manual resumes are always "
                         "allowed.",
    "auto_resume_timezone": "IANA name such as Europe/Berlin; empty: the system's zone.",
    "max_concurrent_resumes": "Goals waiting on one window resume in priority order, this many "
                              "at a time (0 = all at once).",
    "resume_settle_seconds": "The next waiting goal starts when a resumed one stops, or after "
                             "it has run this long.",
}

#: how a choice is shown (value → text); values without an entry are shown as they are
CHOICE_TEXT = {
    "scheduled": "A resume was scheduled (everything)",
    "resumed": "Resumed automatically",
    "done": "Done",
    "relimited": "Ran out of quota again",
    "could_not_resume": "Could not resume",
    "failed": "Failed",
    "gave_up": "Gave up at the attempt cap",
}


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
