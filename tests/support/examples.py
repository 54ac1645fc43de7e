"""How many Hypothesis examples to run: few by default (fast local runs), more under CI=true."""

from __future__ import annotations

import os


def examples(default: int, ci: int) -> int:
    return ci if os.environ.get("CI", "").lower() == "true" else default
