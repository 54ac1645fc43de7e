"""Which Codex is installed, and whether Goalkeeper supports it.

Goalkeeper speaks the app-server protocol and reads the goal and rollout shapes of the Codex
versions in :data:`SUPPORTED`: the contract tests in ``tests/real/`` run both ends of that range
(``tests/real/pins.py``, whose ``RANGES["codex"]`` must agree with :data:`TESTED`), and 0.170 and
0.171 changed nothing Goalkeeper uses (``provider-formats.md`` B0.1), so the range covers every
release of the newest tested series.
``codex --version`` prints ``codex-cli X.Y.Z``; it is read once per executable (path and
modification time), so an upgrade is noticed, and never on a hot path. Outside the range
Goalkeeper still tries — it reads defensively — but says so plainly.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from core.i18n import N_

Version = tuple[int, int, int]

#: the oldest and newest pinned versions the real-CLI contract tests run (both ends)
TESTED: tuple[Version, Version] = ((0, 169, 0), (0, 171, 0))
#: [lowest, first unsupported): from the oldest pin up to the end of the newest pin's series
SUPPORTED: tuple[Version, Version] = (TESTED[0], (TESTED[1][0], TESTED[1][1] + 1, 0))
#: e.g. "0.169–0.171": the series, as the user-facing notes name them
SUPPORTED_TEXT = (f"{TESTED[0][0]}.{TESTED[0][1]}\u2013{TESTED[1][0]}.{TESTED[1][1]}"
                  if TESTED[0][:2] != TESTED[1][:2] else f"{TESTED[0][0]}.{TESTED[0][1]}.x")
#: ``codex exec resume --remote <ADDR>`` (reach a running app-server, e.g. the daemon's control
#: socket) exists from here on; 0.169.0 answers "unexpected argument '--remote'" (exit 2)
EXEC_REMOTE_SINCE: Version = (0, 171, 0)
_VERSION = re.compile(r"codex-cli\s+(\d+)\.(\d+)\.(\d+)")


def text_of(version: Version) -> str:
    return ".".join(str(n) for n in version)


def has_exec_remote(version: Version | None) -> bool:
    """This Codex's ``exec resume`` can go through a running app-server (an unknown version
    cannot be trusted to: it would be a second writer)."""
    return version is not None and version >= EXEC_REMOTE_SINCE


def parse(text: str) -> Version | None:
    match = _VERSION.search(text)
    if match is None:
        return None
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


@dataclass(frozen=True)
class VersionCheck:
    """What ``codex --version`` said. ``note`` is set when Goalkeeper must say something."""

    text: str
    version: Version | None

    @property
    def supported(self) -> bool:
        low, high = SUPPORTED
        return self.version is not None and low <= self.version < high

    @property
    def note(self) -> str | None:
        if self.version is None:
            return N_("could not tell which Codex is installed ({output}); Goalkeeper supports "
                      "Codex {supported}").format(output=self.text or N_("no output"),
                                                  supported=SUPPORTED_TEXT)
        if self.supported:
            return None
        shown = text_of(self.version)
        return N_("Codex {version} is installed; Goalkeeper supports Codex {supported} — "
                  "resuming may not work as described").format(version=shown,
                                                               supported=SUPPORTED_TEXT)


def read_version(executable: str, env: Mapping[str, str], timeout: float = 10.0
                 ) -> VersionCheck:
    """Run ``codex --version`` (blocking: call it in a worker thread)."""
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, env=dict(env),
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return VersionCheck(N_("codex --version failed: {error}").format(error=exc), None)
    text = (done.stdout or done.stderr).strip()
    return VersionCheck(text[:200], parse(text))


def identity(executable: str) -> tuple[str, int]:
    """What makes a cached check stale: the executable's path and modification time."""
    try:
        return executable, os.stat(executable).st_mtime_ns
    except OSError:
        return executable, 0
