"""The core never sees Qt: importing every core module pulls in no GUI package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_core_imports_no_gui_pyside_or_qasync() -> None:
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in (ROOT / "core").rglob("*.py")
        if p.name != "__main__.py"
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('gui', 'PySide6', 'qasync'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == ""
    assert len(modules) > 20


# -- the house's shape (issue 20) ------------------------------------------------------------------

def _top_level_modules() -> list[str]:
    return sorted(p.name for p in (ROOT / "core").glob("*.py")
                  if p.name not in ("__init__.py", "__main__.py"))


def test_the_core_top_level_holds_at_most_twenty_modules() -> None:
    modules = _top_level_modules()
    assert len(modules) <= 20, modules


def test_the_engine_is_wiring_and_lifecycle_only() -> None:
    lines = (ROOT / "core" / "engine.py").read_text(encoding="utf-8").count("\n")
    assert lines <= 400


def test_no_core_module_imports_the_engine_but_the_host_and_the_adapters() -> None:
    """Rooms are handed their collaborators: only the composition's users name the engine."""
    allowed = {"core/engine.py", "core/host.py", "core/demo.py"}
    offenders = []
    for path in (ROOT / "core").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel in allowed or rel.startswith("core/cli/"):
            continue
        text = path.read_text(encoding="utf-8")
        if "from core.engine import" in text or "import core.engine" in text:
            offenders.append(rel)
    assert offenders == []


def test_the_map_names_every_package_of_the_core() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = sorted(p.parent.relative_to(ROOT).as_posix()
                      for p in (ROOT / "core").glob("*/__init__.py"))
    missing = [p for p in packages if f"`{p}/`" not in text]
    assert missing == []
    assert "docs/architecture.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_nothing_in_the_repository_points_outside_it() -> None:
    """A path above the checkout (the planning folder beside it) means nothing on a user's
    machine: the repository's files name only what the repository holds."""
    needles = ("../" + "shared", "/work/" + "shared")
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True,
                           cwd=ROOT).stdout.split()
    offenders = []
    for rel in files:
        path = ROOT / rel
        if rel.startswith("docs/notes/") or rel == "CHANGELOG.md" or not path.is_file():
            continue  # the history of past work says where it was read
        try:
            if any(n in path.read_text(encoding="utf-8") for n in needles):
                offenders.append(rel)
        except UnicodeDecodeError:
            continue
    assert offenders == [], offenders


def _imported_modules(path: Path) -> set[str]:
    """The absolute module names ``path`` imports, at any depth (``from tests.x import y``
    counts as ``tests.x`` and ``tests.x.y``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_test_module_imports_a_test_module_or_a_conftest() -> None:
    """Helpers shared across test modules live in tests/support/; fixtures in conftest.py."""
    bad = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for name in _imported_modules(path):
            last = name.split(".")[-1]
            if name.startswith("tests.") and (last.startswith("test_") or last == "conftest"):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert bad == []


def test_no_two_classes_in_core_and_gui_share_a_name() -> None:
    where: dict[str, list[str]] = {}
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "gui").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    shared = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert shared == {}


def test_no_test_helper_shadows_an_installed_package() -> None:
    """A script run from tests/support (the desktop scenario, the cut-run child) has that folder
    first on its path: a helper named like an installed package would be imported instead of it
    (tests/support/keyring.py once shadowed keyring)."""
    from importlib.metadata import packages_distributions

    installed = {name for name, dists in packages_distributions().items()
                 if "goalkeeper" not in dists}
    helpers = {p.stem for p in (ROOT / "tests" / "support").glob("*.py")}
    assert helpers & installed == set()
