"""Set-up assistant helpers: a fake Codex home (with a goals database) and a fake Claude
config directory (with session transcripts) under ``tmp_path``, named by the environment."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

from core.setup.assistant import SetupContext

GOALS = [("019a-thread-one", "Port the parser", "usageLimited"),
         ("019a-thread-two", "Fix the flaky test", "active")]


@dataclasses.dataclass
class AgentHomes:
    codex: Path
    claude: Path
    xdg_config: Path

    @property
    def env(self) -> dict[str, str]:
        return {"CODEX_HOME": str(self.codex), "CLAUDE_CONFIG_DIR": str(self.claude),
                "XDG_CONFIG_HOME": str(self.xdg_config)}

    def claude_settings(self) -> dict[str, Any]:
        path = self.claude / "settings.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def autostart(self) -> Path:
        from core.integration.resources import DESKTOP_FILE

        return self.xdg_config / "autostart" / DESKTOP_FILE


def agent_homes(tmp_path: Path, sessions: int = 3, codex_dir: str = "codex-home",
                claude_dir: str = "claude-config", xdg_dir: str = "xdg-config") -> AgentHomes:
    """Codex with two goals, Claude Code with ``sessions`` transcripts and its own settings."""
    codex = tmp_path / codex_dir
    (codex / "sessions").mkdir(parents=True)
    con = sqlite3.connect(codex / "goals_1.sqlite")
    con.execute("""CREATE TABLE thread_goals (thread_id TEXT PRIMARY KEY NOT NULL,
        goal_id TEXT NOT NULL, objective TEXT NOT NULL, status TEXT NOT NULL,
        token_budget INTEGER, tokens_used INTEGER NOT NULL DEFAULT 0,
        time_used_seconds INTEGER NOT NULL DEFAULT 0, created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER NOT NULL)""")
    con.executemany("INSERT INTO thread_goals VALUES (?, ?, ?, ?, NULL, 5, 6, ?, ?)",
                    [(t, f"g-{i}", o, s, 1_780_000_000_000, 1_780_000_060_000)
                     for i, (t, o, s) in enumerate(GOALS)])
    con.commit()
    con.close()
    claude = tmp_path / claude_dir
    project = claude / "projects" / "-home-me-repo"
    project.mkdir(parents=True)
    for n in range(sessions):
        (project / f"session-{n}.jsonl").write_text("{}\n", encoding="utf-8")
    (claude / "settings.json").write_text('{"theme": "dark"}\n', encoding="utf-8")
    return AgentHomes(codex, claude, tmp_path / xdg_dir)


class FakeService:
    """Stands in for ``goalkeeper service install``: counts installs, answers ``problem``."""

    def __init__(self, problem: str | None = None) -> None:
        self.installs = 0
        self.problem = problem

    def install(self) -> str | None:
        self.installs += 1
        return self.problem

    def faked(self, ctx: SetupContext) -> SetupContext:
        return dataclasses.replace(ctx, install_service=self.install,
                                   service_installed=lambda: self.installs > 0)
