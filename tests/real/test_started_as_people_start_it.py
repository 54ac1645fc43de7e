"""End to end (issue 19): the host started the three ways people start it, each resuming a real
Claude Code session and a real Codex goal under ``$HOME`` once after their resets, offline
against the mock APIs on 127.0.0.1.

1. From a terminal in ``$HOME`` (``PWD``, ``OLDPWD``, ``TERM`` set): ``goalkeeper daemon``.
2. From the desktop: the ``Exec`` line of the entry ``goalkeeper desktop install`` wrote, with a
   desktop session's environment (``XDG_CURRENT_DESKTOP``, ``WAYLAND_DISPLAY``, ``DISPLAY``,
   ``PWD`` = ``$HOME`` from the session's login shell, no terminal); Qt offscreen.
3. As a service: ``ExecStart`` and ``Environment`` of the unit ``goalkeeper service install``
   wrote, run without systemd in the environment a user manager gives (``HOME``, ``USER``,
   ``XDG_RUNTIME_DIR``, ``~/.config/environment.d``), in ``$HOME`` (a user unit's default
   working directory), no ``PWD``.

Every path is the default one: the data under ``~/.local/share/goalkeeper``, Claude's
``~/.claude``, Codex's ``~/.codex``; the sessions' projects under ``$HOME``. Done when each
goal is done, resumed once in its real directory, and no stored field, log line or
``goalkeeper status`` output shows ``********``. Case 1 runs on both ends of each CLI's range
(paired: oldest with oldest, newest with newest); cases 2 and 3 on the newest.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from core.integration.command import goalkeeper_argv
from core.paths import Paths, resolve_paths
from core.redact import MASK
from tests.real.claude_mock import Answer, ClaudeApi
from tests.real.claude_world import ClaudeWorld
from tests.real.codex_mock import (
    CodexMock,
    codex_processes,
    git_repo,
    limited_goal,
    running_mock,
    write_home,
)
from tests.real.mockhttp import MockServer
from tests.real.pins import Pin, pinned, selected
from tests.support.daemon import running_host
from tests.support.entries import desktop_entry_exec, unit_command

MARK = MASK.decode()
#: seconds from the stops to their resets: the host is up and has planned both by then
RESET_AFTER = 8
DONE_WITHIN = 90.0
SETTINGS = """auto_resume_default = true
resume_margin_seconds = 0
resume_jitter_seconds = 0
stable_seconds = 0
max_sleep_seconds = 0.5
claude_poll_seconds = 0.2
claude_retry_backoff_seconds = 0.5
claude_stop_grace_seconds = 5
codex_app_server_timeout_seconds = 30
codex_confirm_timeout_seconds = 30
codex_turn_end_timeout_seconds = 30
"""


def _ends() -> list[tuple[Pin, Pin]]:
    claude, codex = selected("claude"), selected("codex")
    pairs = [(claude[min(i, len(claude) - 1)], codex[min(i, len(codex) - 1)])
             for i in range(max(len(claude), len(codex)))]
    return list(dict.fromkeys(pairs))


class Person:
    """A home with Claude Code's and Codex's default directories, a project of each under it,
    and the environment every way of starting shares (login, locale, the agents' offline
    wiring a person would keep in a profile)."""

    def __init__(self, root: Path, claude_bin: Path, codex_bin: Path, claude_url: str,
                 codex: CodexMock) -> None:
        self.home = root / "home"
        self.claude = ClaudeWorld(self.home, claude_bin, claude_url, in_home=True)
        self.codex_home = self.home / ".codex"
        write_home(self.codex_home, codex.url)
        self.repo = git_repo(self.home / "work" / "repo")
        self.codex, self.codex_bin = codex, codex_bin
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        self.claude_bin = claude_bin

    def write_settings(self) -> None:
        config = self.paths.config_file
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(SETTINGS + f'claude_bin = "{self.claude_bin}"\n'
                                     f'codex_bin = "{self.codex_bin}"\n')

    @property
    def login(self) -> dict[str, str]:
        """What every process of this person has, however started."""
        return {"HOME": str(self.home), "USER": "someone", "LOGNAME": "someone",
                "SHELL": "/bin/bash", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "LANG": "C.UTF-8", "TZ": "UTC", "XDG_RUNTIME_DIR": str(self.runtime)}

    @property
    def profile(self) -> dict[str, str]:
        """The agents' wiring (offline, a made-up login) and no keyring, as a profile sets it."""
        claude = {k: v for k, v in self.claude.env.items() if k not in self.login}
        return {**claude, "GK_MOCK_API_KEY": "dummy-codex-key-value", "NO_COLOR": "1",
                "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}

    @property
    def paths(self) -> Paths:
        # the test process's HOME is this person's (see the fixture): the same default paths
        return resolve_paths(self.login)

    def cli(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        done = subprocess.run([*goalkeeper_argv(), *args], cwd=self.home,
                              env=dict(env or {**self.login, **self.profile}),
                              capture_output=True, text=True, timeout=60, check=False)
        return done.stdout + done.stderr

    async def stopped_goals(self, api: ClaudeApi) -> tuple[str, str]:
        """A Claude session and a Codex goal under $HOME, both stopped at a usage limit that
        resets :data:`RESET_AFTER` seconds from now. Returns (Claude session, Codex thread)."""
        resets = int(time.time()) + RESET_AFTER
        api.reset(Answer.ok())
        api.then(Answer.limit("five_hour", resets))
        run = self.claude.print_mode("Make the integration tests pass")
        assert run.code == 1 and run.result["api_error"] == "usage_limit_reached", run.stderr
        self.codex.set(mode="limit", delay=0.0, used5=100, reset5=resets, reset_credits=None,
                       spend_control=None, allowed=True)
        env = {**os.environ, **self.login, **self.profile, "CODEX_HOME": str(self.codex_home)}
        env = {k: v for k, v in env.items() if not k.startswith(("OPENAI_", "GOALKEEPER_"))}
        thread = await limited_goal(self.codex_bin, env, self.repo, "Write the report")
        # after the reset: the usage endpoint says recovered, the next turn completes the goal
        self.codex.set(mode="complete", used5=20, usage5=3, usage7=41)
        return run.session_id, thread

    def goals(self) -> dict[str, tuple[str, dict[str, Any]]]:
        if not self.paths.database.exists():
            return {}
        with sqlite3.connect(f"file:{self.paths.database}?mode=ro", uri=True) as db:
            return {row[0]: (row[1], json.loads(row[2]))
                    for row in db.execute("SELECT id, state, data FROM goals")}

    def stored_text(self) -> str:
        with sqlite3.connect(f"file:{self.paths.database}?mode=ro", uri=True) as db:
            return "\n".join(db.iterdump())

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")
                         for p in sorted(self.paths.log_dir.rglob("*")) if p.is_file())


@pytest.fixture(scope="module")
def codex_api() -> Iterator[CodexMock]:
    with running_mock() as server:
        yield server


@pytest.fixture
def person_of(tmp_path: Path, claude_api: tuple[ClaudeApi, MockServer], codex_api: CodexMock,
              monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    made: list[Person] = []

    def make(claude: Pin, codex: Pin) -> Person:
        person = Person(tmp_path, pinned(claude), pinned(codex), claude_api[1].url, codex_api)
        monkeypatch.setenv("HOME", str(person.home))
        for name in ("GOALKEEPER_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                     "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
            monkeypatch.delenv(name, raising=False)
        person.write_settings()
        made.append(person)
        return person

    yield make
    for person in made:
        assert _settled(person.codex_home) == [], "codex processes left behind"


def _settled(home: Path) -> list[int]:
    for _ in range(50):
        if not codex_processes(home):
            return []
        time.sleep(0.1)
    return codex_processes(home)


async def _resumed_once_in_place(person: Person, argv: list[str], env: Mapping[str, str],
                                 api: ClaudeApi, out_dir: Path) -> None:
    session, thread = await person.stopped_goals(api)
    claude_goal, codex_goal = f"claude:{session}", f"codex:{thread}"
    with running_host(out_dir, argv, env, person.home, timeout=30) as proc:
        deadline = time.monotonic() + DONE_WITHIN
        while {person.goals().get(g, ("",))[0] for g in (claude_goal, codex_goal)} != {"done"}:
            assert proc.poll() is None, (out_dir / "daemon.out").read_text()
            assert time.monotonic() < deadline, (person.goals(), person.logs())
            await asyncio.sleep(0.5)
        status = person.cli("status") + person.cli("status", "--json")
    goals = person.goals()
    # Claude: resumed once, after its reset, in its real directory under $HOME
    assert len(api.requests_of(session, "sdk-cli")) == 2  # the stop, one resume
    assert goals[claude_goal][1]["cwd"] == str(person.claude.project)
    resumed = [r for r in person.claude.records(session) if r.get("entrypoint") == "sdk-cli"]
    assert {r.get("cwd") for r in resumed if r.get("cwd")} == {str(person.claude.project)}
    # Codex: the goal is complete in Codex too, its directory kept
    assert goals[codex_goal][1]["cwd"] == str(person.repo)
    with sqlite3.connect(f"file:{person.codex_home / 'goals_1.sqlite'}?mode=ro", uri=True) as db:
        (status_in_codex,) = db.execute("SELECT status FROM thread_goals WHERE thread_id = ?",
                                        (thread,)).fetchone()
    assert status_in_codex == "complete"
    # nothing shows a mask: not the store, not a log, not `goalkeeper status`
    output = (out_dir / "daemon.out").read_text(errors="replace")
    for where, text in (("the store", person.stored_text()), ("the log", person.logs()),
                        ("the host's output", output), ("goalkeeper status", status)):
        assert MARK not in text, f"{where} shows {MARK}"
    assert str(person.claude.project) in status  # the paths are there, as they are


@pytest.mark.asyncio
@pytest.mark.parametrize("ends", _ends(),
                         ids=lambda e: f"claude-{e[0].version}-codex-{e[1].version}")
async def test_from_a_terminal_in_home(ends: tuple[Pin, Pin], person_of: Any,
                                       claude_api: tuple[ClaudeApi, MockServer],
                                       tmp_path: Path) -> None:
    person: Person = person_of(*ends)
    terminal = {"PWD": str(person.home), "OLDPWD": str(person.claude.project),
                "TERM": "xterm-256color", "SHLVL": "1", "COLORTERM": "truecolor"}
    env = {**person.login, **person.profile, **terminal}
    await _resumed_once_in_place(person, [*goalkeeper_argv(), "daemon"], env, claude_api[0],
                                 tmp_path)


@pytest.mark.asyncio
async def test_from_the_desktop_entry(person_of: Any, claude_api: tuple[ClaudeApi, MockServer],
                                      tmp_path: Path) -> None:
    person: Person = person_of(selected("claude")[-1], selected("codex")[-1])
    print(person.cli("desktop", "install", "--no-autostart"))
    entry = person.home / ".local/share/applications/io.github.goalkeeper.Goalkeeper.desktop"
    argv = desktop_entry_exec(entry)
    assert argv[-1] == "gui"
    # a session started through a login shell hands its PWD (= $HOME) down to what it launches
    desktop = {"PWD": str(person.home), "XDG_CURRENT_DESKTOP": "GNOME",
               "XDG_SESSION_DESKTOP": "gnome", "DESKTOP_SESSION": "gnome",
               "XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0",
               "QT_QPA_PLATFORM": "offscreen"}
    env = {**person.login, **person.profile, **desktop}
    await _resumed_once_in_place(person, argv, env, claude_api[0], tmp_path)


@pytest.mark.asyncio
async def test_as_the_systemd_user_service(person_of: Any,
                                           claude_api: tuple[ClaudeApi, MockServer],
                                           tmp_path: Path) -> None:
    person: Person = person_of(selected("claude")[-1], selected("codex")[-1])
    # no user manager here: a systemctl that says so (install still writes the unit)
    bin_dir = tmp_path / "no-systemd"
    bin_dir.mkdir()
    (bin_dir / "systemctl").write_text("#!/bin/sh\necho 'Failed to connect to bus' >&2\n"
                                       "exit 1\n")
    (bin_dir / "systemctl").chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{person.login['PATH']}"
    print(person.cli("service", "install", env={**person.login, **person.profile,
                                                 "PATH": path}))
    argv, environment = unit_command(person.home / ".config/systemd/user/goalkeeper.service")
    assert argv[-1] == "daemon"
    # what a user manager gives its services, and ~/.config/environment.d
    conf = person.home / ".config" / "environment.d" / "60-agents.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("".join(f"{k}={v}\n" for k, v in person.profile.items()))
    manager = {**person.login, **dict(line.split("=", 1) for line in
                                      conf.read_text().splitlines())}
    await _resumed_once_in_place(person, argv, {**manager, **environment}, claude_api[0],
                                 tmp_path)
