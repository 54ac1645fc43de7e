#!/usr/bin/env python3
"""Aggregate: merge what the sources that answered printed, drop duplicate URLs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from faults import take

run = Path(os.environ["GOALKEEPER_RUN_DIR"])
fault = take("aggregate") or {}
if fault.get("mode") in ("auth", "config", "fail"):
    sys.exit({"auth": 77, "config": 78, "fail": 1}[fault["mode"]])
coverage = json.loads((run / "coverage.json").read_text())
missing = {m["name"] for m in coverage["missing"]}
seen: dict[str, dict] = {}
for out in sorted(run.glob("*.out")):
    if out.stem in missing:
        continue
    try:
        items = json.loads(out.read_text() or "[]")
    except ValueError:
        continue
    for item in items:
        seen.setdefault(item["url"], item)
merged = sorted(seen.values(), key=lambda item: -item["score"])
(run / "aggregated.json").write_text(json.dumps(merged, ensure_ascii=False, indent=1))
Path(os.environ["GOALKEEPER_REPORT"]).write_text(json.dumps({"status": "ok",
                                                             "items": len(merged)}))
