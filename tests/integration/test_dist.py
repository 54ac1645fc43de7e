"""The wheel and the sdist, built with the standard front end, carry every resource.

Built offline (``python -m build --no-isolation``, with the test extra's ``build`` and
setuptools): nothing is fetched. Installing the wheel into a clean venv and running it is
``packaging/smoke.py``'s job (``.ci/run``'s packaging step).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from core import __version__
from tests.support.integration import IN_CI

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("build") is None:
        reason = "the `build` front end is not installed (pip install -e '.[test]')"
        if IN_CI:
            pytest.fail(f"CI=true: {reason}")
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                           str(out), str(ROOT)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def _files(base: Path) -> set[str]:
    return {p.relative_to(base).as_posix() for p in base.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _resources() -> set[str]:
    """Every file under the top-level resources/, as a path relative to that folder."""
    return _files(ROOT / "resources")


def _modules() -> set[str]:
    """Every Python module of the two packages, as it sits in the tree and in the wheel."""
    return {f"{top}/{name}" for top in ("core", "gui")
            for name in _files(ROOT / top) if name.endswith(".py")}


def test_the_resources_are_the_top_level_folder() -> None:
    assert not (ROOT / "core" / "resources").exists()
    assert {"__init__.py", "io.github.goalkeeper.Goalkeeper.desktop",
            "io.github.goalkeeper.Goalkeeper.metainfo.xml"} <= _resources()


def test_the_wheel_carries_every_resource_and_both_entry_points(dist: Path) -> None:
    wheel = dist / f"goalkeeper-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = archive.read(f"goalkeeper-{__version__}.dist-info/entry_points.txt")
    # resources/ installs as the package core.resources (package-dir in pyproject.toml)
    assert {f"core/resources/{name}" for name in _resources()} <= names
    assert not [n for n in names if n.startswith("resources/")]
    # the packages are listed in pyproject.toml, not found: none may be left off
    assert _modules() <= names
    assert len([n for n in names if n.endswith(".png")]) == 8
    assert b"goalkeeper = core.cli:script" in entry_points
    assert b"gui = gui.app:main" in entry_points
    assert not [n for n in names if n.startswith(("tests/", "bench/", "packaging/"))]
    # the compiled translations, not their sources
    assert {"core/i18n/locale/zh_CN/LC_MESSAGES/goalkeeper.mo",
            "gui/translations/goalkeeper_zh_CN.qm"} <= names
    assert not [n for n in names if n.endswith((".po", ".ts"))]


def test_the_sdist_carries_resources_changelog_tests_and_packaging(dist: Path) -> None:
    sdist = dist / f"goalkeeper-{__version__}.tar.gz"
    prefix = f"goalkeeper-{__version__}/"
    with tarfile.open(sdist) as archive:
        names = {n.removeprefix(prefix) for n in archive.getnames()}
    assert {f"resources/{name}" for name in _resources()} <= names
    assert _modules() <= names
    assert {"CHANGELOG.md", "README.md", "pyproject.toml", "MANIFEST.in",
            "packaging/bundle.py", "packaging/smoke.py", "docs/screenshots/main-window.png",
            "tests/integration/test_dist.py", "core/i18n/locale/GLOSSARY.md",
            "core/i18n/locale/zh_CN/LC_MESSAGES/goalkeeper.po",
            "gui/translations/goalkeeper_zh_CN.ts", "packaging/i18n.py"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
