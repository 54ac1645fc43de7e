"""GUI test helpers: await a Qt signal in a coroutine, a launcher and a notification backend
that record their calls, and the English words left on a widget tree."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QLabel,
    QMenu,
    QTabWidget,
    QWidget,
)

from gui.notifier import Toast


async def wait_signal(signal: SignalInstance, timeout: float = 5.0) -> tuple[Any, ...]:
    """Await one emission of a Qt signal (``qtbot.waitSignal`` must not be used in coroutines)."""
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def _slot(*args: Any) -> None:
        if not future.done():
            future.set_result(args)

    signal.connect(_slot)
    try:
        return await asyncio.wait_for(future, timeout)
    finally:
        signal.disconnect(_slot)


class RecordingLauncher:
    """Records what would have been opened instead of starting a terminal or file manager."""

    def __init__(self) -> None:
        self.terminals: list[tuple[list[str], Path | None]] = []
        self.folders: list[Path] = []
        self.demos = 0
        self.error: str | None = None

    def start_demo(self) -> str | None:
        self.demos += 1
        return self.error

    def open_terminal(self, argv: Sequence[str], cwd: Path | None) -> str | None:
        self.terminals.append((list(argv), cwd))
        return self.error

    def open_folder(self, path: Path) -> str | None:
        self.folders.append(path)
        return self.error


#: English that may stay on a Chinese screen: names, units, formats, commands
KEPT = {"Goalkeeper", "Codex", "Claude", "Code", "ntfy", "Webhook", "URL", "CSV", "English",
        "pid", "test", "host", "min", "demo", "fake", "config", "toml", "goalkeeper", "secret",
        "set", "token", "ntfy-token", "webhook-secret", "LANGUAGE", "LC_ALL", "LC_MESSAGES",
        "LANG", "exec", "app-server", "SIGTERM", "SIGKILL", "csv", "Ctrl", "Shift", "CLI"}


WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")


CJK = re.compile(r"[\u4e00-\u9fff]")


def english_left(root: QWidget) -> list[str]:
    """Texts on ``root``'s widgets, actions and menus with English words and no Chinese."""
    texts: list[str] = [a.text() for a in root.findChildren(QMenu)[0].actions()] if (
        root.findChildren(QMenu)) else []
    for widget in [root, *root.findChildren(QWidget)]:
        texts += [widget.toolTip(), widget.accessibleName(), widget.windowTitle()]
        texts += [a.text() for a in widget.actions()] + [a.toolTip() for a in widget.actions()]
        if isinstance(widget, QLabel | QAbstractButton):
            texts.append(widget.text())
        if isinstance(widget, QMenu):
            texts.append(widget.title())
        if isinstance(widget, QComboBox):
            texts += [widget.itemText(i) for i in range(widget.count())]
        if isinstance(widget, QTabWidget):
            texts += [widget.tabText(i) for i in range(widget.count())]
    left = []
    for text in texts:
        plain = re.sub(r"<[^>]*>|\{[^}]*\}|`[^`]*`|\S*[/_:=.@]\S*|\([^)]*\)", " ", text)
        words = [w for w in WORD.findall(plain) if w not in KEPT]
        if words and not CJK.search(text):
            left.append(text)
    return sorted(set(left))


class RecordingBackend:
    name = "recording"

    def __init__(self) -> None:
        self.sent: list[Toast] = []

    def send(self, notification: Toast) -> None:
        self.sent.append(notification)

    def close(self) -> None:
        pass
