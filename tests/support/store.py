"""Store test helpers: the contract suite's opener type, a populated local store, and
``goalkeeper store`` run in process."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from core.cli import main
from core.models import GoalState
from core.paths import Paths
from core.store import Mutation
from core.store.base import Store
from core.store.sqlite import SqliteStore
from tests.store.support import T0, goal, row
from tests.support.fakes import reading

Opener = Callable[..., Store]


def local_store(paths: Paths) -> None:
    paths.ensure()
    store = SqliteStore(paths.database)
    for i in range(3):
        g = goal(f"fake:{i}", state=GoalState.PAUSED, data={"cwd": f"/work/{i}", "n": [i]},
                 steering={"resume_slot": i == 1, "no_reset_note": f"credits {i}",
                           "budget": {"fake:5h": {"spent": 1.5 * i, "until": T0}}})
        store.transact(g.id, lambda _, g=g: Mutation(g, None, [row(g.id, "discovered")]))
    for n in range(40):
        store.append_history(row("fake:1", f"e{n}", T0 + timedelta(seconds=n),
                                 detail={"n": n}, quotas=({"window": "fake:5h"},)))
    for minutes in range(0, 300, 10):
        store.save_reading(reading("fake:5h", minutes / 3, T0 + timedelta(minutes=minutes),
                                   T0 + timedelta(hours=5)))
    store.close()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip().startswith("{") else out)
