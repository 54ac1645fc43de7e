#!/usr/bin/env python3
"""Filter: keep items scoring at least 60 (the goal file requires at least 5 of them)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from faults import take

run = Path(os.environ["GOALKEEPER_RUN_DIR"])
fault = take("filter") or {}
if fault.get("mode") in ("auth", "config", "fail"):
    sys.exit({"auth": 77, "config": 78, "fail": 1}[fault["mode"]])
items = json.loads((run / "aggregated.json").read_text())
kept = [item for item in items if item["score"] >= 60]
if fault.get("mode") == "few":
    kept = kept[:2]
(run / "filtered.json").write_text(json.dumps(kept, ensure_ascii=False, indent=1))
Path(os.environ["GOALKEEPER_REPORT"]).write_text(json.dumps({"status": "ok",
                                                             "items": len(kept)}))
