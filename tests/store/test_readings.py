"""Contract: quota readings — the freshest authoritative reading wins, per account."""

from __future__ import annotations

from datetime import timedelta

from core.models import Exactness
from tests.store.support import T0
from tests.support.fakes import reading
from tests.support.store import Opener


def test_the_freshest_reading_wins_and_older_ones_are_refused(opener: Opener) -> None:
    store = opener("laptop")
    assert store.save_reading(reading("fake:5h", 40, T0))
    assert store.save_reading(reading("fake:5h", 60, T0 + timedelta(seconds=5)))
    assert not store.save_reading(reading("fake:5h", 10, T0 + timedelta(seconds=1)))
    assert [r.used_percent for r in store.latest_readings()] == [60]
    assert store.series("fake:5h") == [(T0, 40.0), (T0 + timedelta(seconds=5), 60.0)]


def test_readings_belong_to_an_account(opener: Opener) -> None:
    laptop, desk = opener("laptop"), opener("desk")
    mine = reading("fake:5h", 100, T0).model_copy(update={"account": "alice"})
    theirs = reading("fake:5h", 5, T0 + timedelta(seconds=1)).model_copy(update={"account": "bob"})
    assert laptop.save_reading(mine) and desk.save_reading(theirs)
    assert [r.used_percent for r in laptop.latest_readings(["alice"])] == [100]
    assert {r.account for r in desk.latest_readings()} == {"alice", "bob"}
    assert desk.latest_reading("bob", "fake:5h") == theirs
    assert laptop.series("fake:5h", account="alice") == [(T0, 100.0)]
    assert laptop.series("fake:5h", T0 + timedelta(seconds=1), account="bob") == [
        (T0 + timedelta(seconds=1), 5.0)]
    assert laptop.series("fake:5h") == []  # the local account '' has none


def test_an_estimate_never_hides_a_fresh_exact_reading_of_another_host(opener: Opener) -> None:
    laptop, desk = opener("laptop"), opener("desk")
    for store in (laptop, desk):
        store.authority_seconds = 600
    exact = reading("fake:5h", 100, T0).model_copy(update={"account": "alice"})
    guess = reading("fake:5h", 20, T0 + timedelta(seconds=30), exactness=Exactness.ESTIMATED
                    ).model_copy(update={"account": "alice"})
    assert laptop.save_reading(exact)
    assert not desk.save_reading(guess)  # the exact one of another host still speaks
    assert laptop.save_reading(guess)  # its own host may say otherwise
    late = guess.model_copy(update={"observed_at": T0 + timedelta(seconds=700)})
    assert laptop.save_reading(exact.model_copy(update={"observed_at": T0 + timedelta(seconds=40)}))
    assert desk.save_reading(late)  # past the authority horizon an estimate may win again
    newer = exact.model_copy(update={"observed_at": T0 + timedelta(seconds=800),
                                     "used_percent": 3.0})
    assert desk.save_reading(newer)  # an exact reading always wins when it is newer
    assert laptop.latest_reading("alice", "fake:5h") == newer


def test_pruning_drops_old_chart_points_but_keeps_the_latest(opener: Opener) -> None:
    store = opener()
    for minutes in range(0, 60, 10):
        store.save_reading(reading("fake:5h", minutes, T0 + timedelta(minutes=minutes)))
    assert store.prune_series(T0 + timedelta(minutes=30)) == 3
    assert [p[1] for p in store.series("fake:5h")] == [30, 40, 50]
    assert store.latest_readings()[0].used_percent == 50


def test_a_reading_round_trips(opener: Opener) -> None:
    store = opener()
    written = reading("fake:7d", 12.5, T0, T0 + timedelta(days=3), window_seconds=604800,
                      limit_reached=False, note="per week")
    store.save_reading(written)
    assert store.latest_readings() == [written]
