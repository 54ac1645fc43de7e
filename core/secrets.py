"""Secrets for pipeline steps, kept only in the OS keyring (``keyring``), never anywhere else.

``goalkeeper secret set NAME`` stores a value under the service ``Goalkeeper``; a step that names
the secret gets it as the environment variable ``NAME`` — and nothing else ever sees it: not the
database, the logs, the state files or the history (step output is masked, see
:class:`core.redact.Redactor`). The list of names (not values) lives in the
keyring as well, since keyrings cannot enumerate their entries.

Goalkeeper's own secrets (:data:`APP_SECRETS`: the ntfy token, the webhook signing secret, the phone
key) are
stored the same way; their names contain a ``-``, which no step's secret name may (those are
environment variable names), so no step can ever ask for them.

Only a backend keyring itself calls *recommended* (priority ≥ 1: Secret Service, KWallet,
macOS Keychain, Windows Credential Locker) is used; ``fail``, ``null`` and plaintext backends
raise :class:`SecretStoreUnavailable` with a message saying how to get a usable one. Every keyring
call is wrapped (a D-Bus timeout arrives as a jeepney exception, not a ``KeyringError``) and the
async API runs it in a worker thread with a time limit, because an unhealthy keyring can block
for minutes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

import keyring
from keyring.backend import KeyringBackend

from core.i18n import N_

SERVICE = "Goalkeeper"
INDEX_ENTRY = "__goalkeeper_secret_names__"
NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
#: secrets Goalkeeper itself uses (see core.notify.channels), by name
APP_SECRETS = {
    "ntfy-token": "the access token for notify_ntfy_url",
    "webhook-secret": "the key that signs the webhook's body (HMAC-SHA256)",
    "store-password": "the password of the shared store (store_url), when the server asks",
    "phone-key": "the key that signs the phone's answers (HMAC-SHA256); made by the host",
}
CALL_TIMEOUT_SECONDS = 30.0

T = TypeVar("T")

HOW_TO_GET_ONE = N_(
    "Goalkeeper keeps secrets only in the OS keyring. On Linux, install and unlock a Secret "
    "Service provider (gnome-keyring, or KeePassXC with its Secret Service integration) or "
    "KWallet, in a desktop session; on macOS (Keychain) and Windows (Credential Locker) it works "
    "out of the box. Plaintext backends such as keyrings.alt are refused on purpose."
)


class SecretStoreError(Exception):
    """A keyring operation failed; the message never contains a secret value."""


class SecretStoreUnavailable(SecretStoreError):
    """No usable (recommended) keyring backend."""


def check_name(name: str) -> str:
    if name in APP_SECRETS:
        return name
    if not NAME_PATTERN.match(name):
        raise SecretStoreError(N_("{name!r} is not a valid secret name: use letters, digits and "
                                  "underscores, not starting with a digit (it becomes an "
                                  "environment variable), or one of Goalkeeper's own: {own}"
                                  ).format(name=name, own=", ".join(APP_SECRETS)))
    return name


class SecretStore:
    """The keyring, behind a narrow, wrapped interface. Owns no state of its own."""

    def __init__(self, service: str = SERVICE, backend: KeyringBackend | None = None,
                 timeout: float = CALL_TIMEOUT_SECONDS) -> None:
        self.service = service
        self._backend = backend
        self.timeout = timeout

    def backend(self) -> KeyringBackend:
        """The keyring backend, if it is a usable one; else :class:`SecretStoreUnavailable`."""
        try:
            chosen = self._backend or keyring.get_keyring()
            priority = float(getattr(chosen, "priority", 0))
        except Exception as exc:
            raise SecretStoreUnavailable(N_("no keyring backend could be loaded ({error}). {how}")
                                         .format(error=f"{type(exc).__name__}: {exc}",
                                                 how=HOW_TO_GET_ONE)) from None
        if priority < 1:
            name = f"{type(chosen).__module__}.{type(chosen).__name__}"
            raise SecretStoreUnavailable(N_("no usable keyring backend ({name} has priority "
                                            "{priority}; at least 1 is needed). {how}").format(
                name=name, priority=f"{priority:g}", how=HOW_TO_GET_ONE))
        return chosen

    def _call(self, what: str, fn: Callable[[KeyringBackend], T]) -> T:
        backend = self.backend()
        try:
            return fn(backend)
        except SecretStoreError:
            raise
        except Exception as exc:  # KeyringError, jeepney/D-Bus errors, ...
            raise SecretStoreError(N_("the keyring failed to {what}: {error}").format(
                what=what, error=type(exc).__name__)) from None

    # -- blocking API (CLI) --------------------------------------------------------------------

    def get(self, name: str) -> str | None:
        check_name(name)
        return self._call(N_("read {name}").format(name=name),
                          lambda b: b.get_password(self.service, name))

    def put(self, name: str, value: str) -> None:
        check_name(name)
        if not value:
            raise SecretStoreError(N_("refusing to store an empty secret"))
        self._call(N_("store {name}").format(name=name),
                   lambda b: b.set_password(self.service, name, value))
        self._update_index(lambda names: names | {name})

    def delete(self, name: str) -> bool:
        """Remove a secret; False when there was none."""
        check_name(name)
        existed = self.get(name) is not None
        if existed:
            self._call(N_("delete {name}").format(name=name),
                       lambda b: b.delete_password(self.service, name))
        self._update_index(lambda names: names - {name})
        return existed

    def names(self) -> list[str]:
        raw = self._call(N_("read the list of secrets"),
                         lambda b: b.get_password(self.service, INDEX_ENTRY))
        try:
            data = json.loads(raw) if raw else []
        except ValueError:
            data = []
        return sorted(n for n in data
                      if isinstance(n, str) and (NAME_PATTERN.match(n) or n in APP_SECRETS))

    def _update_index(self, change: Callable[[set[str]], set[str]]) -> None:
        names = sorted(change(set(self.names())))
        self._call(N_("update the list of secrets"),
                   lambda b: b.set_password(self.service, INDEX_ENTRY, json.dumps(names)))

    # -- async API (the host) ------------------------------------------------------------------

    async def fetch(self, names: Sequence[str]) -> dict[str, str | None]:
        """Values by name, read in a worker thread within the time limit."""
        def read_all() -> dict[str, str | None]:
            return {name: self.get(name) for name in names}

        import asyncio  # not at the top: ``status`` reads without a loop (issue 24)

        try:
            return await asyncio.wait_for(asyncio.to_thread(read_all), self.timeout)
        except TimeoutError:
            raise SecretStoreError(N_("the keyring did not answer within {seconds} s (locked, or "
                                      "waiting for a password prompt?)").format(
                seconds=f"{self.timeout:g}")) from None
