"""Which Codex versions Goalkeeper supports: a range, kept in one place
(:mod:`core.providers.codex.version`) and in step with the pinned real CLIs."""

from __future__ import annotations

import pytest

from core.providers.codex.version import SUPPORTED, SUPPORTED_TEXT, TESTED, VersionCheck, parse
from tests.real.pins import RANGES


@pytest.mark.parametrize("text", ["codex-cli 0.169.0", "codex-cli 0.170.0", "codex-cli 0.171.0",
                                  "codex-cli 0.171.4"])
def test_every_release_from_0_169_to_the_0_171_series_carries_no_note(text: str) -> None:
    check = VersionCheck(text, parse(text))
    assert check.supported and check.note is None


@pytest.mark.parametrize("text", ["codex-cli 0.168.9", "codex-cli 0.172.0", "codex-cli 1.0.0"])
def test_outside_the_range_the_note_names_the_range(text: str) -> None:
    check = VersionCheck(text, parse(text))
    assert not check.supported
    assert check.note is not None and "Goalkeeper supports Codex 0.169\u20130.171" in check.note
    assert f"Codex {text.split()[-1]} is installed" in check.note


def test_the_range_text_says_the_series_it_covers() -> None:
    assert SUPPORTED_TEXT == "0.169\u20130.171"
    assert SUPPORTED == ((0, 169, 0), (0, 172, 0))


def test_the_pinned_real_clis_are_the_ends_of_the_supported_range() -> None:
    """tests/real/pins.py installs and tests exactly the ends this module names."""
    codex = RANGES["codex"]
    assert (parse(f"codex-cli {codex.oldest}"), parse(f"codex-cli {codex.newest}")) == TESTED
    low, high = SUPPORTED
    for end in TESTED:
        assert low <= end < high
