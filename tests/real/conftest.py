"""Fixtures for the contract tests on the pinned real CLIs (``tests/real/``).

Every test here is marked ``real_cli``. The CLI comes from :mod:`tests.real.pins`; where it is
absent and cannot be installed (no npm, no registry), the tests skip with the reason — except
under ``CI=true``, where a missing CLI fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.real.pins import PINS, PinUnavailable, ensure

_IN_CI = os.environ.get("CI", "").lower() == "true"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.real_cli)


def _pinned(name: str) -> Path:
    try:
        return ensure(PINS[name])
    except PinUnavailable as exc:
        if _IN_CI:
            pytest.fail(f"CI=true and the pinned {name} CLI is missing: {exc}")
        pytest.skip(f"the pinned {name} CLI is not available here: {exc}")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The real ``codex`` binary at the pinned version."""
    return _pinned("codex")


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The real ``claude`` binary at the pinned version."""
    return _pinned("claude")
