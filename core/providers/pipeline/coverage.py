"""Degraded delivery, said explicitly and machine-readably.

When some sources are missing and at least ``min_sources`` answered, the run goes on — and from
then on every view of it says so: ``coverage.json`` in the run directory (written before the
first stage runs, so the stages can print the warning themselves), the run listing, the history
and the completion message: sources used ``k/n``, each missing source with its reason and
attempts, and "items possibly incomplete". A degraded run is never shown as a complete one.
"""

from __future__ import annotations

import json
from typing import Any

from core.clock import iso
from core.i18n import N_
from core.providers.pipeline.checkpoint import RunRecord, StepStatus
from core.providers.pipeline.machine import RunState


def missing_sources(record: RunRecord) -> list[dict[str, Any]]:
    return [
        {"name": name, "reason": step.reason or "unknown", "attempts": step.attempts}
        for name, step in record.sources.items() if step.status is StepStatus.MISSING
    ]


def sources_ok(record: RunRecord) -> int:
    return sum(1 for step in record.sources.values() if step.status is StepStatus.OK)


def coverage(record: RunRecord) -> dict[str, Any]:
    """The coverage block of a run (also the content of ``coverage.json``)."""
    ok, total = sources_ok(record), len(record.sources)
    return {
        "run_id": record.run_id,
        "sources_ok": ok,
        "sources_total": total,
        "sources_used": f"{ok}/{total}",
        "missing": missing_sources(record),
        "degraded": record.degraded,
        "items": record.item_count,
        "items_possibly_incomplete": record.degraded,
    }


def coverage_json(record: RunRecord) -> bytes:
    return json.dumps(coverage(record), indent=1, ensure_ascii=False).encode() + b"\n"


def summary(record: RunRecord) -> str:
    """One line: ``sources 2/4 (missing github: timeout ×2, aihot: auth_failed ×1); items
    possibly incomplete`` — or ``sources 4/4`` for a complete run."""
    ok, total = sources_ok(record), len(record.sources)
    text = N_("sources {ok}/{total}").format(ok=ok, total=total)
    missing = missing_sources(record)
    if missing:
        parts = ", ".join(f"{m['name']}: {m['reason']} ×{m['attempts']}" for m in missing)
        text = N_("sources {ok}/{total} (missing {parts})").format(ok=ok, total=total,
                                                                  parts=parts)
    if record.item_count is not None:  # "; ": translated note by note (core.i18n.catalogue)
        text += "; " + N_("{count} items").format(count=record.item_count)
    if record.degraded:
        text = N_("{summary} — DEGRADED: items possibly incomplete").format(summary=text)
    return text


def run_json(record: RunRecord) -> dict[str, Any]:
    """One run as ``goalkeeper runs --json`` shows it (a stable shape)."""
    return {
        "run_id": record.run_id,
        "state": display_state(record),
        "sources_ok": sources_ok(record),
        "sources_total": len(record.sources),
        "missing": missing_sources(record),
        "items": record.item_count,
        "degraded": record.degraded,
        "started_at": iso(record.started_at),
        "updated_at": iso(record.updated_at),
    }


def display_state(record: RunRecord) -> str:
    """The machine state, except: an alerted run that failed shows ``blocked`` until it is
    continued, and an abandoned one ``abandoned``."""
    if record.abandoned:
        return "abandoned"
    if record.state is RunState.IDLE and record.blocked_in is not None:
        return "blocked"
    return record.state.value
