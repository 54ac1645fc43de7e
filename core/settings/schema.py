"""The settings' schema: every field with its default, bounds and checks (pydantic).

Loaded only when settings are validated (:func:`core.settings.load_settings`) or a caller needs
the model itself: a command that reads settings a digest of which was validated before gets a
:class:`core.settings.snapshot.SettingsSnapshot` instead and loads none of pydantic (issue 24).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.clock import zone_named
from core.i18n import LANGUAGE_CHOICES, N_
from core.identity import check_name, check_store_url
from core.notices import (
    DEFAULT_PHONE_ACTIONS,
    RANKED,
    Kind,
    check_minimum,
    check_ntfy_url,
    check_phone_actions,
    check_webhook_url,
)
from core.policies.hours import parse_hours
from core.policies.reserve_table import parse_reserve_table
from core.quota.machine import HysteresisPolicy
from core.quota.user import QUOTA_NAME, UserQuota
from core.settings.snapshot import auto_resume_for, hysteresis_of

#: a field's allowed values, least urgent first, for editors that offer a list
_KIND_CHOICES: dict[str, Any] = {"choices": [k.value for k in RANKED]}


class Settings(BaseModel):
    """Every user setting, with its default. Documented field by field in the README."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True,
                              defer_build=True)

    auto_resume_default: bool = Field(False, description="auto-resume for newly found goals")
    resume_margin_seconds: float = Field(45, ge=0, le=3600)
    resume_jitter_seconds: float = Field(15, ge=0, le=3600)
    resume_threshold_percent: float = Field(90, ge=0, lt=100)
    pause_threshold_percent: float = Field(100, gt=0, le=100)
    stable_seconds: float = Field(30, ge=0, le=3600)
    stale_after_seconds: float = Field(600, gt=0)
    max_wait_hours: float = Field(169, gt=0)
    max_auto_attempts: int = Field(3, ge=1, le=100)
    relimit_window_seconds: float = Field(
        1800, ge=0, description="a new limit within this time after an auto resume is a retry"
    )
    resume_failure_backoff_seconds: float = Field(300, ge=1)
    runner_start_timeout_seconds: float = Field(60, gt=0)
    fresh_read_timeout_seconds: float = Field(
        30, gt=0, le=600, description="backstop for a provider's pre-resume quota read"
    )
    max_sleep_seconds: float = Field(60, gt=0, le=3600)
    fallback_poll_min_seconds: float = Field(30, gt=0)
    fallback_poll_max_seconds: float = Field(900, gt=0)
    fallback_poll_jitter: float = Field(0.1, ge=0, le=1)
    provider_refresh_seconds: float = Field(5, gt=0, le=3600)
    host_heartbeat_seconds: float = Field(
        5, gt=0, le=60, description="how often the host writes that it is alive (host.json)")
    host_stale_seconds: float = Field(
        30, gt=0, le=3600, description="a host silent this long that does not answer a ping "
        "may be replaced by a new one (its writes are fenced off)")
    host_ping_timeout_seconds: float = Field(
        5, gt=0, le=10, description="how long a command waits for the host's first answer")
    # -- several machines (issue 12) --
    store_url: str = Field(
        "", description="empty: this machine's SQLite file; postgresql://user@host/db: one "
        "database shared by every host. The password: `goalkeeper secret set store-password`, "
        "~/.pgpass or a service file — never here")
    host_id: str = Field(
        "", description="this host's name in a shared store; empty: the machine's name")
    account: str = Field(
        "", description="the name of the subscription account this machine uses; hosts that "
        "name the same account share its quota readings (empty: not shared)")
    codex_account: str = Field(
        "", description="Codex's account, when it differs from `account` (empty: what Codex "
        "itself says, else `account`)")
    claude_account: str = Field(
        "", description="Claude's account, when it differs from `account`")
    demo_enabled: bool = False
    codex_enabled: bool = Field(True, description="follow Codex whenever its home exists")
    codex_auto_resume: bool = Field(
        False, description="newly found Codex goals start with auto-resume on (as every "
        "provider's do when auto_resume_default is on)")
    codex_home: str = Field("", description="Codex's home; empty: $CODEX_HOME or ~/.codex")
    codex_bin: str = Field("", description="the codex executable; empty: codex on PATH")
    codex_continuation_text: str = Field(
        "The usage limit has reset; continue working on the active goal.", min_length=1,
        description="the prompt of the `codex exec resume` fallback",
    )
    codex_app_server_timeout_seconds: float = Field(10, gt=0, le=300)
    codex_confirm_timeout_seconds: float = Field(30, gt=0, le=600)
    codex_turn_end_timeout_seconds: float = Field(120, gt=0, le=3600)
    claude_enabled: bool = Field(True, description="watch Claude Code (when a config dir exists)")
    claude_auto_resume: bool = Field(
        False, description="newly found Claude Code sessions start with auto-resume on")
    claude_config_dirs: str = Field("", description="comma-separated; empty: $CLAUDE_CONFIG_DIR "
                                    "or ~/.claude and ~/.config/claude")
    claude_bin: str = Field("", description="the claude executable; empty: claude on PATH")
    claude_continuation_text: str = Field(
        "This is an automatic resume by Goalkeeper: your previous turn was cut off by a Claude "
        "usage limit, and that limit has now reset. Carry on with the task you were working on "
        "when the limit interrupted you, from where you stopped, until it is done — do not just "
        "acknowledge this message.", min_length=1, max_length=4000,
        description="the prompt of a headless resume (`claude -p --resume`)")
    claude_track_limit_stopped: bool = True
    claude_track_recent_hours: float = Field(24, ge=0)
    claude_timezone: str = Field("", description="IANA zone for limit messages naming none")
    claude_poll_seconds: float = Field(1.0, gt=0, le=60)
    claude_scan_workers: int = Field(0, ge=0, le=32, description="0: one per CPU, at most 4")
    claude_stop_grace_seconds: float = Field(10, gt=0, le=300)
    claude_turn_end_timeout_seconds: float = Field(
        300, gt=0, le=3600, description="a policy pause (reserve, budget) of a headless run: "
        "how long its turn in progress may take to end before it is stopped")
    claude_retry_attempts: int = Field(
        5, ge=1, le=20, description="headless turns tried when each ends on a transient 429")
    claude_retry_backoff_seconds: float = Field(
        30, gt=0, le=900, description="first backoff cap after a transient 429 (doubles, ≤ 15 min)")
    notify_resumed: bool = True
    notify_relimited: bool = True
    notify_gave_up: bool = True
    notify_scheduled: bool = True
    notify_done: bool = True
    notify_failed: bool = True
    notify_needs_attention: bool = Field(True, description="a goal Goalkeeper ran stopped on a "
                                         "sign-in problem or an error and waits for you")
    notify_rested: bool = Field(True, description="a pipeline run finished; the goal waits for "
                                "its next run")
    notify_ntfy_url: str = Field("", description="an ntfy topic URL (https://ntfy.sh/my-goals); "
                                 "empty: off. A token, if the server needs one: `goalkeeper "
                                 "secret set ntfy-token`")
    notify_ntfy_min_kind: Kind = Field(Kind.SCHEDULED, description="ntfy gets this kind and the "
                                       "more urgent ones", json_schema_extra=_KIND_CHOICES)
    notify_webhook_url: str = Field("", description="JSON is POSTed here, one request per "
                                    "notification; empty: off. Signed when the keyring holds "
                                    "`webhook-secret`")
    notify_webhook_min_kind: Kind = Field(Kind.SCHEDULED, description="the webhook gets this "
                                          "kind and the more urgent ones",
                                          json_schema_extra=_KIND_CHOICES)
    notify_timeout_seconds: float = Field(10, gt=0, le=60, description="time-box of one "
                                          "delivery attempt to ntfy or the webhook")
    start_at_login: bool = False
    setup_done: bool = Field(False, description="the set-up assistant has run (the app does not "
                             "open it at start-up again; `goalkeeper setup` runs it any time)")
    language: str = Field("", description="zh_CN, en, or empty: the system's (LANGUAGE, "
                          "LC_ALL, LC_MESSAGES, LANG)",
                          json_schema_extra={"choices": list(LANGUAGE_CHOICES)})
    pipeline_enabled: bool = Field(True, description="run pipeline goals added with `add`")
    pipeline_stop_grace_seconds: float = Field(
        5, gt=0, le=300, description="SIGTERM to SIGKILL grace when a step is stopped")
    pipeline_max_inline_wait_seconds: float = Field(
        120, ge=0, le=3600, description="rate-limit waits up to this are slept in process")
    # -- resume policies (issue 13) --
    resume_reserve_percent: float = Field(
        0, ge=0, lt=100, description="keep this % of every window for yourself (0 = off)")
    resume_reserve_by_window: dict[str, float] = Field(
        default_factory=dict,
        description="per-window reserves, WINDOW=PERCENT separated by commas (codex:5h=30)")
    auto_resume_hours: str = Field(
        "", description="when automatic resumes may start, e.g. 'Mon-Fri 19:00-08:00, "
        "Sat-Sun 00:00-24:00'; empty: any time")
    auto_resume_timezone: str = Field(
        "", description="IANA zone of the allowed hours; empty: the system's zone")
    max_concurrent_resumes: int = Field(
        1, ge=0, le=100, description="automatic resumes settling at once per window (0 = no limit)")
    resume_settle_seconds: float = Field(
        300, ge=0, le=86400, description="a resumed goal holds its window's slot this long")
    # -- keep awake (issue 23) --
    keep_awake: bool = Field(
        True, description="hold a sleep inhibitor while an automatic resume is due")
    keep_awake_hours: float = Field(
        12, gt=0, le=168, description="keep the machine awake for a resume due within this")
    keep_awake_min_battery_percent: float = Field(
        20, ge=0, le=100, description="on battery below this charge, let the machine sleep "
        "(0: hold on any charge)")
    # -- answers from the phone (issue 23) --
    phone_commands: bool = Field(
        False, description="put Resume now / Skip this window / Keep paused on notifications "
        "and take the signed answers from the command topic")
    phone_actions: str = Field(
        DEFAULT_PHONE_ACTIONS, description="what a phone may do, comma-separated: resume, skip, "
        "keep-paused")
    phone_command_expiry_minutes: float = Field(
        30, gt=0, le=1440, description="a notification's buttons work this long")
    phone_server_url: str = Field(
        "", description="the ntfy server of the command topic (https://ntfy.sh); empty: "
        "notify_ntfy_url's server")
    #: named user quotas, ``[quotas.<name>]`` tables (config.toml only: no environment override)
    quotas: dict[Annotated[str, Field(pattern=QUOTA_NAME)], UserQuota] = Field(
        default_factory=dict)

    @field_validator("store_url")
    @classmethod
    def _store_url(cls, text: str) -> str:
        return check_store_url(text)

    @field_validator("host_id", "account", "codex_account", "claude_account")
    @classmethod
    def _a_name(cls, text: str) -> str:
        return check_name(text)

    @field_validator("claude_continuation_text")
    @classmethod
    def _not_an_option(cls, text: str) -> str:
        if text.strip().startswith("-"):
            raise ValueError(N_("must not start with '-' (claude would read it as an option)"))
        return text

    @field_validator("language")
    @classmethod
    def _known_language(cls, text: str) -> str:
        if text not in LANGUAGE_CHOICES:
            raise ValueError(N_("must be one of: en, zh_CN, or empty for the system's language"))
        return text

    @field_validator("notify_ntfy_url")
    @classmethod
    def _ntfy_url(cls, text: str) -> str:
        return check_ntfy_url(text)

    @field_validator("phone_actions")
    @classmethod
    def _phone_actions(cls, text: str) -> str:
        return check_phone_actions(text)

    @field_validator("phone_server_url")
    @classmethod
    def _phone_server(cls, text: str) -> str:
        return check_webhook_url(text)

    @field_validator("notify_webhook_url")
    @classmethod
    def _webhook_url(cls, text: str) -> str:
        return check_webhook_url(text)

    @field_validator("notify_ntfy_min_kind", "notify_webhook_min_kind")
    @classmethod
    def _minimum_kind(cls, kind: Kind) -> Kind:
        return check_minimum(kind)

    @field_validator("auto_resume_hours")
    @classmethod
    def _valid_hours(cls, text: str) -> str:
        parse_hours(text)  # raises with the reason
        return text.strip()

    @field_validator("auto_resume_timezone")
    @classmethod
    def _valid_zone(cls, name: str) -> str:
        name = name.strip()
        if name and zone_named(name) is None:
            raise ValueError(N_("unknown time zone {name!r} (an IANA name such as "
                                "Europe/Berlin, or empty for the system's zone)").format(name=name))
        return name

    @field_validator("resume_reserve_by_window", mode="before")
    @classmethod
    def _reserve_table(cls, value: Any) -> Any:
        return parse_reserve_table(value)

    @model_validator(mode="after")
    def _check_relations(self) -> Settings:
        self.hysteresis()  # raises ValueError on an inconsistent pair of thresholds
        if self.fallback_poll_min_seconds > self.fallback_poll_max_seconds:
            raise ValueError(N_("fallback_poll_min_seconds must not exceed "
                                "fallback_poll_max_seconds"))
        if self.host_stale_seconds < 2 * self.host_heartbeat_seconds:
            raise ValueError(N_("host_stale_seconds must be at least twice "
                                "host_heartbeat_seconds"))
        return self

    def auto_resume_for(self, provider: str) -> bool:
        """Whether a newly found goal of ``provider`` starts with auto-resume on."""
        return auto_resume_for(self, provider)

    def hysteresis(self) -> HysteresisPolicy:
        return hysteresis_of(self)
