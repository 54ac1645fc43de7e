"""``goalkeeper desktop install`` / ``uninstall``: the menu entry, icons, metainfo and autostart.

Everything goes under the XDG base directories of the user (no root, no xdg-utils):

| file (``ID`` = ``io.github.goalkeeper.Goalkeeper``) | where |
|---|---|
| menu entry | ``$XDG_DATA_HOME/applications/ID.desktop`` |
| icons | ``$XDG_DATA_HOME/icons/hicolor/<n>x<n>/apps/ID.png`` |
| AppStream metainfo | ``$XDG_DATA_HOME/metainfo/ID.metainfo.xml`` |
| autostart entry (``start_at_login``) | ``$XDG_CONFIG_HOME/autostart/ID.desktop`` |

The entries run this installation by its absolute path (:mod:`core.integration.command`).
``uninstall`` removes the icons and the metainfo (named by our application id), the menu entry
when it carries our mark or is the unmodified shipped template (the manual install of earlier
versions), and the autostart entry when it carries its mark; anything else is kept and reported.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.i18n import N_
from core.integration import autostart, resources, xdg
from core.integration.entry import INSTALLED_MARK, menu_entry
from core.integration.files import Change, FileChange, remove_file, write_file


@dataclass(frozen=True)
class DesktopReport:
    """What ``install`` or ``uninstall`` did to each file, and what went wrong (if anything)."""

    changes: tuple[FileChange, ...]
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class DesktopLayout:
    data_home: Path
    config_home: Path

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> DesktopLayout:
        return cls(xdg.data_home(environ), xdg.config_home(environ))

    @property
    def menu_entry(self) -> Path:
        return self.data_home / "applications" / resources.DESKTOP_FILE

    @property
    def metainfo(self) -> Path:
        return self.data_home / "metainfo" / resources.METAINFO_FILE

    def icon(self, icon: resources.Icon) -> Path:
        return self.data_home / "icons" / icon.relative

    @property
    def autostart(self) -> Path:
        return autostart.autostart_path(self.config_home)


class DesktopUnsupported(Exception):
    """Desktop integration is for XDG desktops (Linux and the BSDs)."""


def _check_platform(platform: str | None) -> None:
    if not xdg.is_xdg_platform(platform or sys.platform):
        raise DesktopUnsupported(N_(
            "`goalkeeper desktop` installs into XDG desktops (Linux); on macOS and Windows "
            "the app bundle is the way in (see the README, Install)"))


def install(environ: Mapping[str, str], argv: Sequence[str], start_at_login: bool,
            platform: str | None = None) -> DesktopReport:
    """Write every file; the autostart entry follows ``start_at_login`` (removed when off)."""
    _check_platform(platform)
    layout = DesktopLayout.from_environ(environ)
    changes: list[FileChange] = []
    try:
        entry = menu_entry(resources.desktop_template(), argv)
        changes.append(write_file(N_("menu entry"), layout.menu_entry, entry.encode()))
        for icon in resources.icons():
            what = N_("icon {size}").format(size=icon.size_dir)
            changes.append(write_file(what, layout.icon(icon), icon.data))
        changes.append(write_file(N_("AppStream metainfo"), layout.metainfo, resources.metainfo()))
    except OSError as exc:
        return DesktopReport(tuple(changes), N_("could not write: {error}").format(error=exc))
    existed = layout.autostart.exists()
    before = layout.autostart.read_bytes() if existed else b""
    problem = autostart.apply_autostart(start_at_login, environ, argv, platform)
    changes.append(_autostart_change(layout.autostart, existed, before, start_at_login))
    return DesktopReport(tuple(changes), problem)


def _autostart_change(path: Path, existed: bool, before: bytes, enabled: bool) -> FileChange:
    after = path.read_bytes() if path.exists() else None
    if enabled and after is not None:
        change = Change.UNCHANGED if existed and after == before else Change.WRITTEN
        return FileChange(N_("autostart entry"), path, change, N_("start_at_login is on"))
    if enabled:
        return FileChange(N_("autostart entry"), path, Change.ABSENT)
    if after is not None:
        return FileChange(N_("autostart entry"), path, Change.KEPT, N_("not written by Goalkeeper"))
    return FileChange(N_("autostart entry"), path, Change.REMOVED if existed else Change.ABSENT,
                      N_("start_at_login is off"))


def _menu_entry_is_ours(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return False
    return INSTALLED_MARK in text.splitlines() or text == resources.desktop_template()


def uninstall(environ: Mapping[str, str], platform: str | None = None) -> DesktopReport:
    """Remove what ``install`` wrote (and only that)."""
    _check_platform(platform)
    layout = DesktopLayout.from_environ(environ)
    changes: list[FileChange] = []
    try:
        changes.append(remove_file(N_("menu entry"), layout.menu_entry,
                                   _menu_entry_is_ours(layout.menu_entry)))
        for icon in resources.icons():
            what = N_("icon {size}").format(size=icon.size_dir)
            changes.append(remove_file(what, layout.icon(icon)))
        changes.append(remove_file(N_("AppStream metainfo"), layout.metainfo))
        changes.append(remove_file(N_("autostart entry"), layout.autostart,
                                   autostart.is_ours(layout.autostart)))
    except OSError as exc:
        return DesktopReport(tuple(changes), N_("could not remove: {error}").format(error=exc))
    return DesktopReport(tuple(changes))
