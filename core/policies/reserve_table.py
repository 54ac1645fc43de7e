"""Per-window reserves: ``resume_reserve_by_window``.

In ``config.toml`` a table (``[resume_reserve_by_window]`` with ``"codex:5h" = 30``); in the
environment variable and the settings dialog the same as text: ``codex:5h=30, claude:7d=10``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.i18n import N_


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
        table[name] = _percent(name, percent)
    return table


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
