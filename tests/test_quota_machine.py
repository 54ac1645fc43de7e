"""The quota window machine: every (state, event) pair leads where the table says, with its edge."""

from __future__ import annotations

import itertools

import pytest

from core.quota.machine import (
    TRANSITIONS,
    Announce,
    IllegalQuotaMove,
    QuotaEvent,
    WindowState,
    next_window_state,
)

W, Q, A = WindowState, QuotaEvent, Announce

EXPECTED = {
    (W.UNKNOWN, Q.AT_LIMIT): (W.EXHAUSTED, A.EXHAUSTED),
    (W.UNKNOWN, Q.IN_BAND): (W.OK, A.NOTHING),
    (W.UNKNOWN, Q.BELOW_BAND): (W.OK, A.NOTHING),
    (W.UNKNOWN, Q.STABLY_BELOW): (W.OK, A.NOTHING),
    (W.OK, Q.AT_LIMIT): (W.EXHAUSTED, A.EXHAUSTED),
    (W.OK, Q.IN_BAND): (W.OK, A.NOTHING),
    (W.OK, Q.BELOW_BAND): (W.OK, A.NOTHING),
    (W.OK, Q.STABLY_BELOW): (W.OK, A.NOTHING),
    (W.EXHAUSTED, Q.AT_LIMIT): (W.EXHAUSTED, A.NOTHING),
    (W.EXHAUSTED, Q.IN_BAND): (W.EXHAUSTED, A.NOTHING),
    (W.EXHAUSTED, Q.BELOW_BAND): (W.EXHAUSTED, A.NOTHING),
    (W.EXHAUSTED, Q.STABLY_BELOW): (W.OK, A.RECOVERED),
}


@pytest.mark.parametrize(("state", "event"), list(itertools.product(W, Q)))
def test_every_pair_leads_to_its_target_with_its_edge_or_is_rejected(state: W, event: Q) -> None:
    if (state, event) in EXPECTED:
        assert next_window_state(state, event) == EXPECTED[(state, event)]
    else:
        with pytest.raises(IllegalQuotaMove, match=f"{event.value} is not allowed from"):
            next_window_state(state, event)


def test_the_table_is_exactly_the_expected_one_and_total() -> None:
    assert TRANSITIONS == EXPECTED
    assert set(TRANSITIONS) == set(itertools.product(W, Q))  # every reading leads somewhere


def test_no_move_leads_back_to_unknown_and_only_the_edges_announce() -> None:
    assert all(target is not W.UNKNOWN for target, _ in TRANSITIONS.values())
    announcing = {pair: edge for pair, (_, edge) in TRANSITIONS.items() if edge is not A.NOTHING}
    assert announcing == {(W.UNKNOWN, Q.AT_LIMIT): A.EXHAUSTED, (W.OK, Q.AT_LIMIT): A.EXHAUSTED,
                          (W.EXHAUSTED, Q.STABLY_BELOW): A.RECOVERED}
