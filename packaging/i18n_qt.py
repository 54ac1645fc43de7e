"""The Qt half of ``packaging/i18n.py``: PySide6's own ``lupdate`` / ``lrelease`` and ``.ts`` files.

``lupdate`` finds ``tr("…")`` calls (and ``QT_TR_NOOP("…")`` marks) in the GUI's Python files
and keeps what translators wrote; ``lrelease`` compiles a ``.ts`` to the ``.qm`` the app loads.
Both come with PySide6 (``.venv/bin/pyside6-lupdate``), so no Qt SDK is needed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path


class ToolMissing(RuntimeError):
    """PySide6's lupdate/lrelease is not installed next to this Python or on PATH."""


def tool(name: str) -> str:
    """``pyside6-<name>`` next to the running interpreter (the venv), else on PATH."""
    beside = Path(sys.executable).parent / f"pyside6-{name}"
    if beside.exists():
        return str(beside)
    found = shutil.which(f"pyside6-{name}")
    if found is None:
        raise ToolMissing(f"pyside6-{name} not found (pip install -e '.[test]' installs PySide6)")
    return found


def lupdate(sources: list[Path], ts: Path, language: str) -> str:
    """Bring ``ts`` up to date with ``sources`` (new messages unfinished, gone ones vanished)."""
    command = [tool("lupdate"), *map(str, sources), "-ts", str(ts), "-locations", "none",
               "-source-language", "en", "-target-language", language]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"lupdate failed: {done.stderr or done.stdout}")
    return done.stdout


def lrelease(ts: Path, qm: Path) -> None:
    done = subprocess.run([tool("lrelease"), "-silent", str(ts), "-qm", str(qm)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"lrelease failed: {done.stderr or done.stdout}")


@dataclass
class TsMessage:
    """One message of a ``.ts`` file (``state``: "", "unfinished", "vanished" or "obsolete")."""

    context: str
    source: str
    comment: str
    translation: str
    state: str

    @property
    def active(self) -> bool:
        return self.state not in ("vanished", "obsolete")

    @property
    def translated(self) -> bool:
        return self.state == "" and bool(self.translation)


def read_ts(path: Path) -> list[TsMessage]:
    root = ET.parse(path).getroot()
    out = []
    for context in root.iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            node = message.find("translation")
            forms = [] if node is None else [f.text or "" for f in node.iter("numerusform")]
            text = "\0".join(forms) if forms else ("" if node is None else node.text or "")
            out.append(TsMessage(name, message.findtext("source") or "",
                                 message.findtext("comment") or "", text,
                                 "" if node is None else node.get("type", "")))
    return out


def fill_ts(path: Path, translations: dict[str, str], force: bool = False) -> int:
    """Write ``translations`` (source text → translation) into ``path``; returns how many.
    Run :func:`lupdate` afterwards: it puts the file back in its own layout."""
    tree = ET.parse(path)
    count = 0
    for message in tree.getroot().iter("message"):
        source = message.findtext("source") or ""
        node = message.find("translation")
        if node is None or source not in translations or node.get("type") in (
                "vanished", "obsolete"):
            continue
        if node.get("type") != "unfinished" and node.text and not force:
            continue
        node.text = translations[source]
        node.attrib.pop("type", None)
        count += 1
    if count:  # else leave lupdate's own layout alone
        tree.write(path, encoding="utf-8", xml_declaration=True)
    return count
