"""Faults injected on demand, shared by the example's scripts: ``faults.json`` beside them.

``{"github": {"mode": "timeout", "times": 1}, ...}`` — each time a step consumes a fault its
``times`` goes down; at 0 it is gone. ``times: -1`` keeps it until cleared.
"""

from __future__ import annotations

import json
from pathlib import Path

FILE = Path(__file__).with_name("faults.json")


def load() -> dict:
    try:
        return json.loads(FILE.read_text())
    except (OSError, ValueError):
        return {}


def take(name: str) -> dict | None:
    """The fault for ``name``, consumed once."""
    faults = load()
    fault = faults.get(name)
    if not fault:
        return None
    times = int(fault.get("times", 1))
    if times > 0:
        times -= 1
        if times == 0:
            faults.pop(name)
        else:
            fault["times"] = times
        FILE.write_text(json.dumps(faults, indent=1))
    return fault
