"""Writing and removing the files an install owns, reporting what happened to each."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from core.atomic import atomic_write_bytes
from core.i18n import N_


class Change(enum.StrEnum):
    WRITTEN = "written"
    UNCHANGED = "unchanged"
    REMOVED = "removed"
    ABSENT = "absent"
    KEPT = "kept"  # not ours: left alone


@dataclass(frozen=True)
class FileChange:
    """What happened to one file (``what`` names it for people: ``menu entry``)."""

    what: str
    path: Path
    change: Change
    note: str = ""

    def as_json(self) -> dict[str, str]:
        return {"what": self.what, "path": str(self.path), "change": self.change.value,
                "note": self.note}


def write_file(what: str, path: Path, data: bytes, mode: int = 0o644) -> FileChange:
    """Write ``data`` atomically unless the file already holds exactly that."""
    try:
        if path.read_bytes() == data:
            return FileChange(what, path, Change.UNCHANGED)
    except OSError:
        pass
    atomic_write_bytes(path, data, mode)
    return FileChange(what, path, Change.WRITTEN)


def remove_file(what: str, path: Path, ours: bool = True,
                note: str = N_("not written by Goalkeeper")) -> FileChange:
    """Remove ``path`` if it exists and is ours; a file that is not ours is kept."""
    if not path.exists():
        return FileChange(what, path, Change.ABSENT)
    if not ours:
        return FileChange(what, path, Change.KEPT, note)
    path.unlink()
    return FileChange(what, path, Change.REMOVED)
