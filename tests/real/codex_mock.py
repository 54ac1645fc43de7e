"""The real ``codex`` offline: a mock OpenAI Responses API and ChatGPT usage endpoint on
127.0.0.1, and a private ``CODEX_HOME`` wired to them (``provider-formats.md`` B0).

* ``POST /v1/responses`` answers by :attr:`Plan.mode`: ``limit`` — 429 ``usage_limit_reached``;
  ``complete`` — an ``update_goal {status: complete}`` tool call, then (once the tool output
  comes back) the final message; ``text`` — a plain message (Codex then continues the active goal
  turn after turn). Every answer carries the ``x-codex-*`` rate-limit headers of the plan.
* ``GET /backend-api/wham/usage`` is what ``account/rateLimits/read`` asks with the dummy
  ChatGPT login in ``auth.json``: ``rate_limit.allowed`` becomes ``ordinaryUsageAllowed`` (only
  when ``account_id``/``user_id`` match the login), ``spend_control.reached`` becomes
  ``spendControlReached``, ``rate_limit_reset_credits.available_count`` the banked resets.

Nothing here reaches the network, and the user's own Codex home is never touched.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.clock import FakeClock
from core.commands import Resume
from core.models import GoalState, Outcome
from core.providers.codex.config import from_settings
from core.providers.codex.provider import CodexProvider
from core.providers.codex.rpc import AppServer
from core.providers.procstat import state
from core.settings import Settings
from tests.real.mockhttp import MockServer, Reply, Request
from tests.support.fakes import until
from tests.support.jsonl import read_jsonl

ACCOUNT = "acct-goalkeeper-test"
USER = "user-goalkeeper-test"
FINAL_TEXT = "All done: the objective is achieved."


@dataclasses.dataclass
class Plan:
    """What the mock answers now (tests change it between steps)."""

    mode: str = "limit"  # limit | complete | text
    delay: float = 0.0  # seconds before each Responses answer (a long turn)
    used5: int = 100  # the x-codex-* headers
    used7: int = 40
    reset5: int = 0  # epoch seconds; 0: in an hour
    reset7: int = 0  # 0: in four days
    usage5: int = 3  # what the usage endpoint says
    usage7: int = 41
    allowed: bool = True  # rate_limit.allowed → ordinaryUsageAllowed
    spend_control: bool | None = None
    reset_credits: int | None = None

    def resets(self) -> tuple[int, int]:
        now = int(time.time())
        return self.reset5 or now + 3600, self.reset7 or now + 4 * 86400


def _headers(plan: Plan) -> dict[str, str]:
    reset5, reset7 = plan.resets()
    return {
        "x-codex-primary-used-percent": f"{plan.used5:.1f}",
        "x-codex-primary-window-minutes": "300",
        "x-codex-primary-reset-at": str(reset5),
        "x-codex-secondary-used-percent": f"{plan.used7:.1f}",
        "x-codex-secondary-window-minutes": "10080",
        "x-codex-secondary-reset-at": str(reset7),
    }


def _sse(rid: str, items: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}
    events: list[tuple[str, Any]] = [
        ("response.created", {"type": "response.created", "response": {"id": rid}})]
    events += [("response.output_item.done", {"type": "response.output_item.done", "item": it})
               for it in items]
    events.append(("response.completed", {"type": "response.completed",
                                          "response": {"id": rid, "usage": usage}}))
    return events


def _message(rid: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": f"msg_{rid}", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _tool_call(rid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{rid}", "call_id": f"call_{rid}", "name": name,
            "arguments": json.dumps(args), "status": "completed"}


class CodexMock:
    """The mock server and its plan. Attributes: ``plan``, ``server`` (requests recorded)."""

    def __init__(self) -> None:
        self.plan = Plan()
        self._lock = threading.Lock()
        self._count = 0
        self.server = MockServer(self._handle)

    @property
    def url(self) -> str:
        return self.server.url

    def set(self, **changes: Any) -> None:
        with self._lock:
            self.plan = dataclasses.replace(self.plan, **changes)

    def requests(self, suffix: str) -> list[Request]:
        return [r for r in self.server.requests if r.path.endswith(suffix)]

    def _handle(self, request: Request) -> Reply:
        with self._lock:
            plan = self.plan
            self._count += 1
            rid = f"r{self._count}"
        if request.path.endswith("/responses"):
            if plan.delay:
                time.sleep(plan.delay)
            return self._responses(request, plan, rid)
        if request.path.endswith("/wham/usage"):
            return Reply.json(self._usage(plan))
        if request.path.endswith("/wham/rate-limit-reset-credits"):
            return Reply.json({"available_count": plan.reset_credits or 0, "credits": []})
        return Reply.json({"detail": "not served by the mock"}, 404)

    def _responses(self, request: Request, plan: Plan, rid: str) -> Reply:
        if plan.mode == "limit":
            reset5, _ = plan.resets()
            return Reply.json({"error": {
                "type": "usage_limit_reached", "message": "You've hit your usage limit.",
                "plan_type": "plus", "resets_at": reset5,
                "resets_in_seconds": max(0, reset5 - int(time.time()))}}, 429, _headers(plan))
        if plan.mode == "complete":
            body = request.json()
            inputs = body.get("input") or [] if isinstance(body, dict) else []
            last = inputs[-1] if inputs and isinstance(inputs[-1], dict) else {}
            if last.get("type") == "function_call_output":
                return Reply.sse(_sse(rid, [_message(rid, FINAL_TEXT)]), headers=_headers(plan))
            return Reply.sse(_sse(rid, [_tool_call(rid, "update_goal", {"status": "complete"})]),
                             headers=_headers(plan))
        return Reply.sse(_sse(rid, [_message(rid, "working on it")]), headers=_headers(plan))

    @staticmethod
    def _usage(plan: Plan) -> dict[str, Any]:
        reset5, reset7 = plan.resets()
        now = int(time.time())
        payload: dict[str, Any] = {
            "plan_type": "plus", "account_id": ACCOUNT, "user_id": USER,
            "rate_limit": {
                "allowed": plan.allowed, "limit_reached": plan.usage5 >= 100,
                "primary_window": {"used_percent": plan.usage5, "limit_window_seconds": 18000,
                                   "reset_after_seconds": max(0, reset5 - now),
                                   "reset_at": reset5},
                "secondary_window": {"used_percent": plan.usage7,
                                     "limit_window_seconds": 604800,
                                     "reset_after_seconds": max(0, reset7 - now),
                                     "reset_at": reset7}},
            "credits": {"has_credits": False, "unlimited": False, "balance": "0"},
        }
        if plan.spend_control is not None:
            payload["spend_control"] = {"reached": plan.spend_control}
        if plan.reset_credits is not None:
            payload["rate_limit_reset_credits"] = {"available_count": plan.reset_credits}
        return payload


@contextlib.contextmanager
def running_mock() -> Iterator[CodexMock]:
    mock = CodexMock()
    mock.server.start()
    try:
        yield mock
    finally:
        mock.server.stop()


# -- CODEX_HOME ------------------------------------------------------------------------------


def _jwt(claims: dict[str, Any]) -> str:
    """An unsigned JWT: Codex reads the claims of a ChatGPT login without checking them."""
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.c2ln"


def write_home(home: Path, url: str) -> None:
    """A ``CODEX_HOME`` whose model provider is the mock and whose login is a dummy ChatGPT
    one (so ``account/rateLimits/read`` answers from the mock's usage endpoint)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'chatgpt_base_url = "{url}/backend-api"\n'
        'model = "gpt-5.1-codex"\nmodel_provider = "mock"\n'
        '[model_providers.mock]\nname = "mock"\n'
        f'base_url = "{url}/v1"\nwire_api = "responses"\nenv_key = "GK_MOCK_API_KEY"\n'
        "[features]\ngoals = true\n")
    now = int(time.time())
    auth = {"chatgpt_plan_type": "plus", "chatgpt_account_id": ACCOUNT,
            "chatgpt_user_id": USER, "user_id": USER}
    claims = {"https://api.openai.com/auth": auth, "exp": now + 30 * 86400, "iat": now,
              "sub": USER}
    (home / "auth.json").write_text(json.dumps({
        "OPENAI_API_KEY": None,
        "tokens": {"id_token": _jwt({**claims, "email": "test@example.invalid"}),
                   "access_token": _jwt(claims), "refresh_token": "dummy",
                   "account_id": ACCOUNT},
        "last_refresh": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
    }))


def codex_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_"))}
    env.update(CODEX_HOME=str(home), GK_MOCK_API_KEY="dummy", NO_COLOR="1")
    return env


def git_repo(path: Path) -> Path:
    """A directory Codex trusts (``codex exec`` runs only inside a git repository)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)
    return path


# -- driving the real app-server directly (set-up and the "other holder") ----------------------


async def until_notified(server: AppServer, predicate: Any, timeout: float = 30.0
                         ) -> list[tuple[str, dict[str, Any]]]:
    """Notifications up to and including the first one ``predicate(method, params)`` accepts."""
    import asyncio

    seen = []
    async with asyncio.timeout(timeout):
        while True:
            method, params = await server.notifications.get()
            seen.append((method, params))
            if predicate(method, params):
                return seen


async def limited_goal(codex_bin: Path, env: dict[str, str], repo: Path,
                       objective: str) -> str:
    """A new thread in ``repo`` whose goal the real Codex stopped at the usage limit
    (the mock must be in ``limit`` mode). Returns the thread id."""
    server = AppServer(str(codex_bin), env, cwd=repo)
    try:
        await server.start()
        answer = await server.request("thread/start", {"cwd": str(repo)}, 30)
        thread = str(answer["thread"]["id"])
        await server.request("thread/goal/set", {"threadId": thread, "objective": objective,
                                                 "status": "active", "origin": "user"}, 30)
        await until_notified(server, lambda m, p: m == "turn/completed")
        goal = await server.request("thread/goal/get", {"threadId": thread}, 30)
        assert goal["goal"]["status"] == "usageLimited", goal
        return thread
    finally:
        await server.close()


def codex_processes(home: Path) -> list[int]:
    """Live processes started with this ``CODEX_HOME`` (none may be left behind)."""
    marker = f"CODEX_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker + b"\0" in environ + b"\0" and state(int(entry.name)) not in (None, "Z"):
            found.append(int(entry.name))
    return found


class World:
    """The module's mock, Codex home and repository."""

    def __init__(self, codex_bin: Path, mock: CodexMock, root: Path) -> None:
        self.codex_bin = codex_bin
        self.mock = mock
        self.home = root / "codex-home"
        write_home(self.home, mock.url)
        self.repo = git_repo(root / "repo")
        self.env = codex_env(self.home)
        self.count = 0

    async def limited_goal(self, objective: str | None = None) -> str:
        self.count += 1
        self.mock.set(mode="limit", delay=0.0, used5=100, reset5=0)
        return await limited_goal(self.codex_bin, self.env, self.repo,
                                  objective or f"Write report {self.count}")

    def settings(self, **kw: Any) -> Settings:
        values: dict[str, Any] = {
            "codex_bin": str(self.codex_bin), "resume_jitter_seconds": 0, "stable_seconds": 0,
            "auto_resume_default": False, "codex_app_server_timeout_seconds": 30,
            "codex_confirm_timeout_seconds": 30, "codex_turn_end_timeout_seconds": 30, **kw}
        return Settings(**values)

    def provider(self, settings: Settings, clock: FakeClock) -> CodexProvider:
        return CodexProvider(from_settings(settings, self.env), clock)

    def db_goal(self, thread: str) -> tuple[str, str]:
        con = sqlite3.connect(f"file:{self.home / 'goals_1.sqlite'}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT status, objective FROM thread_goals WHERE thread_id = ?",
                              (thread,)).fetchone()
        finally:
            con.close()
        assert row is not None
        return str(row[0]), str(row[1])

    async def resumed_to_complete(self, make_engine: Any, clock: FakeClock, thread: str
                                  ) -> Any:
        """Goalkeeper resumes the thread's goal, which the mock then completes: Goalkeeper and
        the goals database agree it is done, and no run is left."""
        settings = self.settings()
        engine = await make_engine(self.provider(settings, clock), settings=settings)
        self.mock.set(mode="complete", used5=20)
        result = await engine.perform(Resume(gid(thread)), "cli")
        assert result.outcome is Outcome.RESUMED, result.reason
        await until(lambda: engine.goals[gid(thread)].state is GoalState.DONE, 60)
        assert self.db_goal(thread)[0] == "complete"
        await until(lambda: engine.providers["codex"].runner.runs == {}, 60)
        return engine

    def stop_daemon(self) -> None:
        """``codex app-server daemon stop``, and its ``pid-update-loop`` helper, which 0.169.0's
        ``daemon stop`` leaves running (ours, so ended here)."""
        import subprocess

        subprocess.run([str(self.codex_bin), "app-server", "daemon", "stop"], env=self.env,
                       capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        for pid in codex_processes(self.home):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def rollout(self, thread: str) -> list[dict[str, Any]]:
        [path] = list((self.home / "sessions").rglob(f"rollout-*-{thread}.jsonl"))
        return read_jsonl(path)


async def settle(home: Path) -> list[int]:
    for _ in range(50):
        if not codex_processes(home):
            return []
        await asyncio.sleep(0.1)
    return codex_processes(home)


def gid(thread: str) -> str:
    return f"codex:{thread}"
