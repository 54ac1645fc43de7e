"""Which account Codex runs under: ``account/read`` through a short-lived ``codex app-server``.

Hosts on the same account share its quota windows (issue 12). 0.169.0 answers (observed
offline, see the issue-12 note): with a ChatGPT login and OpenAI as the model provider,
``{"account": {"type": "chatgpt", "email": …, "planType": …}, "userId": …,
"workspaceRouting": {"chatgptAccountId": …}}`` — after a "workspace routing discovery"
(``GET {chatgpt_base_url}/wham/accounts/check``); with a custom model provider, or no login,
``{"account": null, "requiresOpenaiAuth": false}``: then there is nothing to share by, and the
user names the account (``codex_account`` / ``account``) or the readings stay this host's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from core.providers.codex.config import CodexConfig
from core.providers.codex.rpc import AppServer, AppServerError, RpcError, finish


async def read_identity(config: CodexConfig) -> str | None:
    """What tells this account apart (the ChatGPT account id with the user id, or the API
    key account's type), or None when Codex does not say; raises when Codex cannot answer."""
    server = AppServer(config.executable(), config.env)
    try:
        async with asyncio.timeout(config.app_server_timeout):
            await server.start()
            result = await server.request("account/read", {"refreshToken": False})
    except TimeoutError:
        raise AppServerError(f"codex app-server did not answer account/read within "
                             f"{config.app_server_timeout:g} s") from None
    except RpcError as exc:
        raise AppServerError(str(exc)) from None
    finally:
        await finish(server.close(grace=0.5))
    return identity_of(result)


def identity_of(result: Any) -> str | None:
    if not isinstance(result, dict) or not isinstance(result.get("account"), dict):
        return None
    account = result["account"]
    found = result.get("workspaceRouting")
    routing: dict[str, Any] = found if isinstance(found, dict) else {}
    parts = [str(routing.get("chatgptAccountId") or ""), str(result.get("userId") or "")]
    if not any(parts):
        parts = [str(account.get("email") or "")]
    if not any(parts):
        return None if account.get("type") != "apiKey" else "apiKey"
    return f"{account.get('type', '')}:{'/'.join(parts)}"
