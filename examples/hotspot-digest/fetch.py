#!/usr/bin/env python3
"""A fake source: prints its items (from data/<name>.json) as JSON and reports the count.

No network. Faults from ``faults.json`` make it time out, hit a rate limit or an exhausted
quota, fail auth, or return too few items.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from faults import take

HERE = Path(__file__).parent


def report(**data: object) -> None:
    Path(os.environ["GOALKEEPER_REPORT"]).write_text(json.dumps(data))


def main() -> int:
    name = sys.argv[1]
    fault = take(name) or {}
    mode, arg = fault.get("mode"), fault.get("arg")
    if name == "aihot" and not os.environ.get("AIHOT_TOKEN"):
        report(status="auth_failed", detail="AIHOT_TOKEN is not set")
        return 77
    if mode == "timeout":
        time.sleep(3600)
    if mode == "ratelimit":
        report(status="rate_limited", retry_after=arg or 5, detail="429 Too Many Requests")
        return 75
    if mode == "quota":
        reset = datetime.now(UTC) + timedelta(seconds=arg or 600)
        report(status="quota_exhausted", reset_at=reset.isoformat(), detail="daily quota used")
        return 75
    if mode in ("auth", "config", "fail"):
        return {"auth": 77, "config": 78, "fail": 1}[mode]
    items = json.loads((HERE / "data" / f"{name}.json").read_text())
    if mode == "few":
        items = items[:1]
    for item in items:
        item["source"] = name
    print(json.dumps(items, ensure_ascii=False))
    report(status="ok" if items else "empty", items=len(items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
