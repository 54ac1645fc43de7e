"""What the window remembers between runs: geometry, splitter, one-time hints.

Kept in ``gui-state.ini`` in the config directory (QSettings, INI format) — apart from
``config.toml``, which is the user's and holds only real settings.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings


class GuiState:
    """Owns the QSettings file."""

    def __init__(self, config_dir: Path) -> None:
        self.path = config_dir / "gui-state.ini"
        self._store = QSettings(str(self.path), QSettings.Format.IniFormat)

    @property
    def tray_hint_shown(self) -> bool:
        return str(self._store.value("hints/tray", "false")) == "true"

    @tray_hint_shown.setter
    def tray_hint_shown(self, value: bool) -> None:
        self._store.setValue("hints/tray", "true" if value else "false")
        self._store.sync()

    def blob(self, key: str) -> QByteArray | None:
        value = self._store.value(key)
        return value if isinstance(value, QByteArray) else None

    def set_blob(self, key: str, value: QByteArray) -> None:
        self._store.setValue(key, value)

    def sync(self) -> None:
        self._store.sync()
