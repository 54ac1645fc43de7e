"""The pinned real agent CLIs the contract tests run, and how they are installed.

The CLIs come from npm into a cache outside the repository (``~/.cache/goalkeeper-agent-clis``,
or ``$GOALKEEPER_AGENT_CLI_CACHE``), one directory per package and version, so a second run
installs nothing. ``.ci/run`` calls ``python -m tests.real.pins install`` before the tests; the
fixtures in ``tests/real/conftest.py`` install on first use where npm is present.

Run as a script: ``python -m tests.real.pins install [codex|claude ...]`` installs and prints
each binary's path; ``python -m tests.real.pins path NAME`` prints one path (exit 1 if absent).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# read once, at import: the test suite's autouse fixture strips GOALKEEPER_* per test
CACHE_ROOT = Path(os.environ.get("GOALKEEPER_AGENT_CLI_CACHE")
                  or Path.home() / ".cache" / "goalkeeper-agent-clis")
INSTALL_TIMEOUT_SECONDS = 600


@dataclasses.dataclass(frozen=True)
class Pin:
    """One pinned CLI: the npm package, its exact version, the command it installs."""

    name: str
    package: str
    version: str
    command: str
    version_text: str  # what ``<command> --version`` prints for this version

    @property
    def prefix(self) -> Path:
        return CACHE_ROOT / f"{self.name}-{self.version}"

    @property
    def binary(self) -> Path:
        return self.prefix / "node_modules" / ".bin" / self.command


PINS = {
    "codex": Pin("codex", "@openai/codex", "0.169.0", "codex", "codex-cli 0.169.0"),
    "claude": Pin("claude", "@anthropic-ai/claude-code", "2.1.328", "claude",
                  "2.1.328 (Claude Code)"),
}


class PinUnavailable(RuntimeError):
    """The pinned CLI is not installed and cannot be installed here (the message says why)."""


def installed(pin: Pin) -> Path | None:
    """The binary when it is installed at the pinned version, else None."""
    if not pin.binary.exists():
        return None
    # even `codex --version` writes into its home (`tmp/arg0-*`): never the user's real one
    with tempfile.TemporaryDirectory(prefix="gk-pin-") as home:
        env = {**os.environ, "CODEX_HOME": home}
        try:
            out = subprocess.run([str(pin.binary), "--version"], capture_output=True, text=True,
                                 timeout=60, stdin=subprocess.DEVNULL, check=False, env=env)
        except (OSError, subprocess.TimeoutExpired):
            return None
    return pin.binary if pin.version_text in out.stdout else None


def ensure(pin: Pin) -> Path:
    """Install the pinned CLI into the cache if it is not there yet; return its binary."""
    found = installed(pin)
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise PinUnavailable(f"npm is not on PATH: cannot install {pin.package}@{pin.version}")
    pin.prefix.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "npm_config_cache": str(Path.home() / ".cache" / "npm")}
    cmd = [npm, "install", "--prefix", str(pin.prefix), "--no-audit", "--no-fund",
           "--no-save", "--loglevel=error", f"{pin.package}@{pin.version}"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False,
                              timeout=INSTALL_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise PinUnavailable(f"npm install {pin.package}@{pin.version} timed out") from exc
    found = installed(pin)
    if found is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise PinUnavailable(f"npm install {pin.package}@{pin.version} failed "
                             f"(exit {done.returncode}): {' / '.join(tail)}")
    return found


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "install":
        names = argv[1:] or list(PINS)
        for name in names:
            print(f"{name}: {ensure(PINS[name])}")
        return 0
    if len(argv) == 2 and argv[0] == "path":
        found = installed(PINS[argv[1]])
        if found is None:
            return 1
        print(found)
        return 0
    print("usage: python -m tests.real.pins install [NAME ...] | path NAME", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
