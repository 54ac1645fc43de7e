"""Which account the real Codex 0.169.0 says it runs under (``account/read``), offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.identity import detected_account
from core.providers.codex.account import read_identity
from core.providers.codex.config import CodexConfig
from tests.real import codex_mock
from tests.real.mockhttp import Reply, Request, serving

pytestmark = pytest.mark.asyncio


def config(codex_bin: Path, home: Path) -> CodexConfig:
    return CodexConfig(home=home, sqlite_home=home, binary=str(codex_bin),
                       app_server_timeout=30, env=codex_mock.codex_env(home))


def accounts_check(request: Request) -> Reply:
    """The workspace routing discovery 0.169.0 does before it answers account/read."""
    if request.path.endswith("/wham/accounts/check"):
        return Reply.json({"accounts": [{"id": codex_mock.ACCOUNT, "structure": "personal",
                                         "plan_type": "plus", "is_deactivated": False,
                                         "account_routing_override": "NO_CONSTRAINT",
                                         "workspace_backend_origin": "https://chatgpt.invalid"}],
                           "account_ordering": [codex_mock.ACCOUNT]})
    return Reply.json({"detail": "not here"}, status=404)


async def test_a_custom_model_provider_says_no_account(codex_bin: Path, tmp_path: Path) -> None:
    with serving(lambda request: Reply.json({}, status=404)) as mock:
        home = tmp_path / "codex-home"
        codex_mock.write_home(home, mock.url)  # the tests' custom provider, a dummy login
        assert await read_identity(config(codex_bin, home)) is None


async def test_a_chatgpt_login_names_its_account_the_same_on_every_machine(
        codex_bin: Path, tmp_path: Path) -> None:
    identities: list[Any] = []
    with serving(accounts_check) as mock:
        for machine in ("laptop", "desk"):
            home = tmp_path / machine
            codex_mock.write_home(home, mock.url)
            (home / "config.toml").write_text(
                f'chatgpt_base_url = "{mock.url}/backend-api"\n'
                f'openai_base_url = "{mock.url}/v1"\n[features]\ngoals = true\n')
            identities.append(await read_identity(config(codex_bin, home)))
        checks = [r for r in mock.requests if r.path.endswith("/wham/accounts/check")]
    assert identities[0] == f"chatgpt:{codex_mock.ACCOUNT}/{codex_mock.USER}"
    assert identities[0] == identities[1] and checks
    key = detected_account("codex", identities[0])
    assert key.startswith("codex:") and codex_mock.ACCOUNT not in key  # hashed
