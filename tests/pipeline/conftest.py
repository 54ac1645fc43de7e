"""Pipeline tests never reach a real keyring: an in-memory backend is installed for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_keyring import MemoryKeyring, memory_keyring_installed


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    with memory_keyring_installed() as backend:
        yield backend
