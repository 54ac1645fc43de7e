"""Host processes on one PostgreSQL database: each with its own data directory and its own
scripted agent home (tests/multihost/agent.py). Every test here is marked ``multihost``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.multihost import HostProc


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/multihost/" in str(item.fspath):
            item.add_marker(pytest.mark.multihost)


@pytest.fixture
def hosts(pg_url: str, tmp_path: Path) -> Iterator[Callable[..., HostProc]]:
    """Makes host processes on this test's database; stops them all afterwards."""
    made: list[HostProc] = []

    def _make(host_id: str, **settings: Any) -> HostProc:
        host = HostProc(tmp_path, host_id, pg_url, **settings)
        made.append(host)
        return host

    yield _make
    for host in made:
        host.stop()
