"""Per-window reserves: ``resume_reserve_by_window``.

In ``config.toml`` a table (``[resume_reserve_by_window]`` with ``"codex:5h" = 30``); in the
environment variable and the settings dialog the same as text: ``codex:5h=30, claude:7d=10``.

Keys are window ids. The built-in providers' windows are known in advance (:func:`known_windows`),
so a key with their prefix that names none of them (``codex:7d`` — Codex calls it
``codex:weekly``) is refused. Any other key may be a window that appears later (a pipeline's
``quota:<name>``, a provider added later): it is accepted, logged once by the host when no
window of that id is known, and listed by ``goalkeeper status``.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from core.i18n import N_

log = logging.getLogger("goalkeeper")


def parse_reserve_table(value: Any) -> dict[str, float]:
    """A table or its textual form, checked: window ids and percentages in [0, 100)."""
    if isinstance(value, str):
        value = _from_text(value)
    if not isinstance(value, Mapping):
        raise ValueError(N_("write a table of WINDOW = PERCENT, or the text "
                            "'codex:5h=30, claude:7d=10'"))
    table: dict[str, float] = {}
    for window, percent in value.items():
        name = str(window).strip()
        if not name or any(char.isspace() for char in name):
            raise ValueError(N_("{window!r} is not a window id (e.g. codex:5h)").format(
                window=window))
        _check_known(name)
        table[name] = _percent(name, percent)
    return table


#: names people write for a window that the provider calls otherwise
_SAME = {"codex:7d": "codex:weekly", "codex:week": "codex:weekly", "codex:1w": "codex:weekly",
         "codex:month": "codex:monthly", "codex:30d": "codex:monthly",
         "claude:weekly": "claude:7d", "claude:week": "claude:7d", "claude:1w": "claude:7d"}


#: the built-in providers' windows by prefix: the settings check the table's keys against them,
#: and nothing here may import the providers (they import the settings). Each provider's own
#: constants say the same — ``tests/policies/test_settings.py`` holds them equal.
BUILT_IN_WINDOWS: Mapping[str, tuple[str, ...]] = {
    "codex": ("codex:5h", "codex:weekly", "codex:monthly", "codex:credits", "codex:access"),
    "claude": ("claude:5h", "claude:7d", "claude:7d-opus", "claude:7d-sonnet", "claude:7d-fable",
               "claude:overage"),
    "demo": ("demo:1m",),
}
#: a user quota's window is ``quota:<name>`` (:mod:`core.quota.user`)
USER_QUOTA_PREFIX = "quota:"


def known_windows() -> Mapping[str, tuple[str, ...]]:
    """The built-in providers' windows by prefix (``codex`` → ``codex:5h``, …)."""
    return BUILT_IN_WINDOWS


def unmatched_windows(table: Iterable[str], quotas: Collection[str],
                      seen: Collection[str]) -> list[str]:
    """The table's keys that name no window known so far: not a built-in provider's, not
    ``quota:<name>`` of a quota in ``quotas``, not among the windows ``seen`` in readings."""
    known = {w for windows in known_windows().values() for w in windows}
    known |= {USER_QUOTA_PREFIX + name for name in quotas}
    return sorted(key for key in table if key not in known and key not in seen)


def warn_unmatched(table: Iterable[str], quotas: Collection[str],
                   seen: Collection[str]) -> list[str]:
    """Log each key :func:`unmatched_windows` finds (the host does, once, when it starts)."""
    unmatched = unmatched_windows(table, quotas, seen)
    for key in unmatched:
        log.warning("resume_reserve_by_window: no window %s is known (no provider has it and "
                    "no quota is named so): its reserve applies only if such a window appears",
                    key)
    return unmatched


def _check_known(window: str) -> None:
    """Refuse a key with a built-in provider's prefix that is none of its windows."""
    prefix = window.partition(":")[0]
    windows = known_windows().get(prefix)
    if windows is None or window in windows:
        return
    known = ", ".join(windows)
    close = ([_SAME[window]] if window in _SAME else
             difflib.get_close_matches(window, windows, n=1))
    if close:
        raise ValueError(N_("unknown window {window!r}: the {provider} windows are {known} "
                            "(did you mean {close}?)").format(
                                window=window, provider=prefix, known=known, close=close[0]))
    raise ValueError(N_("unknown window {window!r}: the {provider} windows are {known}").format(
        window=window, provider=prefix, known=known))


def reserve_table_text(table: Mapping[str, float]) -> str:
    """``codex:5h=30, claude:7d=10`` — the form the dialog and the variable use."""
    return ", ".join(f"{window}={_number(percent)}" for window, percent in sorted(table.items()))


def _from_text(text: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        window, sep, percent = item.rpartition("=")
        if not sep or not window.strip():
            raise ValueError(N_("{item!r} needs WINDOW=PERCENT, e.g. codex:5h=30").format(
                item=item))
        pairs[window.strip()] = percent.strip()
    return pairs


def _percent(window: str, raw: Any) -> float:
    if isinstance(raw, bool):
        raise ValueError(N_("the reserve of {window} must be a number of percent").format(
            window=window))
    try:
        percent = float(raw)
    except (TypeError, ValueError):
        raise ValueError(N_("the reserve of {window} must be a number of percent, not "
                            "{value!r}").format(window=window, value=raw)) from None
    if not 0 <= percent < 100:
        raise ValueError(N_("the reserve of {window} must be at least 0 and less than 100, "
                            "not {value}").format(window=window, value=_number(percent)))
    return percent


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
