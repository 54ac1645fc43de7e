#!/usr/bin/env python3
"""Inject a fault: ``python3 fault.py SOURCE-OR-STAGE MODE [ARG] [--times N]``, or ``clear``.

Modes: ``timeout`` (hang past the timeout), ``ratelimit`` (ARG = Retry-After seconds, default
5: ≤ 120 is waited in process, longer pauses the goal for quota), ``quota`` (quota exhausted,
ARG = seconds until the reset, default 600), ``auth`` (exit 77), ``config`` (exit 78),
``few`` (return a single item), ``fail`` (exit 1). ``--times -1``: until cleared.
"""

from __future__ import annotations

import argparse
import json

from faults import FILE, load

parser = argparse.ArgumentParser()
parser.add_argument("target")
parser.add_argument("mode", nargs="?")
parser.add_argument("arg", nargs="?", type=float)
parser.add_argument("--times", type=int, default=1)
args = parser.parse_args()
if args.target == "clear":
    FILE.unlink(missing_ok=True)
    print("all faults cleared")
else:
    if args.mode is None:
        parser.error("MODE is required")
    faults = load()
    faults[args.target] = {"mode": args.mode, "arg": args.arg, "times": args.times}
    FILE.write_text(json.dumps(faults, indent=1))
    print(f"{args.target}: {args.mode} ({'until cleared' if args.times < 0 else f'{args.times}×'})")
