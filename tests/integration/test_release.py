"""One version everywhere: ``core.__version__``, the package metadata, ``--version``, the
CHANGELOG and the AppStream releases; the metainfo's screenshots are the README's pictures."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

from core import __version__
from core.integration import resources

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_URL = re.compile(r"^https://raw\.githubusercontent\.com/goalkeeper/goalkeeper/main/"
                            r"(docs/screenshots/[\w-]+\.png)$")


def _changelog_releases() -> list[tuple[str, str]]:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, re.MULTILINE)


def _metainfo() -> ET.Element:
    return ET.fromstring(resources.metainfo())


def test_version_flag_prints_the_package_version() -> None:
    out = subprocess.run([sys.executable, "-m", "core", "--version"], capture_output=True,
                         text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == f"goalkeeper {__version__}"
    assert version("goalkeeper") == __version__


def test_changelog_and_appstream_list_the_same_releases_newest_first() -> None:
    changelog = _changelog_releases()
    appstream = [(r.get("version"), r.get("date")) for r in _metainfo().iter("release")]
    assert changelog and changelog == appstream
    assert changelog[0][0] == __version__
    assert changelog == sorted(changelog, key=lambda r: r[1], reverse=True)
    for release in _metainfo().iter("release"):
        assert release.find("description/ul/li") is not None  # release notes, not just a date


def test_the_metainfo_names_the_shipped_desktop_entry() -> None:
    root = _metainfo()
    assert root.findtext("id") == resources.APP_ID
    assert root.findtext("launchable") == resources.DESKTOP_FILE
    assert root.findtext("provides/binary") == "goalkeeper"


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_screenshots_are_the_readme_pictures_at_their_size() -> None:
    """appstreamcli runs offline here (--no-net): this checks what it would have fetched."""
    images = list(_metainfo().iter("image"))
    assert len(images) >= 2
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for image in images:
        match = SCREENSHOT_URL.match(image.text or "")
        assert match, image.text
        picture = ROOT / match.group(1)
        assert _png_size(picture) == (int(image.get("width", 0)), int(image.get("height", 0)))
        assert f"]({match.group(1)})" in readme
