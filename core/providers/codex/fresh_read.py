"""The authoritative quota read: ask ``codex app-server`` (``account/rateLimits/read``).

Taken right before every automatic resume, and while a Codex goal waits for quota by the
provider's early-reset poll (:mod:`.early_reset`). Free: it spends no turn. One short-lived
app-server session, time-boxed as a whole (start, ``initialize``, the read) and always reaped.
Sparse ``account/rateLimits/updated``
notifications that arrive meanwhile are merged into the answer. Any failure raises with a
sentence saying what went wrong; the engine then decides on the last known (session-file)
readings and records that in the history.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from core.providers.codex.config import CodexConfig
from core.providers.codex.limits import (
    LimitShapeError,
    RateSnapshot,
    from_app_server,
    from_rate_limits_read,
    merge,
)
from core.providers.codex.rpc import AppServer, AppServerError, RpcError, finish

UPDATED = "account/rateLimits/updated"


class FreshReadError(Exception):
    """The app-server could not give a reading; the message says why."""


async def read_fresh(config: CodexConfig, now: datetime) -> RateSnapshot:
    executable = config.executable()  # CodexNotFound says where it looked
    server = AppServer(executable, config.env)
    timeout = config.app_server_timeout
    try:
        async with asyncio.timeout(timeout):
            await server.start()
            result = await server.request("account/rateLimits/read")
        snapshot = from_rate_limits_read(result, now)
    except TimeoutError:
        raise FreshReadError(f"codex app-server did not answer within {timeout:g} s") from None
    except (AppServerError, RpcError, LimitShapeError) as exc:
        raise FreshReadError(str(exc)) from None
    finally:
        await finish(server.close(grace=0.5))
    return merge_updates(snapshot, server.notifications)


def merge_updates(snapshot: RateSnapshot,
                  queue: asyncio.Queue[tuple[str, dict[str, object]]]) -> RateSnapshot:
    """Fold the sparse updates waiting in ``queue`` into ``snapshot`` (never clearing fields)."""
    while not queue.empty():
        method, params = queue.get_nowait()
        if method != UPDATED:
            continue
        limits = params.get("rateLimits")
        if isinstance(limits, dict) and limits.get("limitId") in (None, "codex"):
            try:
                snapshot = merge(snapshot, from_app_server(limits, snapshot.observed_at))
            except LimitShapeError:
                continue
    return snapshot
