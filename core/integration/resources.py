"""The files the package ``core.resources`` carries, found through :mod:`importlib.resources`.

The package is the repository's top-level ``resources/`` folder, mapped in ``pyproject.toml``
(``package-dir``): installed, it is ``core/resources/``; in an editable install setuptools'
finder resolves the name to the folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable

APP_ID = "io.github.goalkeeper.Goalkeeper"
DESKTOP_FILE = f"{APP_ID}.desktop"
METAINFO_FILE = f"{APP_ID}.metainfo.xml"
_SIZE = re.compile(r"^(\d+)x\1$")


@dataclass(frozen=True)
class Icon:
    """One themed icon: its size directory under ``hicolor`` (``48x48``) and its bytes."""

    size_dir: str
    data: bytes

    @property
    def relative(self) -> str:
        return f"hicolor/{self.size_dir}/apps/{APP_ID}.png"


def _root() -> Traversable:
    return files("core.resources")


def desktop_template() -> str:
    """The menu entry as a distribution would install it (``Exec=goalkeeper gui``)."""
    return _root().joinpath(DESKTOP_FILE).read_text(encoding="utf-8")


def metainfo() -> bytes:
    return _root().joinpath(METAINFO_FILE).read_bytes()


def icons() -> list[Icon]:
    """Every size of the app icon, smallest first."""
    hicolor = _root().joinpath("icons", "hicolor")
    found = []
    for folder in hicolor.iterdir():
        match = _SIZE.match(folder.name)
        png = folder.joinpath("apps", f"{APP_ID}.png")
        if match and png.is_file():
            found.append((int(match.group(1)), Icon(folder.name, png.read_bytes())))
    return [icon for _, icon in sorted(found, key=lambda pair: pair[0])]
