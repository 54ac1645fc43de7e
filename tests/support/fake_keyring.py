"""The OS keyring in a dict, for tests of code that reads it for real."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import keyring
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    """A keyring in a dict; priority 1 ("recommended"), so Goalkeeper treats it as usable."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.entries:
            raise PasswordDeleteError(username)
        del self.entries[(service, username)]


@contextmanager
def memory_keyring_installed() -> Iterator[MemoryKeyring]:
    """A fresh :class:`MemoryKeyring` as the process's keyring; the previous one back after."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)
