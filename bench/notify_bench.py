"""Notifications: what they cost the engine's path, and how fast a channel delivers.

Run from the repository root::

    .venv/bin/python bench/notify_bench.py [--rows 5000] [--deliveries 300]

1. **Cost on the engine's path**: the time ``Notifications`` spends in the bus callback for one
   history row — classification, the switch, publishing ``NotificationIssued`` and queueing it for
   two channels — measured while both channels point at a 127.0.0.1 server that never answers
   (the worst case: every queue fills, the oldest are dropped). Printed as p50 / p99 / max per
   row; this is all the engine ever waits for.
2. **Delivery rate**: ``--deliveries`` notifications through one webhook channel to a 127.0.0.1
   server answering 200, from queueing to the last acknowledgement.

Wall-clock on the machine running it; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.clock import SystemClock
from core.events import EventBus, HistoryRecorded
from core.models import HistoryRow
from core.notify.service import Notifications
from core.settings import Settings


def serve(hang: threading.Event | None) -> ThreadingHTTPServer:
    class Answer(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            if hang is not None:
                hang.wait(60)
                return
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return server


async def no_secret(name: str) -> str | None:
    return None


def row(i: int) -> HistoryRow:
    return HistoryRow(at=datetime.now(UTC), goal=f"bench:{i % 50}", event="failed",
                      reason="the agent crashed")


async def engine_path(rows: int) -> list[float]:
    hang = threading.Event()
    server = serve(hang)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    bus = EventBus()
    service = Notifications(bus, Settings(notify_ntfy_url=f"{url}/bench",
                                          notify_webhook_url=f"{url}/hook",
                                          notify_timeout_seconds=30),
                            SystemClock(), lambda _g: None, secrets=no_secret, host="bench")
    await service.start()
    times = []
    try:
        for i in range(rows):
            event = HistoryRecorded(row(i))
            start = time.perf_counter()
            bus.publish(event)
            times.append(time.perf_counter() - start)
            if i % 100 == 0:
                await asyncio.sleep(0)  # let the workers take their first attempt
    finally:
        hang.set()
        await service.stop(0)
        server.shutdown()
        server.server_close()
    return times


async def delivery_rate(count: int) -> tuple[float, int]:
    server = serve(None)
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    bus = EventBus()
    service = Notifications(bus, Settings(notify_webhook_url=url), SystemClock(),
                            lambda _g: None, secrets=no_secret, host="bench")
    await service.start()
    try:
        start = time.perf_counter()
        for i in range(count):
            bus.publish(HistoryRecorded(row(i)))
            if (i + 1) % 90 == 0:  # stay under the queue's bound (100): nothing dropped
                while service.health()[0].delivered < i - 10:
                    await asyncio.sleep(0.001)
        while service.health()[0].delivered + service.health()[0].dropped < count:
            await asyncio.sleep(0.001)
        elapsed = time.perf_counter() - start
        dropped = service.health()[0].dropped
    finally:
        await service.stop(0)
        server.shutdown()
        server.server_close()
    return elapsed, dropped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--deliveries", type=int, default=300)
    args = parser.parse_args()
    times = sorted(asyncio.run(engine_path(args.rows)))
    us = [t * 1e6 for t in times]
    print(f"engine path, both channels hanging: {len(us)} rows, per row p50 "
          f"{statistics.median(us):.1f} µs, p99 {us[int(len(us) * 0.99) - 1]:.1f} µs, "
          f"max {us[-1]:.1f} µs")
    elapsed, dropped = asyncio.run(delivery_rate(args.deliveries))
    print(f"webhook delivery to 127.0.0.1: {args.deliveries} in {elapsed:.2f} s "
          f"({args.deliveries / elapsed:.0f}/s, {elapsed / args.deliveries * 1000:.1f} ms each), "
          f"{dropped} dropped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
