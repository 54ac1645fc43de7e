"""Write the app icon as PNGs for desktop integration (drawn by gui.theme, no image tools).

    .venv/bin/python packaging/icons.py     # resources/icons/hicolor/<n>x<n>/apps/*.png

They ship in the wheel (``resources/`` is the package data ``core.resources``);
``goalkeeper desktop install`` copies them to ``$XDG_DATA_HOME/icons/hicolor`` with the menu
entry (see the README, Install).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
APP_ID = "io.github.goalkeeper.Goalkeeper"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256)


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from gui.theme import app_pixmap

    keep = QApplication.instance() or QApplication([])  # pixmaps need a GUI application
    for size in SIZES:
        folder = ROOT / "resources" / "icons" / "hicolor" / f"{size}x{size}" / "apps"
        path = folder / f"{APP_ID}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not app_pixmap(size).save(str(path)):
            print(f"could not write {path}", file=sys.stderr)
            return 1
        print(f"wrote {path.relative_to(ROOT)}")
    del keep
    return 0


if __name__ == "__main__":
    sys.exit(main())
