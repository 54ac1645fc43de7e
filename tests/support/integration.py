"""Helpers of the install tests: the validators Linux distributions use, where installed.

``desktop-file-validate`` (Debian: desktop-file-utils), ``appstreamcli`` (appstream) and
``systemd-analyze`` (systemd). Where one is missing the test skips with the reason — except
under ``CI=true``, where ``.ci/run`` installs them and a missing one fails the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"


PACKAGES = {"desktop-file-validate": "desktop-file-utils", "appstreamcli": "appstream",
            "systemd-analyze": "systemd"}


Tool = Callable[..., subprocess.CompletedProcess[str]]


def need_tool(name: str) -> str:
    path = shutil.which(name)
    if path:
        return path
    reason = f"{name} is not installed (Debian package {PACKAGES.get(name, name)})"
    if IN_CI:
        pytest.fail(f"CI=true: {reason}")
    pytest.skip(reason)


def runner(name: str) -> Tool:
    path = need_tool(name)

    def run(*args: str | Path, env: Mapping[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        argv: Sequence[str] = [path, *map(str, args)]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False,
                              env=None if env is None else {**os.environ, **env}, cwd=cwd)

    return run
