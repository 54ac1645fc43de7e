"""The set-up assistant: what Goalkeeper found on this machine, and the few choices that put it
to work on the user's own agents (issue 22).

Shared by the desktop app's assistant (``gui/dialogs/setup_dialog.py``, through the bridge) and
``goalkeeper setup`` (``core/cli/setup.py``). :func:`find` only reads — where each provider
looks is the registry's ``looked_for``, the Codex goals are the provider's own
``goals_db.read_goals`` and the Claude sessions the transcripts its follower reads.
:func:`apply` changes only what a :class:`Choices` says yes to: a "no" leaves a setting as it
is (it never turns anything off), and every choice's default is no. Both record that the
assistant ran (``setup_done``), so the app does not open it at start-up again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from core.i18n import N_
from core.integration.autostart import apply_autostart, autostart_file, is_ours
from core.integration.xdg import NoHomeDirectory
from core.paths import Paths
from core.providers.registry import looked_for
from core.settings import Settings, load_settings, save_settings

#: a transcript directory holding more than this is counted as "at least" this many
MAX_COUNTED = 10_000

#: every choice, in the order it is offered: (key, what it is, what saying yes does)
CHOICES: tuple[tuple[str, str, str], ...] = (
    ("codex_auto_resume", N_("Auto-resume Codex goals"),  # i18n: ignore (a key)
     N_("Sets codex_auto_resume: Codex goals found from now on are resumed automatically when "
        "their quota window resets. Goals already found keep their own switch (the window's "
        "Auto-resume toggle, or `goalkeeper auto-resume`).")),
    ("claude_auto_resume", N_("Auto-resume Claude Code sessions"),  # i18n: ignore (a key)
     N_("Sets claude_auto_resume: Claude Code sessions cut off by a usage limit from now on are "
        "resumed headless (`claude -p --resume`) when the limit resets.")),
    ("claude_hooks", N_("Install Claude Code's hooks"),  # i18n: ignore (a key)
     N_("Adds Goalkeeper's statusline and StopFailure/Notification hooks to each Claude config "
        "directory's settings.json (a backup is kept; `goalkeeper hooks uninstall claude` "
        "puts it back). Claude's quota is then read exactly, not guessed from limit "
        "messages.")),
    ("start_at_login", N_("Start the app at login"),  # i18n: ignore (a key)
     N_("Sets start_at_login and writes the desktop's autostart entry (Linux).")),
    ("service", N_("Run as a service instead"),
     N_("Installs and starts the headless daemon as a user service (systemd --user or "
        "launchd), as `goalkeeper service install` does: goals are resumed with no window "
        "open.")),
    ("ntfy", N_("Notifications on the phone"),
     N_("Sets notify_ntfy_url: resumes, new limits and goals that need you are sent to this "
        "ntfy topic (subscribe to it in the ntfy app).")),
)
CHOICE_KEYS = tuple(key for key, _title, _does in CHOICES)


@dataclass(frozen=True)
class Findings:
    """What the assistant found; read-only, from the settings and the providers' files."""

    looked_for: list[tuple[str, str]]
    codex_home: str
    codex_found: bool
    codex_goals: int
    claude_dirs: list[str]
    claude_found: list[str]
    claude_sessions: int
    hooks_installed: bool
    quotas: list[tuple[str, str]]
    #: which choices are already in effect (offered as done, not again)
    already: dict[str, bool]
    ntfy_url: str

    def to_json(self) -> dict[str, Any]:
        return {"looked_for": [{"provider": p, "text": t} for p, t in self.looked_for],
                "codex": {"home": self.codex_home, "found": self.codex_found,
                          "goals": self.codex_goals},
                "claude": {"dirs": self.claude_dirs, "found": self.claude_found,
                           "sessions": self.claude_sessions,
                           "hooks_installed": self.hooks_installed},
                "quotas": [{"provider": p, "how": t} for p, t in self.quotas],
                "already": self.already, "ntfy_url": self.ntfy_url}


@dataclass(frozen=True)
class Choices:
    """The user's yes to each choice; the defaults are the assistant's defaults (all no)."""

    codex_auto_resume: bool = False
    claude_auto_resume: bool = False
    claude_hooks: bool = False
    start_at_login: bool = False
    service: bool = False
    #: a non-empty URL is the yes to notifications on the phone
    ntfy_url: str = ""

    def chosen(self) -> list[str]:
        """The keys said yes to, in :data:`CHOICES`' order."""
        return [key for key in CHOICE_KEYS
                if (bool(self.ntfy_url) if key == "ntfy" else getattr(self, key))]

    def to_json(self) -> dict[str, Any]:
        return {key: (self.ntfy_url or None) if key == "ntfy" else getattr(self, key)
                for key in CHOICE_KEYS}


@dataclass(frozen=True)
class Applied:
    """One choice carried out: its key, whether it worked, and what happened (English, shown
    through ``localized()``)."""

    key: str
    ok: bool
    text: str


@dataclass(frozen=True)
class SetupContext:
    """What :func:`find` and :func:`apply` work on. ``install_service`` installs the service and
    returns a problem or None, ``install_hooks`` installs Claude's hooks into one directory and
    returns what changed — both are the CLI's own code paths, handed in so tests can fake
    them; ``service_installed`` says whether the service's file is there (None: unknown)."""

    paths: Paths
    environ: Mapping[str, str]
    now: Callable[[], datetime]
    install_hooks: Callable[[Path], list[str]]
    install_service: Callable[[], str | None]
    service_installed: Callable[[], bool | None] = lambda: None
    argv: list[str] | None = field(default=None)


def find(settings: Settings, ctx: SetupContext) -> Findings:
    """What there is: the providers' homes, goals and sessions, how quotas are read."""
    from core.providers.claude import config as claude_config
    from core.providers.claude.hooks import installed
    from core.providers.codex.config import codex_home

    home = codex_home(settings, ctx.environ)
    claude_dirs = claude_config.candidate_dirs(settings.claude_config_dirs, ctx.environ)
    claude_found = claude_config.existing_dirs(settings.claude_config_dirs, ctx.environ)
    hooks = bool(claude_found) and all(installed(d) for d in claude_found)
    return Findings(
        looked_for=looked_for(settings, ctx.environ),
        codex_home=str(home), codex_found=home.is_dir(), codex_goals=_codex_goals(home),
        claude_dirs=[str(d) for d in claude_dirs], claude_found=[str(d) for d in claude_found],
        claude_sessions=sum(_claude_sessions(d) for d in claude_found),
        hooks_installed=hooks, quotas=_quotas(home.is_dir(), bool(claude_found), hooks),
        already={"codex_auto_resume": settings.auto_resume_for("codex"),
                 "claude_auto_resume": settings.auto_resume_for("claude"),
                 "claude_hooks": hooks,
                 "start_at_login": settings.start_at_login and _autostart_on(ctx.environ),
                 "service": bool(ctx.service_installed()),
                 "ntfy": bool(settings.notify_ntfy_url)},
        ntfy_url=settings.notify_ntfy_url)


def _codex_goals(home: Path) -> int:
    if not home.is_dir():
        return 0
    from core.providers.codex.goals_db import GoalsDbError, read_goals

    try:
        goals = read_goals(home)
    except (GoalsDbError, OSError):
        return 0
    return len(goals.goals) if goals is not None else 0


def _claude_sessions(config_dir: Path) -> int:
    """Transcripts under ``projects/<project>/`` — what the Claude follower reads."""
    count = 0
    try:
        for project in (config_dir / "projects").iterdir():
            if project.is_dir():
                count += sum(1 for name in os.listdir(project) if name.endswith(".jsonl"))
            if count >= MAX_COUNTED:
                return MAX_COUNTED
    except OSError:
        pass
    return count


def _quotas(codex: bool, claude: bool, hooks: bool) -> list[tuple[str, str]]:
    """How each found provider's quota is read, exactly."""
    out = []
    if codex:
        out.append(("codex", N_("read from the rate_limits Codex writes into its session "
                                "files (sessions/…/rollout-*.jsonl): the 5-hour and weekly "
                                "windows, read afresh from `codex app-server` before a resume")))
    if claude and hooks:
        out.append(("claude", N_("read exactly from the rate_limits Claude Code hands its "
                                 "statusline (Goalkeeper's hook): the 5-hour and weekly "
                                 "windows; the limit messages in the transcripts too")))
    elif claude:
        out.append(("claude", N_("guessed from the usage-limit messages in the session "
                                 "transcripts (projects/…/*.jsonl): the reset time, no "
                                 "percentages — install the hooks for exact readings")))
    return out


def _autostart_on(environ: Mapping[str, str]) -> bool:
    try:
        return is_ours(autostart_file(environ))
    except NoHomeDirectory:
        return False


def apply(choices: Choices, ctx: SetupContext) -> list[Applied]:
    """Carry out every yes in ``choices`` and record that the assistant ran. Settings are
    written to the config file (never the environment's values); a "no" changes nothing."""
    done: list[Applied] = []
    problem = _save(ctx.paths.config_file, choices)
    for key in ("codex_auto_resume", "claude_auto_resume", "ntfy"):
        if key in choices.chosen():
            done.append(Applied(key, problem is None, problem or _SAVED[key]))
    if choices.start_at_login:
        trouble = problem or apply_autostart(True, ctx.environ, ctx.argv, sys.platform)
        done.append(Applied("start_at_login", trouble is None,
                            trouble or N_("start_at_login is on; the autostart entry is "
                                          "written")))
    if choices.claude_hooks:
        done.extend(_hooks(ctx))
    if choices.service:
        trouble = ctx.install_service()
        done.append(Applied("service", trouble is None,
                            trouble or N_("the service is installed and started")))
    return done


_SAVED = {"codex_auto_resume": N_("codex_auto_resume is on"),
          "claude_auto_resume": N_("claude_auto_resume is on"),
          "ntfy": N_("notify_ntfy_url is set")}


def _save(config_file: Path, choices: Choices) -> str | None:
    """The file's settings with every yes switched on and ``setup_done`` set."""
    from core.settings import SettingsError

    update: dict[str, Any] = {"setup_done": True}
    for key in ("codex_auto_resume", "claude_auto_resume", "start_at_login"):
        if getattr(choices, key):
            update[key] = True
    if choices.ntfy_url:
        update["notify_ntfy_url"] = choices.ntfy_url
    try:
        current = load_settings(config_file, {})
        settings = Settings.model_validate({**current.model_dump(), **update})
        save_settings(config_file, settings)
    except SettingsError as exc:
        return str(exc)
    except ValueError as exc:  # a bad ntfy URL
        return N_("the settings were not saved: {error}").format(error=exc)
    except OSError as exc:
        return N_("could not write {path}: {error}").format(path=config_file,
                                                            error=exc.strerror or exc)
    return None


def _hooks(ctx: SetupContext) -> list[Applied]:
    from core.providers.claude import config as claude_config
    from core.providers.claude.hooks import HookError

    settings = load_settings(ctx.paths.config_file, ctx.environ)
    dirs = claude_config.existing_dirs(settings.claude_config_dirs, ctx.environ)
    if not dirs:
        return [Applied("claude_hooks", False, N_("no Claude config directory was found"))]
    out = []
    for directory in dirs:
        try:
            changes = ctx.install_hooks(directory)
        except HookError as exc:
            out.append(Applied("claude_hooks", False, str(exc)))
            continue
        out.append(Applied("claude_hooks", True,
                           N_("hooks installed in {dir}").format(dir=directory) if changes
                           else N_("hooks were already installed in {dir}").format(
                               dir=directory)))
    return out


def mark_done(config_file: Path) -> str | None:
    """Record that the assistant ran, changing nothing else (its "Not now")."""
    return _save(config_file, Choices())


def default_context(paths: Paths, environ: Mapping[str, str], now: Callable[[], datetime],
                    argv0: str, executable: str) -> SetupContext:
    """The context the app and the CLI use: the real hooks installer and service manager."""
    from core.integration.command import goalkeeper_argv

    def install_hooks(directory: Path) -> list[str]:
        from core.providers.claude import hooks, stop_hook
        from core.providers.claude.state import spool_path

        program = hooks.program_command(environ, argv0, executable)
        stop = hooks.stop_failure_command(executable, Path(stop_hook.__file__).resolve(),
                                          spool_path(paths.data_dir))
        return hooks.install(directory, paths.data_dir, program, now(), stop).changes

    def install_service() -> str | None:
        from core.integration.service import ServiceUnsupported, service_manager

        try:
            report = service_manager(environ, goalkeeper_argv(), log_dir=paths.log_dir).install()
        except (ServiceUnsupported, NoHomeDirectory) as exc:
            return str(exc)
        problem: str | None = report.problem
        return problem

    def service_installed() -> bool | None:
        """The unit (or agent) file is there and ours — read, not asked of the manager."""
        from core.integration import launchd, systemd

        try:
            if sys.platform.startswith("linux"):
                return systemd.is_ours(systemd.unit_path(environ))
            if sys.platform == "darwin":
                return launchd.is_ours(launchd.agent_path(environ))
        except NoHomeDirectory:
            return None
        return None

    return SetupContext(paths, environ, now, install_hooks, install_service, service_installed)
