"""Contract: the hosts registry (heartbeat leases) and action requests (at most once)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from core.store.base import HostRecord, Store
from tests.store.support import T0
from tests.support.store import Opener


def host(host_id: str = "laptop", **kw: object) -> HostRecord:
    return replace(HostRecord(host_id, "daemon", "laptop.local", 42, T0, T0, epoch=1), **kw)


def stored(store: Store, record: HostRecord) -> HostRecord:
    """``record`` as the store keeps it: a shared store's heartbeat is its own clock's."""
    if not store.shared:
        return record
    found = store.get_host(record.host_id)
    assert found is not None
    return replace(record, heartbeat=found.heartbeat)


def test_a_host_registers_beats_and_stops(opener: Opener) -> None:
    store = opener()
    epoch = store.take_epoch("laptop")
    assert store.list_hosts() == []  # a start under way is not a host yet
    record = host(epoch=epoch, accounts={"fake": "alice"})
    assert store.beat_host(record)
    assert store.list_hosts() == [stored(store, record)]
    later = replace(record, heartbeat=T0 + timedelta(seconds=5))
    assert store.beat_host(later)
    assert store.get_host("laptop") == stored(store, later)
    assert later.online(T0 + timedelta(seconds=30), 30)
    assert later.offline_since(T0 + timedelta(seconds=40), 30) == later.heartbeat
    store.stop_host("laptop", epoch, T0 + timedelta(seconds=6))
    stopped = store.get_host("laptop")
    assert stopped is not None and stopped.state == "stopped"
    assert stopped.offline_since(T0 + timedelta(seconds=7), 30) == (
        stopped.stopped_at if store.shared else T0 + timedelta(seconds=6))
    assert store.get_host("desk") is None


def test_a_shared_stores_heartbeat_is_its_own_clocks(opener: Opener, kind: str) -> None:
    store = opener()
    record = host(epoch=store.take_epoch("laptop"))  # T0: the host's clock is months off
    assert store.beat_host(record)
    found = store.get_host("laptop")
    assert found is not None
    if kind == "sqlite":  # one machine, one clock: the host's
        assert found.heartbeat == T0
    else:
        assert abs(found.heartbeat - datetime.now(UTC)) < timedelta(seconds=30)


def test_hosts_whose_clocks_disagree_agree_who_is_online(opener: Opener, kind: str) -> None:
    """On a shared store the database's clock judges: a host 60 s behind beats, an asker 60 s
    ahead (or behind) asks — the host is online all the same, and offline once it stopped."""
    if kind == "sqlite":
        pytest.skip("one machine, one clock")
    store = opener()
    real = datetime.now(UTC)
    behind = host(epoch=store.take_epoch("laptop"), since=real - timedelta(seconds=60),
                  heartbeat=real - timedelta(seconds=60))
    assert store.beat_host(behind)
    for skew in (60, -60, 0):
        record = store.get_host("laptop")
        assert record is not None and record.online(real + timedelta(seconds=skew), 30), skew
        assert record.offline_since(real + timedelta(seconds=skew), 30) is None
        assert abs(record.silent_for(real + timedelta(seconds=skew))) < 10
    assert [h.online(real + timedelta(seconds=60), 30) for h in store.list_hosts()] == [True]
    store.stop_host("laptop", behind.epoch, real - timedelta(seconds=60))
    gone = store.get_host("laptop")
    assert gone is not None and not gone.online(real - timedelta(seconds=60), 30)
    assert gone.stopped_at is not None and abs(gone.stopped_at - real) < timedelta(seconds=10)


def test_a_replaced_host_can_no_longer_beat_or_stop_its_successor(opener: Opener) -> None:
    store = opener()
    old = host(epoch=store.take_epoch("laptop"))
    assert store.beat_host(old)
    new = host(pid=43, epoch=store.take_epoch("laptop"))
    assert store.beat_host(new)
    assert not store.beat_host(replace(old, heartbeat=T0 + timedelta(seconds=9)))
    store.stop_host("laptop", old.epoch, T0)
    assert store.get_host("laptop") == stored(store, new)


def test_a_request_is_taken_once_and_answered(opener: Opener) -> None:
    asker, owner = opener("desk"), opener("laptop")
    request_id = asker.post_request("laptop", {"op": "resume", "goal": "fake:a"}, "desk", T0,
                                    T0 + timedelta(seconds=60))
    assert owner.take_requests("desk", T0) == []
    taken = owner.take_requests("laptop", T0 + timedelta(seconds=1))
    assert [(r.id, r.request, r.by, r.state) for r in taken] == [
        (request_id, {"op": "resume", "goal": "fake:a"}, "desk", "taken")]
    assert owner.take_requests("laptop", T0 + timedelta(seconds=1)) == []
    assert not asker.expire_request(request_id, T0 + timedelta(seconds=2))  # taken first
    assert owner.answer_request(request_id, {"outcome": "resumed"}, T0 + timedelta(seconds=3))
    assert not owner.answer_request(request_id, {"outcome": "again"}, T0)
    answered = asker.get_request(request_id)
    assert answered is not None and answered.state == "answered"
    assert answered.answer == {"outcome": "resumed"}
    assert answered.answered_at == T0 + timedelta(seconds=3)


def test_an_expired_request_is_never_carried_out(opener: Opener) -> None:
    asker, owner = opener("desk"), opener("laptop")
    gave_up = asker.post_request("laptop", {"op": "pause"}, "desk", T0, T0 + timedelta(60))
    assert asker.expire_request(gave_up, T0 + timedelta(seconds=5))
    too_old = asker.post_request("laptop", {"op": "pause"}, "desk", T0, T0 + timedelta(seconds=5))
    assert owner.take_requests("laptop", T0 + timedelta(seconds=6)) == []
    assert asker.get_request(too_old).state == "pending"  # type: ignore[union-attr]
    assert asker.get_request(gave_up).state == "expired"  # type: ignore[union-attr]
