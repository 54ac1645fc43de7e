#!/usr/bin/env python3
"""Deliver: write the digest to outbox/ (the local stand-in for a chat or mail push).

A degraded run says so at the top, with the coverage Goalkeeper wrote to coverage.json.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from faults import take

HERE = Path(__file__).parent
run = Path(os.environ["GOALKEEPER_RUN_DIR"])
fault = take("deliver") or {}
if fault.get("mode") == "timeout":
    import time

    time.sleep(3600)
if fault.get("mode") in ("auth", "config", "fail"):
    print("delivery target refused the push", file=sys.stderr)
    sys.exit({"auth": 77, "config": 78, "fail": 1}[fault["mode"]])
items = json.loads((run / "filtered.json").read_text())
coverage = json.loads(Path(os.environ["GOALKEEPER_COVERAGE"]).read_text())
lines = [f"# AI hotspot digest — {os.environ['GOALKEEPER_RUN_ID']}", ""]
if coverage["degraded"]:
    missing = " | ".join(f"{m['name']}: missing ({m['reason']})" for m in coverage["missing"])
    lines += ["> ⚠️ Incomplete data", f"> Sources used: {coverage['sources_used']} ({missing})",
              f"> Valid items: {len(items)} (possibly incomplete)", ""]
lines += [f"Valid items: {len(items)} | sources: {coverage['sources_used']}", ""]
lines += [f"- [{item['title']}]({item['url']}) — {item['source']}, score {item['score']}"
          for item in items]
text = "\n".join(lines) + "\n"
(run / "digest.md").write_text(text)
outbox = HERE / "outbox"
outbox.mkdir(exist_ok=True)
(outbox / f"{os.environ['GOALKEEPER_RUN_ID']}.md").write_text(text)
print(text)
