"""Build the standalone one-folder bundle for Linux x86_64 with PyInstaller.

    python3 packaging/bundle.py                     # from this source tree
    python3 packaging/bundle.py --wheel dist/goalkeeper-0.1.0-py3-none-any.whl

Makes (or reuses) a build venv with the pinned PyInstaller and Goalkeeper installed from the
wheel (built here with ``python -m build`` when none is given) — a real, non-editable install,
so the bundle gets the package metadata the desktop app is found by (the ``goalkeeper.frontends``
entry point) and the resources (``resources/``, installed as ``core/resources``). Writes

    dist/bundle/goalkeeper/goalkeeper                      # the executable: `goalkeeper --version`
    dist/bundle/goalkeeper-<version>-linux-x86_64.tar.gz

and prints the build time and the sizes. PyInstaller does not cross-compile: the macOS and
Windows bundles are built the same way on those systems (see the README, Install).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYINSTALLER = "pyinstaller==6.22.3"
sys.path.insert(0, str(ROOT))


def run(*argv: str | Path, **kw: object) -> None:
    print("[bundle] $", " ".join(map(str, argv)), flush=True)
    subprocess.run([str(a) for a in argv], check=True, **kw)  # type: ignore[call-overload]


def build_wheel(out: Path) -> Path:
    run(sys.executable, "-m", "build", "--wheel", "--outdir", out, ROOT)
    return newest(out.glob("goalkeeper-*.whl"))


def newest(paths: object) -> Path:
    found = sorted(paths, key=lambda p: p.stat().st_mtime)  # type: ignore[attr-defined]
    if not found:
        raise SystemExit("no wheel was built")
    return Path(found[-1])


def build_venv(venv: Path, wheel: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        run(sys.executable, "-m", "venv", venv)
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", PYINSTALLER)
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
        "--force-reinstall", "--no-deps", wheel)
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel)
    return python


def pyinstaller(python: Path, work: Path, dist: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    run(python, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
        "--onedir", "--name", "goalkeeper", "--distpath", dist, "--workpath", work,
        "--specpath", work,
        "--copy-metadata", "goalkeeper",   # entry points: `goalkeeper gui` finds the app
        # core/resources (the repository's resources/): entries, metainfo, icons; the .mo
        "--collect-data", "core",
        "--collect-data", "gui",           # the app's compiled translations (.qm)
        "--collect-submodules", "core", "--collect-submodules", "gui",
        ROOT / "packaging" / "bundle_entry.py", cwd=work)
    return dist / "goalkeeper"


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def archive(folder: Path, version: str) -> Path:
    machine = platform.machine()
    target = folder.parent / f"goalkeeper-{version}-linux-{machine}.tar.gz"
    with tarfile.open(target, "w:gz", compresslevel=6) as tar:
        tar.add(folder, arcname="goalkeeper")
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="the wheel to bundle (default: build one)")
    parser.add_argument("--venv", type=Path, default=ROOT / "build" / "bundle-venv",
                        help="the build venv (made when missing, reused otherwise)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "bundle")
    parser.add_argument("--no-archive", action="store_true", help="skip the .tar.gz")
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        print("bundle.py builds the Linux bundle; see the README for macOS and Windows",
              file=sys.stderr)
        return 2
    from core import __version__

    started = time.monotonic()
    wheel = args.wheel or build_wheel(ROOT / "dist")
    python = build_venv(args.venv.absolute(), wheel.absolute())
    prepared = time.monotonic()
    work = ROOT / "build" / "pyinstaller"
    shutil.rmtree(args.out / "goalkeeper", ignore_errors=True)
    folder = pyinstaller(python, work, args.out.absolute())
    built = time.monotonic()
    print(f"[bundle] venv {prepared - started:.1f} s, PyInstaller {built - prepared:.1f} s")
    print(f"[bundle] {folder}: {size(folder) / 2**20:.1f} MiB")
    if not args.no_archive:
        tarball = archive(folder, __version__)
        print(f"[bundle] {tarball}: {tarball.stat().st_size / 2**20:.1f} MiB "
              f"({time.monotonic() - built:.1f} s)")
    return 0 if os.access(folder / "goalkeeper", os.X_OK) else 1


if __name__ == "__main__":
    sys.exit(main())
