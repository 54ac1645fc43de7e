"""This host in the store's hosts registry: its heartbeat lease, and its accounts.

A host registers when its engine starts (its row: id, kind, machine, pid, since, epoch,
accounts), says it is alive every ``host_heartbeat_seconds`` and marks itself ``stopped`` when
it stops. Others count it *online* while its heartbeat is younger than ``host_stale_seconds`` —
so a host killed with SIGKILL is shown offline within that time, and actions asked of its goals
are refused ("host X offline since T") instead of being carried out by anyone else.

A beat that finds a newer epoch in the row (another process started under the same host id —
a second machine misconfigured with this name, or a replacement of a hung host) means this one
was replaced: it stops writing, exactly like a fence refusal.

The registry also keeps which account each provider's quota belongs to
(:mod:`core.identity`): what the user named, what the provider says, or this host's own.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping

from core import __version__
from core.clock import Clock
from core.hosts.listing import skewed_hosts
from core.i18n import N_
from core.identity import account_of, detected_account, machine_name
from core.providers.base import Provider
from core.settings import Settings
from core.store import HostRecord, LeaseLost
from core.store.inbox import store_unavailable
from core.store.thread import StoreThread
from core.store.writer import StoreWriter

log = logging.getLogger("goalkeeper")

DETECT_TIMEOUT_SECONDS = 15.0


class HostRegistry:
    """Owns this host's registry row and its account map. Attributes: ``host_id``, ``kind``,
    ``accounts`` (provider → account key)."""

    def __init__(self, store: StoreThread, writer: StoreWriter, clock: Clock,
                 settings: Settings, providers: Mapping[str, Provider], host_id: str,
                 replaced: Callable[[LeaseLost], None], lease_lost: Callable[[], str | None],
                 kind: str = "host", health_changed: Callable[[], None] | None = None) -> None:
        self._store = store
        self._writer = writer
        self._clock = clock
        self._settings = settings
        self._providers = providers
        self._replaced = replaced
        self._lease_lost = lease_lost
        self.host_id = host_id
        self.kind = kind
        self.since = clock.now()
        self.accounts: dict[str, str] = {}
        self.registered = False
        #: the skew problem of every online host whose clock is off the database's (core.health)
        self.skewed: tuple[str, ...] = ()
        self._health_changed = health_changed

    # -- accounts -------------------------------------------------------------------------------

    def account_for(self, provider: str) -> str:
        """The account a provider's windows belong to ('' on a one-machine store)."""
        if not self._store.shared:
            return ""
        return account_of(provider, self._settings, self.host_id, self.accounts)

    async def resolve_accounts(self) -> None:
        """Every provider's account: named by the user, else what the provider says (on a
        shared store only: asking may start the agent's server), else this host's own."""
        accounts = {}
        for name, provider in self._providers.items():
            account = str(getattr(self._settings, f"{name}_account", "") or "")
            if not account and self._store.shared:
                account = await self._detect(name, provider)
            accounts[name] = account_of(name, self._settings, self.host_id,
                                        {name: account} if account else None)
        self.accounts = accounts if self._store.shared else {}
        if self.accounts:
            log.info("accounts: %s", ", ".join(f"{p}={a}" for p, a in sorted(accounts.items())))

    async def _detect(self, name: str, provider: Provider) -> str:
        try:
            async with asyncio.timeout(DETECT_TIMEOUT_SECONDS):
                identity = await provider.account_identity()
        except Exception as exc:  # an account we cannot learn is simply not shared
            log.info("provider %s did not say which account it uses: %s", name, exc)
            return ""
        return detected_account(name, identity) if identity else ""

    # -- the lease ------------------------------------------------------------------------------

    def record(self, state: str = "online") -> HostRecord:
        now = self._clock.now()
        return HostRecord(self.host_id, self.kind, machine_name(), os.getpid(), self.since, now,
                          self._store.opened_epoch or 0, state, None, dict(self.accounts),
                          __version__)

    async def beat(self) -> bool:
        """Say this host is alive; False when it was replaced (and the engine is told)."""
        try:
            alive = await self._writer.written(lambda s: s.beat_host(self.record()))
        except Exception as exc:  # the store's health says so (window, status)
            if store_unavailable(exc) is None:
                raise
            log.warning("could not renew the host lease: %s", exc)
            return True
        self.registered = True
        if alive and self._store.shared:
            await self._check_clocks()
        if not alive:
            self._replaced(LeaseLost(N_(
                "another Goalkeeper started as host {host} (a newer epoch holds its registry "
                "row): this one may no longer write").format(host=self.host_id)))
        return alive

    async def _check_clocks(self) -> None:
        """Every heartbeat measures its host's clock against the database's: a host whose clock
        is off (this one or another) is a health problem here, by name and offset."""
        try:
            hosts = await self._store.run(lambda s: s.list_hosts())
        except Exception as exc:  # the store's health says so
            if store_unavailable(exc) is None:
                raise
            return
        skewed = skewed_hosts(hosts)
        if skewed != self.skewed:
            for line in skewed:
                log.warning("%s", line)
            self.skewed = skewed
            if self._health_changed is not None:
                self._health_changed()

    async def run(self) -> None:
        """Beat every ``host_heartbeat_seconds`` until replaced (an engine task)."""
        while await self.beat():
            await self._clock.sleep(self._settings.host_heartbeat_seconds)

    async def stopped(self) -> None:
        """Mark this host stopped (so others say "offline since" at once, not after the lease)."""
        if not self.registered or self._lease_lost() is not None:
            return
        epoch = self._store.opened_epoch or 0
        now = self._clock.now()
        try:
            await self._store.run(lambda s: s.stop_host(self.host_id, epoch, now))
        except Exception as exc:
            log.warning("could not mark host %s stopped: %s", self.host_id, exc)
