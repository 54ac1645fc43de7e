"""Fixtures of the fault-injection suite: small file systems, capped and locked stores."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.faults import mount


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs (root only: skipped otherwise), unmounted afterwards."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small tmpfs")
    target = tmp_path / "small-fs"
    target.mkdir()
    try:
        mount(target, "size=16m,mode=0700")
    except (subprocess.CalledProcessError, OSError) as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False, capture_output=True)
