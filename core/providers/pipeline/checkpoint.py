"""The per-run state file: what a run has done, written atomically after every change.

``<run dir>/state.json`` holds the seed's checkpoint (batch id, trigger time, state, completed
steps, per-source status, item count, last error, updated time) plus every completed step's
artifact path and SHA-256, a generation number and a checksum over all of it. Each save writes the
previous good generation to ``state.prev.json`` first (a hard link to the durable current file,
renamed into place), then the new one to ``state.json`` with temp file + fsync + rename
(:mod:`core.atomic`).

:meth:`CheckpointStore.load` never guesses: a missing, truncated, unparsable or checksum-failing
file raises :class:`CheckpointError` with a precise reason, and nothing is overwritten, so the
previous good generation stays where it is for a human to look at or restore.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.atomic import atomic_write_bytes
from core.models import UtcDatetime
from core.providers.pipeline.machine import RunState

STATE_FILE = "state.json"
PREVIOUS_FILE = "state.prev.json"
FORMAT_VERSION = 1


class StepStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    OK = "ok"
    MISSING = "missing"  # a source that failed; the run may go on without it
    FAILED = "failed"  # a stage that failed; the run is blocked


class StepRecord(BaseModel):
    """One source's or stage's progress inside a run."""

    model_config = ConfigDict(extra="forbid")

    status: StepStatus = StepStatus.PENDING
    attempts: int = 0
    reason: str | None = None  # ok, empty, timeout, auth_failed, ... for the last attempt
    detail: str | None = None
    items: int | None = None
    artifact: str | None = None  # relative to the run directory
    checksum: str | None = None  # sha256 of the artifact
    pid: int | None = None  # the running attempt's process (group) id, for crash clean-up
    pid_started: str | None = None  # its start time as the OS tells it, against pid reuse
    finished_at: UtcDatetime | None = None


class RunRecord(BaseModel):
    """A run's checkpoint (the state file's content, minus the checksum)."""

    model_config = ConfigDict(extra="forbid")

    version: int = FORMAT_VERSION
    run_id: str
    goal: str
    trigger: str
    trigger_time: UtcDatetime
    state: RunState = RunState.IDLE
    blocked_in: RunState | None = None
    completed: list[str] = Field(default_factory=list)
    sources: dict[str, StepRecord] = Field(default_factory=dict)
    stages: dict[str, StepRecord] = Field(default_factory=dict)
    item_count: int | None = None
    degraded: bool = False
    last_error: str | None = None
    blocked_reason: str | None = None  # the goal's pause reason while blocked: auth / error
    waiting_until: UtcDatetime | None = None  # paused for quota until then
    abandoned: bool = False
    started_at: UtcDatetime
    updated_at: UtcDatetime
    generation: int = 0

    @property
    def finished(self) -> bool:
        return self.state is RunState.COMPLETED or self.abandoned

    def step(self, name: str) -> StepRecord:
        record = self.sources.get(name) or self.stages.get(name)
        if record is None:
            raise KeyError(name)
        return record


class CheckpointError(Exception):
    """The state file cannot be trusted; ``reason`` says exactly why."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _canonical(data: dict[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


class CheckpointStore:
    """Reads and writes one run directory's state file. Owns ``state.json``/``state.prev.json``."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / STATE_FILE
        self.previous = run_dir / PREVIOUS_FILE
        self._last_good: bytes | None = None

    def save(self, record: RunRecord, now: datetime) -> None:
        """Write ``record`` as its next generation (bumped in place, with ``updated_at``)."""
        record.generation += 1
        record.updated_at = now
        body = record.model_dump(mode="json")
        checksum = hashlib.sha256(_canonical(body)).hexdigest()
        data = json.dumps({**body, "checksum": checksum}, indent=1, ensure_ascii=False).encode()
        if self._last_good is not None:
            self._keep_previous()
        atomic_write_bytes(self.path, data)  # its directory fsync covers both renames
        self._last_good = data

    def _keep_previous(self) -> None:
        """``state.prev.json`` := the current (good, durable) ``state.json``: a hard link and
        a rename, no second copy to write and fsync; a copy where links are not supported."""
        link = self.run_dir / f".{PREVIOUS_FILE}.link"
        try:
            link.unlink(missing_ok=True)
            os.link(self.path, link)
            os.replace(link, self.previous)
        except OSError:
            assert self._last_good is not None
            atomic_write_bytes(self.previous, self._last_good)

    def load(self) -> RunRecord:
        """The last saved generation; :class:`CheckpointError` when it cannot be trusted."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            raise CheckpointError(self.path, "the state file is missing") from None
        except OSError as exc:
            raise CheckpointError(self.path, f"the state file is unreadable: {exc}") from None
        record = self._parse(raw)
        self._last_good = raw
        return record

    def _parse(self, raw: bytes) -> RunRecord:
        if not raw.strip():
            raise CheckpointError(self.path, "the state file is empty (truncated)")
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(self.path, f"the state file is truncated or not JSON ({exc})"
                                  ) from None
        if not isinstance(data, dict) or "checksum" not in data:
            raise CheckpointError(self.path, "the state file has no checksum")
        stored = data.pop("checksum")
        actual = hashlib.sha256(_canonical(data)).hexdigest()
        if stored != actual:
            raise CheckpointError(self.path, f"the state file fails its checksum (stored "
                                  f"{str(stored)[:12]}…, content {actual[:12]}…)")
        if data.get("version") != FORMAT_VERSION:
            raise CheckpointError(self.path, f"unknown state file version {data.get('version')!r}")
        try:
            return RunRecord.model_validate(data)
        except ValidationError as exc:
            raise CheckpointError(self.path, f"the state file has bad content: {exc}") from None

    def previous_generation(self) -> int | None:
        """The generation kept in ``state.prev.json``, if it is intact (for the pause message)."""
        try:
            data = json.loads(self.previous.read_bytes())
            stored = data.pop("checksum")
            if stored == hashlib.sha256(_canonical(data)).hexdigest():
                return int(data["generation"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return None

    def verify_artifacts(self, record: RunRecord) -> str | None:
        """Why a completed step's artifact cannot be reused, or None when all check out."""
        for name, step in [*record.sources.items(), *record.stages.items()]:
            if step.status is not StepStatus.OK or step.artifact is None:
                continue
            path = self.run_dir / step.artifact
            if not path.is_file():
                return f"the artifact {path} of completed step {name!r} is missing"
            if step.checksum is not None and file_sha256(path) != step.checksum:
                return f"the artifact {path} of completed step {name!r} changed since it finished"
        return None


#: an unfinished run: its store, and its record (or why its state file cannot be trusted)
Unfinished = tuple[CheckpointStore, RunRecord | CheckpointError]
